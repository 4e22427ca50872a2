"""Quantization (src/symbolics/quantized.cpp): quantized tensors live only
inside the graph, so every case quantizes and dequantizes (float in, float out)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)

x = torch.randn(2, 3, 4) * 4
Q10 = dict(min_opset=10, opsets=(10, 11, 13, 17), error_below={9: "supported from opset 10"})
Q13 = dict(min_opset=13, error_below={12: "supported from opset 13"})

scales = torch.tensor([0.05, 0.1, 0.2])
zps_u8 = torch.tensor([0, 10, 128], dtype=torch.int32)
zps_i8 = torch.tensor([0, -10, 5], dtype=torch.int32)


def qdq(dtype, scale, zp):
    return lambda a: torch.quantize_per_tensor(a, scale, zp, dtype).dequantize()


CASES = [
    Case("quantize_quint8", qdq(torch.quint8, 0.1, 128), (x,), **Q10),
    Case("quantize_qint8", qdq(torch.qint8, 0.05, -3), (x,), **Q10),
    Case("quantize_tensor_qparams",
         lambda a: torch.dequantize(torch.quantize_per_tensor(a, torch.tensor(0.2), torch.tensor(5), torch.quint8)),
         (x,), **Q10),
    Case("quantize_reshape_dequantize",
         lambda a: torch.quantize_per_tensor(a, 0.1, 100, torch.quint8).reshape(6, 4).dequantize(), (x,),
         min_opset=10, opsets=(10, 13, 17)),
    Case("quantize_qint32_fails", qdq(torch.qint32, 0.1, 0), (x,), opsets=(), error_below={13: "qint32"}),
    Case("quantize_per_channel_quint8",
         lambda a: torch.quantize_per_channel(a, scales, zps_u8, 1, torch.quint8).dequantize(), (x,), **Q13),
    Case("quantize_per_channel_qint8_last_axis",
         lambda a: torch.quantize_per_channel(a, scales, zps_i8, 2, torch.qint8).dequantize(),
         (x.transpose(1, 2).contiguous(),), min_opset=13),
    # fake quantization
    Case("fake_quantize_uint8", lambda a: torch.fake_quantize_per_tensor_affine(a, 0.1, 128, 0, 255), (x,), **Q10),
    Case("fake_quantize_int8", lambda a: torch.fake_quantize_per_tensor_affine(a, 0.05, 3, -128, 127), (x,), **Q10),
    Case("fake_quantize_0_127", lambda a: torch.fake_quantize_per_tensor_affine(a, 0.1, 30, 0, 127), (x,),
         min_opset=10, opsets=(10, 13, 17)),
    Case("fake_quantize_narrow_int8", lambda a: torch.fake_quantize_per_tensor_affine(a, 0.07, -2, -20, 40), (x,),
         min_opset=10, opsets=(10, 13, 17)),
    Case("fake_quantize_tensor_qparams",
         lambda a: torch.fake_quantize_per_tensor_affine(a, torch.tensor(0.1), torch.tensor(10, dtype=torch.int32),
                                                         0, 255), (x,), **Q10),
    Case("fake_quantize_tensor_qparams_narrow",
         lambda a, s: torch.fake_quantize_per_tensor_affine(a, s, torch.tensor(10, dtype=torch.int32), 0, 127),
         (x, torch.tensor([0.15])), min_opset=10, opsets=(10, 13, 17)),
    Case("fake_quantize_range_fails", lambda a: torch.fake_quantize_per_tensor_affine(a, 0.1, 0, 0, 1023), (x,),
         opsets=(), error_below={13: "does not fit in int8 or uint8"}),
    Case("fake_quantize_per_channel_int8",
         lambda a: torch.fake_quantize_per_channel_affine(a, scales, zps_i8, 1, -128, 127), (x,), **Q13),
    Case("fake_quantize_per_channel_uint8",
         lambda a: torch.fake_quantize_per_channel_affine(a, scales, zps_u8, 1, 0, 255), (x,), min_opset=13),
    Case("fake_quantize_per_channel_0_127_axis0",
         lambda a: torch.fake_quantize_per_channel_affine(a, scales[:2], zps_u8[:2], 0, 0, 127), (x,),
         min_opset=13),
    Case("fake_quantize_per_channel_narrow_last_axis",
         lambda a: torch.fake_quantize_per_channel_affine(a, scales, zps_i8, 2, -50, 60),
         (x.transpose(1, 2).contiguous(),), min_opset=13),
    Case("fake_quantize_per_channel_float_zero_point",
         lambda a: torch.fake_quantize_per_channel_affine(a, scales, zps_u8.float(), 1, 0, 255), (x,),
         min_opset=13),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
