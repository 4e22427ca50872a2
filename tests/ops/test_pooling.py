"""Pooling (src/symbolics/pooling.cpp)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


CEIL_OPSETS = (9, 10, 11, 13, 17)
DIL = {9: "max pooling with dilation needs opset 10 or later"}


def mp_idx(fn):
    """A max pool returning (values, indices)."""
    return lambda x: fn(x, return_indices=True)


class MaxPoolScript(nn.Module):
    def forward(self, x):
        return torch.max_pool2d(x, [3, 3], [2, 2], [1, 1], [1, 1], True)


class MaxPoolIndicesScript(nn.Module):
    def forward(self, x):
        return torch._C._nn.max_pool2d_with_indices(x, [3, 2], [2, 1], [1, 0], [1, 1], True)


class AdaptiveAvgScript(nn.Module):
    def forward(self, x):
        return torch._C._nn.adaptive_avg_pool2d(x, [3, 2])


class AdaptiveMaxScript(nn.Module):
    def forward(self, x):
        return torch._C._nn.adaptive_max_pool2d(x, [3, 2])


CASES = [
    # ---- max pooling
    Case("max_pool1d", lambda x: F.max_pool1d(x, 3), (r(2, 3, 10),)),
    Case("max_pool1d_stride_pad", lambda x: F.max_pool1d(x, 4, 2, 2), (r(2, 3, 11),)),
    Case("max_pool1d_ceil", lambda x: F.max_pool1d(x, 3, 2, ceil_mode=True), (r(1, 2, 8),), opsets=CEIL_OPSETS),
    # the last ceil window would start in the padding: PyTorch drops it
    Case("max_pool1d_ceil_pad_drop", lambda x: F.max_pool1d(x, 2, 2, 1, ceil_mode=True), (r(1, 2, 5),),
         opsets=CEIL_OPSETS),
    Case("max_pool1d_dilation", lambda x: F.max_pool1d(x, 3, 1, 1, dilation=2), (r(1, 2, 9),), min_opset=10,
         error_below=DIL),
    Case("max_pool1d_unbatched", lambda x: F.max_pool1d(x, 2, 1), (r(3, 7),)),
    Case("max_pool2d", nn.MaxPool2d(2), (r(2, 3, 8, 6),)),
    Case("max_pool2d_rect", nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0)), (r(2, 3, 9, 7),)),
    Case("max_pool2d_ceil", nn.MaxPool2d(3, 2, ceil_mode=True), (r(1, 2, 8, 7),), opsets=CEIL_OPSETS),
    Case("max_pool2d_ceil_pad", nn.MaxPool2d(3, 2, 1, ceil_mode=True), (r(1, 2, 8, 10),), opsets=CEIL_OPSETS),
    Case("max_pool2d_ceil_pad_drop", nn.MaxPool2d(2, 2, 1, ceil_mode=True), (r(1, 2, 5, 7),), opsets=CEIL_OPSETS),
    Case("max_pool2d_ceil_noop", nn.MaxPool2d(2, ceil_mode=True), (r(1, 2, 6, 6),), opsets=CEIL_OPSETS),
    Case("max_pool2d_dilation", nn.MaxPool2d(3, 2, 1, dilation=(2, 1)), (r(1, 2, 9, 8),), min_opset=10,
         opsets=(10, 11, 13, 17), error_below=DIL),
    Case("max_pool2d_dilation_ceil", nn.MaxPool2d(2, 2, 1, dilation=2, ceil_mode=True), (r(1, 2, 8, 9),),
         min_opset=10, opsets=(10, 11, 13, 17)),
    Case("max_pool2d_unbatched", nn.MaxPool2d(3, 2, 1), (r(3, 8, 7),)),
    Case("max_pool2d_script", MaxPoolScript(), (r(1, 2, 8, 9),), script=True,
         opsets=CEIL_OPSETS),
    Case("max_pool2d_double", nn.MaxPool2d(3, 2, 1), (r(1, 2, 7, 6).double(),)),
    Case("max_pool2d_indices_double", nn.MaxPool2d(2, return_indices=True), (r(1, 2, 6, 6).double(),)),
    Case("max_pool3d", nn.MaxPool3d(2), (r(1, 2, 4, 6, 4),)),
    Case("max_pool3d_all", nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True), (r(1, 2, 5, 7, 5),),
         opsets=CEIL_OPSETS),
    Case("max_pool3d_dilation", nn.MaxPool3d(2, 1, dilation=(1, 2, 1)), (r(1, 2, 4, 6, 4),), min_opset=10,
         error_below=DIL),
    Case("max_pool3d_unbatched", nn.MaxPool3d(2), (r(2, 4, 4, 4),)),
    # ---- max pooling with indices (aten::max_pool*d_with_indices)
    Case("max_pool1d_indices", mp_idx(lambda x, **k: F.max_pool1d(x, 3, 2, 1, **k)), (r(2, 3, 10),)),
    Case("max_pool1d_indices_unbatched", mp_idx(lambda x, **k: F.max_pool1d(x, 2, **k)), (r(3, 8),)),
    Case("max_pool2d_indices", nn.MaxPool2d(2, return_indices=True), (r(2, 3, 6, 8),)),
    Case("max_pool2d_indices_pad_ceil", nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True),
         (r(2, 3, 8, 9),), opsets=CEIL_OPSETS),
    Case("max_pool2d_indices_dilation", nn.MaxPool2d(2, 1, dilation=2, return_indices=True), (r(1, 2, 6, 7),),
         min_opset=10, error_below=DIL),
    Case("max_pool2d_indices_unbatched", nn.MaxPool2d(2, return_indices=True), (r(3, 6, 6),)),
    Case("max_pool2d_indices_script", MaxPoolIndicesScript(), (r(1, 2, 7, 6),), script=True, opsets=CEIL_OPSETS),
    Case("max_pool3d_indices", nn.MaxPool3d(2, (1, 2, 2), return_indices=True), (r(2, 2, 4, 5, 6),)),
    # ---- average pooling
    Case("avg_pool1d", lambda x: F.avg_pool1d(x, 3), (r(2, 3, 10),)),
    Case("avg_pool1d_pad", lambda x: F.avg_pool1d(x, 3, 2, 1), (r(2, 3, 10),)),
    Case("avg_pool1d_pad_exclude", lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), (r(2, 3, 10),)),
    Case("avg_pool1d_ceil", lambda x: F.avg_pool1d(x, 3, 2, ceil_mode=True), (r(1, 2, 8),), opsets=CEIL_OPSETS),
    Case("avg_pool1d_ceil_pad", lambda x: F.avg_pool1d(x, 2, 2, 1, ceil_mode=True), (r(1, 2, 5),),
         opsets=CEIL_OPSETS),
    Case("avg_pool1d_ceil_pad_exclude", lambda x: F.avg_pool1d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False),
         (r(1, 2, 5),), opsets=CEIL_OPSETS),
    Case("avg_pool1d_unbatched", lambda x: F.avg_pool1d(x, 2, 1, 1), (r(3, 6),)),
    Case("avg_pool2d", nn.AvgPool2d(2), (r(2, 3, 8, 6),)),
    Case("avg_pool2d_pad", nn.AvgPool2d(3, 2, 1), (r(2, 3, 9, 8),)),
    Case("avg_pool2d_pad_exclude", nn.AvgPool2d(3, 2, 1, count_include_pad=False), (r(2, 3, 9, 8),)),
    Case("avg_pool2d_ceil", nn.AvgPool2d(3, 2, ceil_mode=True), (r(1, 2, 8, 7),), opsets=CEIL_OPSETS),
    Case("avg_pool2d_ceil_exclude", nn.AvgPool2d(3, 2, ceil_mode=True, count_include_pad=False), (r(1, 2, 8, 7),),
         opsets=CEIL_OPSETS),
    # ceil windows overhang the padded border: PyTorch's divisor is clipped there
    Case("avg_pool2d_ceil_pad", nn.AvgPool2d(3, 2, 1, ceil_mode=True), (r(1, 2, 8, 10),), opsets=CEIL_OPSETS),
    Case("avg_pool2d_ceil_pad_exclude", nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
         (r(1, 2, 8, 10),), opsets=CEIL_OPSETS),
    Case("avg_pool2d_ceil_pad_rect", nn.AvgPool2d((4, 3), (3, 2), (2, 1), ceil_mode=True), (r(1, 2, 11, 8),),
         opsets=CEIL_OPSETS),
    Case("avg_pool2d_divisor", nn.AvgPool2d(3, 2, divisor_override=5), (r(1, 2, 7, 8),)),
    Case("avg_pool2d_divisor_pad", nn.AvgPool2d(3, 2, 1, divisor_override=2), (r(1, 2, 7, 8),)),
    Case("avg_pool2d_divisor_pad_exclude", nn.AvgPool2d(3, 2, 1, count_include_pad=False, divisor_override=4),
         (r(1, 2, 7, 8),)),
    Case("avg_pool2d_divisor_ceil", nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=7), (r(1, 2, 8, 10),),
         opsets=CEIL_OPSETS),
    Case("avg_pool2d_unbatched", nn.AvgPool2d(2, 1, 1, ceil_mode=True), (r(3, 5, 6),), opsets=CEIL_OPSETS),
    Case("avg_pool2d_script", nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=3), (r(1, 2, 8, 9),),
         script=True, opsets=CEIL_OPSETS),
    Case("avg_pool3d", nn.AvgPool3d(2), (r(1, 2, 4, 6, 4),)),
    Case("avg_pool3d_all", nn.AvgPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True), (r(1, 2, 5, 7, 5),),
         opsets=CEIL_OPSETS),
    Case("avg_pool3d_exclude_ceil", nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False),
         (r(1, 2, 6, 6, 5),), opsets=CEIL_OPSETS),
    Case("avg_pool3d_divisor", nn.AvgPool3d(2, 2, 1, divisor_override=3), (r(1, 2, 5, 4, 5),)),
    Case("avg_pool3d_unbatched", nn.AvgPool3d(2), (r(2, 4, 4, 4),)),
    # ---- adaptive average pooling
    Case("adaptive_avg_pool1d_global", nn.AdaptiveAvgPool1d(1), (r(2, 3, 7),)),
    Case("adaptive_avg_pool1d_even", nn.AdaptiveAvgPool1d(4), (r(2, 3, 8),)),
    Case("adaptive_avg_pool1d_uneven", nn.AdaptiveAvgPool1d(3), (r(2, 3, 7),)),
    Case("adaptive_avg_pool1d_unbatched", nn.AdaptiveAvgPool1d(5), (r(3, 7),)),
    Case("adaptive_avg_pool2d_global", nn.AdaptiveAvgPool2d(1), (r(2, 3, 7, 5),)),
    Case("adaptive_avg_pool2d_even", nn.AdaptiveAvgPool2d((2, 3)), (r(2, 3, 8, 6),)),
    Case("adaptive_avg_pool2d_identity", nn.AdaptiveAvgPool2d((8, 6)), (r(2, 3, 8, 6),)),
    Case("adaptive_avg_pool2d_uneven", nn.AdaptiveAvgPool2d((3, 4)), (r(2, 3, 7, 5),)),
    Case("adaptive_avg_pool2d_upsample", nn.AdaptiveAvgPool2d((5, 3)), (r(1, 2, 3, 2),)),
    Case("adaptive_avg_pool2d_none", nn.AdaptiveAvgPool2d((None, 3)), (r(2, 3, 7, 5),)),
    Case("adaptive_avg_pool2d_unbatched", nn.AdaptiveAvgPool2d((2, 2)), (r(3, 5, 4),)),
    Case("adaptive_avg_pool2d_script", AdaptiveAvgScript(), (r(2, 3, 7, 5),), script=True),
    Case("adaptive_avg_pool3d", nn.AdaptiveAvgPool3d((1, 2, 3)), (r(1, 2, 4, 5, 7),)),
    Case("adaptive_avg_pool3d_global", nn.AdaptiveAvgPool3d(1), (r(1, 2, 4, 5, 7),)),
    Case("adaptive_avg_pool3d_unbatched", nn.AdaptiveAvgPool3d((2, 2, 2)), (r(2, 4, 4, 6),)),
    # ---- adaptive max pooling (the op always has indices; return_indices=True returns them)
    Case("adaptive_max_pool1d_global", nn.AdaptiveMaxPool1d(1), (r(2, 3, 7),)),
    Case("adaptive_max_pool1d_uneven", nn.AdaptiveMaxPool1d(3, return_indices=True), (r(2, 3, 7),)),
    Case("adaptive_max_pool1d_even_indices", nn.AdaptiveMaxPool1d(2, return_indices=True), (r(2, 3, 8),)),
    Case("adaptive_max_pool1d_unbatched", nn.AdaptiveMaxPool1d(4, return_indices=True), (r(3, 9),)),
    Case("adaptive_max_pool2d_global", nn.AdaptiveMaxPool2d(1), (r(2, 3, 7, 5),)),
    Case("adaptive_max_pool2d_global_indices", nn.AdaptiveMaxPool2d(1, return_indices=True), (r(2, 3, 7, 5),)),
    Case("adaptive_max_pool2d_even", nn.AdaptiveMaxPool2d((2, 3), return_indices=True), (r(2, 3, 8, 6),)),
    Case("adaptive_max_pool2d_uneven", nn.AdaptiveMaxPool2d((3, 4)), (r(2, 3, 7, 5),)),
    Case("adaptive_max_pool2d_uneven_indices", nn.AdaptiveMaxPool2d((3, 4), return_indices=True), (r(2, 3, 7, 5),)),
    Case("adaptive_max_pool2d_none", nn.AdaptiveMaxPool2d((None, 2), return_indices=True), (r(1, 2, 3, 5),)),
    Case("adaptive_max_pool2d_unbatched", nn.AdaptiveMaxPool2d(3, return_indices=True), (r(2, 5, 4),)),
    Case("adaptive_max_pool2d_script", AdaptiveMaxScript(), (r(2, 3, 7, 5),), script=True),
    Case("adaptive_max_pool3d", nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True), (r(1, 2, 5, 7, 4),)),
    Case("adaptive_max_pool3d_even", nn.AdaptiveMaxPool3d(2), (r(1, 2, 4, 4, 6),)),
    # max_unpool: PyTorch 2.14's tracer and scripting fail on it; torch.export records it
    Case("max_unpool2d", lambda a: F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2), (r(1, 2, 4, 4),),
         torchscript=False),
    Case("max_unpool2d_size", lambda a: F.max_unpool2d(*F.max_pool2d(a, 3, 2, return_indices=True), 3, 2, output_size=(7, 8)),
         (r(2, 3, 7, 8),), torchscript=False),
    Case("max_unpool1d", lambda a: F.max_unpool1d(*F.max_pool1d(a, 2, return_indices=True), 2), (r(1, 2, 8),),
         torchscript=False),
    Case("max_unpool2d_unbatched", lambda a: F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2), (r(3, 4, 6),),
         torchscript=False),
    Case("max_unpool3d", lambda a: F.max_unpool3d(*F.max_pool3d(a, 2, return_indices=True), 2), (r(1, 2, 4, 4, 4),),
         torchscript=False),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
