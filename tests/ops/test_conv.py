"""Convolutions (src/symbolics/conv.cpp)."""
import os
import sys
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def mod(m, seed=0):
    torch.manual_seed(seed)
    for p in m.parameters():
        nn.init.normal_(p, std=0.5)
    return m


class _Conv(nn.Module):
    """Scripted F.conv*d with weight and bias as inputs (aten::conv*d)."""

    def __init__(self, stride: List[int], padding: List[int], dilation: List[int], groups: int):
        super().__init__()
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups


class Conv1d(_Conv):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv1d(x, w, b, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_Conv):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv2d(x, w, b, self.stride, self.padding, self.dilation, self.groups)


class Conv3d(_Conv):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv3d(x, w, b, self.stride, self.padding, self.dilation, self.groups)


class ConvSame(nn.Module):
    """F.conv2d with a string padding ("same"/"valid")."""

    def __init__(self, padding: str, dilation: List[int]):
        super().__init__()
        self.padding = padding
        self.dilation = dilation

    def forward(self, x, w):
        return F.conv2d(x, w, None, 1, self.padding, self.dilation)


class ConvSame1d(nn.Module):
    def forward(self, x, w, b):
        return F.conv1d(x, w, b, 1, "same", 3)


class ConvSame3d(nn.Module):
    def forward(self, x, w):
        return F.conv3d(x, w, None, 1, "same")


class _ConvT(nn.Module):
    """Scripted F.conv_transpose*d (aten::conv_transpose*d)."""

    def __init__(self, stride: List[int], padding: List[int], output_padding: List[int], groups: int,
                 dilation: List[int]):
        super().__init__()
        self.stride, self.padding, self.output_padding = stride, padding, output_padding
        self.groups, self.dilation = groups, dilation


class ConvT1d(_ConvT):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv_transpose1d(x, w, b, self.stride, self.padding, self.output_padding, self.groups, self.dilation)


class ConvT2d(_ConvT):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv_transpose2d(x, w, b, self.stride, self.padding, self.output_padding, self.groups, self.dilation)


class ConvT3d(_ConvT):
    def forward(self, x, w, b: Optional[torch.Tensor]):
        return F.conv_transpose3d(x, w, b, self.stride, self.padding, self.output_padding, self.groups, self.dilation)


class Convolution(nn.Module):
    """aten::convolution (scripted torch.convolution)."""

    def forward(self, x, w, b):
        return torch.convolution(x, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 1)


class ConvolutionT(nn.Module):
    def forward(self, x, w, b):
        return torch.convolution(x, w, b, [2, 1], [1, 0], [1, 2], True, [1, 0], 1)


class ConvTBC(nn.Module):
    def __init__(self, pad: int):
        super().__init__()
        self.pad = pad

    def forward(self, x, w, b):
        return torch.conv_tbc(x, w, b, self.pad)


CASES = [
    # ---- traced: aten::_convolution
    Case("conv1d", mod(nn.Conv1d(4, 6, 3)), (r(2, 4, 11),)),
    Case("conv1d_all", mod(nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)), (r(2, 4, 13),)),
    Case("conv1d_nobias", mod(nn.Conv1d(3, 2, 5, padding=1, bias=False)), (r(1, 3, 9),)),
    Case("conv1d_unbatched", mod(nn.Conv1d(3, 2, 3)), (r(3, 9),)),
    Case("conv2d", mod(nn.Conv2d(3, 5, 3)), (r(2, 3, 8, 7),)),
    Case("conv2d_stride_pad", mod(nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 2))), (r(2, 3, 9, 8),)),
    Case("conv2d_dilation", mod(nn.Conv2d(2, 4, 3, dilation=(2, 3), padding=1)), (r(1, 2, 11, 12),)),
    Case("conv2d_groups", mod(nn.Conv2d(4, 6, 3, groups=2, bias=False)), (r(2, 4, 6, 6),)),
    Case("conv2d_depthwise", mod(nn.Conv2d(4, 8, 3, groups=4, padding=1)), (r(2, 4, 6, 5),)),
    Case("conv2d_unbatched", mod(nn.Conv2d(2, 3, 3)), (r(2, 5, 6),)),
    Case("conv2d_1x1", mod(nn.Conv2d(3, 4, 1, stride=2)), (r(1, 3, 7, 7),)),
    Case("conv3d", mod(nn.Conv3d(2, 3, (2, 3, 3), stride=(1, 2, 1), padding=(1, 0, 1))), (r(1, 2, 5, 6, 5),)),
    Case("conv3d_groups_dil", mod(nn.Conv3d(4, 4, 2, groups=4, dilation=2, bias=False)), (r(2, 4, 5, 5, 5),)),
    Case("conv3d_unbatched", mod(nn.Conv3d(2, 3, 2)), (r(2, 4, 4, 4),)),
    Case("conv2d_same_traced", mod(nn.Conv2d(2, 3, (3, 4), padding="same", dilation=(1, 2))), (r(1, 2, 7, 8),)),
    Case("conv1d_same_traced", mod(nn.Conv1d(2, 3, 4, padding="same")), (r(1, 2, 7),)),
    Case("conv2d_valid_traced", mod(nn.Conv2d(2, 3, 3, padding="valid")), (r(1, 2, 6, 6),)),
    Case("conv2d_same_unbatched_traced", mod(nn.Conv2d(2, 3, 2, padding="same")), (r(2, 5, 5),)),
    Case("conv_transpose1d", mod(nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1)), (r(2, 3, 6),)),
    Case("conv_transpose1d_unbatched", mod(nn.ConvTranspose1d(3, 2, 3, stride=2)), (r(3, 5),)),
    Case("conv_transpose2d", mod(nn.ConvTranspose2d(4, 3, 3)), (r(2, 4, 5, 5),)),
    Case("conv_transpose2d_all",
         mod(nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                                dilation=(1, 2))), (r(2, 4, 5, 4),)),
    Case("conv_transpose2d_dilation", mod(nn.ConvTranspose2d(2, 2, 3, dilation=2, padding=2, bias=False)),
         (r(1, 2, 6, 5),)),
    Case("conv_transpose2d_unbatched", mod(nn.ConvTranspose2d(2, 3, 2, stride=2)), (r(2, 4, 3),)),
    Case("conv_transpose3d", mod(nn.ConvTranspose3d(2, 4, 2, stride=2, output_padding=1, groups=2)),
         (r(1, 2, 3, 3, 2),)),
    Case("convolution_traced", lambda x, w: torch.convolution(x, w, None, [1, 2], [2, 1], [2, 1], False, [0, 0], 1),
         (r(1, 2, 9, 9), r(3, 2, 3, 3))),
    # ---- scripted: aten::conv*d / conv_transpose*d / convolution with tensors as inputs
    Case("conv1d_script", Conv1d([2], [1], [2], 2), (r(2, 4, 12), r(6, 2, 3), r(6)), script=True),
    Case("conv2d_script", Conv2d([1, 2], [2, 1], [1, 1], 1), (r(2, 3, 8, 7), r(4, 3, 3, 3), r(4)), script=True),
    Case("conv2d_script_nobias", Conv2d([1, 1], [0, 0], [2, 2], 3), (r(1, 3, 8, 7), r(6, 1, 3, 3), None),
         script=True),
    Case("conv2d_script_unbatched", Conv2d([1, 1], [1, 1], [1, 1], 1), (r(3, 6, 7), r(4, 3, 3, 3), r(4)),
         script=True),
    Case("conv3d_script", Conv3d([1, 1, 2], [1, 0, 1], [1, 1, 1], 1), (r(1, 2, 5, 5, 6), r(3, 2, 2, 3, 3), r(3)),
         script=True),
    Case("conv2d_same_script", ConvSame("same", [1, 1]), (r(1, 2, 7, 6), r(3, 2, 3, 4)), script=True),
    Case("conv2d_same_dilated_script", ConvSame("same", [2, 3]), (r(1, 2, 9, 10), r(3, 2, 2, 3)), script=True),
    Case("conv2d_valid_script", ConvSame("valid", [1, 1]), (r(1, 2, 7, 6), r(3, 2, 3, 4)), script=True),
    Case("conv2d_same_unbatched_script", ConvSame("same", [1, 1]), (r(2, 7, 6), r(3, 2, 4, 4)), script=True),
    Case("conv1d_same_script", ConvSame1d(), (r(1, 2, 12), r(3, 2, 4), r(3)), script=True),
    Case("conv3d_same_script", ConvSame3d(), (r(1, 2, 5, 6, 4), r(3, 2, 2, 3, 2)), script=True),
    Case("conv_transpose1d_script", ConvT1d([2], [1], [1], 1, [1]), (r(2, 3, 6), r(3, 4, 3), r(4)), script=True),
    Case("conv_transpose2d_script", ConvT2d([2, 1], [1, 0], [1, 0], 2, [1, 2]), (r(1, 4, 5, 4), r(4, 3, 3, 2), r(6)),
         script=True),
    Case("conv_transpose2d_script_nobias", ConvT2d([1, 1], [0, 0], [0, 0], 1, [1, 1]), (r(1, 2, 4, 4), r(2, 3, 2, 2),
                                                                                        None), script=True),
    Case("conv_transpose2d_script_unbatched", ConvT2d([2, 2], [0, 0], [1, 1], 1, [1, 1]),
         (r(2, 4, 4), r(2, 3, 2, 2), r(3)), script=True),
    Case("conv_transpose3d_script", ConvT3d([1, 2, 1], [0, 1, 0], [0, 1, 0], 1, [1, 1, 2]),
         (r(1, 2, 3, 4, 3), r(2, 2, 2, 3, 2), r(2)), script=True),
    Case("convolution_script", Convolution(), (r(1, 2, 9, 9), r(3, 2, 3, 3), r(3)), script=True),
    Case("convolution_transposed_script", ConvolutionT(), (r(1, 2, 5, 5), r(2, 3, 3, 3), r(3)), script=True),
    # ---- aten::conv_tbc: input (time, batch, in), weight (width, in, out), bias (out)
    Case("conv_tbc", lambda x, w, b: torch.conv_tbc(x, w, b, 1), (r(7, 2, 3), r(3, 3, 4), r(4))),
    Case("conv_tbc_nopad", lambda x, w, b: torch.conv_tbc(x, w, b), (r(6, 3, 2), r(2, 2, 5), r(5))),
    Case("conv_tbc_script", ConvTBC(2), (r(5, 1, 3), r(4, 3, 2), r(2)), script=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
