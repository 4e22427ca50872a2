"""Quantization (src/symbolics/quantized.cpp): every case quantizes and
dequantizes inside the graph (float in, float out) or returns the integers.
Quantized models, quantized graph inputs and outputs: tests/python/test_dropin_quantized.py."""
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
QC13 = dict(min_opset=13, error_below={12: "per-channel QuantizeLinear needs opset 13"})
DC13 = dict(min_opset=13, error_below={12: "need opset 13 or above (DequantizeLinear's axis)"})

scales = torch.tensor([0.05, 0.1, 0.2])
zps_u8 = torch.tensor([0, 10, 128], dtype=torch.int32)
zps_i8 = torch.tensor([0, -10, 5], dtype=torch.int32)


def qdq(dtype, scale, zp):
    return lambda a: torch.quantize_per_tensor(a, scale, zp, dtype).dequantize()


class QParams(torch.nn.Module):
    def forward(self, a, s):
        t = torch.quantize_per_tensor(a, float(s), 7, torch.qint8)
        return a * t.q_scale() + t.q_zero_point()


CASES = [
    Case("quantize_quint8", qdq(torch.quint8, 0.1, 128), (x,), **Q10),
    Case("quantize_qint8", qdq(torch.qint8, 0.05, -3), (x,), **Q10),
    Case("quantize_tensor_qparams",
         lambda a: torch.dequantize(torch.quantize_per_tensor(a, torch.tensor(0.2), torch.tensor(5), torch.quint8)),
         (x,), **Q10),
    Case("quantize_reshape_dequantize",
         lambda a: torch.quantize_per_tensor(a, 0.1, 100, torch.quint8).reshape(6, 4).dequantize(), (x,),
         min_opset=10, opsets=(10, 13, 17)),
    Case("quantize_qint32", qdq(torch.qint32, 0.1, 0), (x,), **Q10),
    Case("quantize_per_channel_qint32",
         lambda a: torch.quantize_per_channel(a, scales, torch.zeros(3, dtype=torch.long), 1, torch.qint32).dequantize(),
         (x,), **DC13),
    Case("make_per_tensor_quantized_tensor",
         lambda a: torch._make_per_tensor_quantized_tensor(a, 0.1, 3).dequantize(),
         (torch.randint(-128, 127, (2, 3, 4), dtype=torch.int8),), **Q10),
    Case("make_per_channel_quantized_tensor",
         lambda a: torch._make_per_channel_quantized_tensor(a, scales.double(), torch.tensor([0, 10, 128]), 1).dequantize(),
         (torch.randint(0, 255, (2, 3, 4), dtype=torch.uint8),), **DC13),
    Case("int_repr", lambda a: torch.quantize_per_tensor(a, 0.1, 128, torch.quint8).int_repr(), (x,), **Q10),
    Case("q_scale_q_zero_point", QParams(), (x, torch.tensor(0.25)), script=True, **Q10),
    Case("q_per_channel_scales_zero_points",
         lambda a: (lambda t: (t.q_per_channel_scales(), t.q_per_channel_zero_points()))(
             torch.quantize_per_channel(a, scales, zps_u8, 1, torch.quint8)), (x,), **QC13),
    Case("quantized_add_scalar",
         lambda a: torch.ops.quantized.add_scalar(torch.quantize_per_tensor(a, 0.1, 128, torch.quint8), 1.5).dequantize(),
         (x,), **Q10),
    Case("quantized_mul_scalar",
         lambda a: torch.ops.quantized.mul_scalar(torch.quantize_per_tensor(a, 0.1, 128, torch.quint8), 0.5).dequantize(),
         (x,), **Q10),
    Case("quantized_relu6",
         lambda a: torch.ops.quantized.relu6(torch.quantize_per_tensor(a, 0.05, 100, torch.quint8)).dequantize(),
         (x,), **Q10),
    Case("quantize_per_channel_quint8",
         lambda a: torch.quantize_per_channel(a, scales, zps_u8, 1, torch.quint8).dequantize(), (x,), **QC13),
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
