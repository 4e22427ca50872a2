"""Padding (src/symbolics/padding.cpp): constant / reflect / replicate / circular,
negative pads (cropping), integer and bool tensors (Pad takes pads as an input from opset 11)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
x1 = torch.randn(2, 3, 7)
x2 = torch.randn(2, 3, 5, 6)
x3 = torch.randn(1, 2, 4, 5, 6)
xi = torch.randint(-9, 9, (2, 3, 5, 6))


def n(v):
    return torch.tensor([v])


class ScriptPad(nn.Module):
    def forward(self, x):
        return F.pad(x, [1, 2, 0, 1], mode="reflect"), F.pad(x, [2, 1], value=-1.5)


class ScriptCircular(nn.Module):
    def forward(self, x):
        return F.pad(x, [1, 2, 2, 0], mode="circular")


CASES = [
    # constant (aten::pad mode="constant" and constant_pad_nd)
    Case("pad_constant", lambda x: F.pad(x, (1, 2)), (x2,)),
    Case("pad_constant_value", lambda x: F.pad(x, (1, 2, 3, 0), value=2.5), (x2,)),
    Case("pad_constant_all_dims", lambda x: F.pad(x, (1, 1, 0, 2, 1, 0, 2, 1), value=-1.0), (x2,)),
    Case("pad_constant_negative", lambda x: F.pad(x, (-1, 2, 1, -2)), (x2,)),
    Case("pad_constant_crop_only", lambda x: F.pad(x, (-1, -2, 0, -1)), (x2,)),
    Case("pad_constant_int", lambda x: F.pad(x, (2, 1, 1, 1), value=3.7), (xi,)),
    Case("pad_constant_int_negative_value", lambda x: F.pad(x, (1, 1), value=-2.7), (xi,)),
    Case("pad_constant_bool", lambda x: F.pad(x > 0, (1, 2), value=1.0), (x2,)),
    Case("pad_constant_double", lambda x: F.pad(x, (0, 3), value=1e-3), (x2.double(),)),
    Case("pad_constant_half", lambda x: F.pad(x.half(), (2, 1, 0, 1), value=0.5), (x2,)),
    Case("pad_circular_half", lambda x: F.pad(x.half(), (2, 1), mode="circular"), (x1,)),
    Case("pad_constant_1d", lambda x: F.pad(x, (2, 3), value=9.0), (torch.randn(5),)),
    Case("pad_runtime", lambda x, p: F.pad(x, (p[0], 1, 0, p[1])), (x2, torch.tensor([2, 1])), min_opset=11,
         error_below={9: "needs opset 11"}),
    Case("pad_runtime_negative", lambda x, p: F.pad(x, (1, p[0]), value=1.5), (x2, torch.tensor([-2])),
         min_opset=11),
    Case("constant_pad_nd", nn.ConstantPad2d((1, 2, 0, 3), 4.0), (x2,)),
    Case("constant_pad_nd_3d", nn.ConstantPad3d(1, -1.0), (x3,)),
    Case("zero_pad", nn.ZeroPad2d((2, 0, 1, 1)), (x2,)),
    Case("constant_pad_nd_direct", lambda x: torch.constant_pad_nd(x, [1, -1, 2, 0], 0.5), (x2,)),
    Case("constant_pad_nd_int", lambda x: torch.constant_pad_nd(x, [1, 2], 7), (xi,)),
    Case("constant_pad_nd_default", lambda x: torch.constant_pad_nd(x, [3, 1]), (x1,)),
    Case("pad_scripted", ScriptPad(), (x2,), script=True),
    # reflect
    Case("pad_reflect_1d", lambda x: F.pad(x, (2, 3), mode="reflect"), (x1,)),
    Case("pad_reflect_2d", lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect"), (x2,)),
    Case("pad_reflect_3d", lambda x: F.pad(x, (1, 2, 0, 1, 2, 1), mode="reflect"), (x3,)),
    Case("pad_reflect_negative", lambda x: F.pad(x, (-1, 3), mode="reflect"), (x1,)),
    Case("reflection_pad1d", nn.ReflectionPad1d((3, 1)), (x1,)),
    Case("reflection_pad2d", nn.ReflectionPad2d(2), (x2,)),
    Case("reflection_pad3d", nn.ReflectionPad3d((1, 0, 2, 1, 1, 2)), (x3,)),
    Case("reflection_pad2d_negative", lambda x: torch.ops.aten.reflection_pad2d(x, [2, -1, -2, 3]), (x2,)),
    Case("reflection_pad3d_direct", lambda x: torch.ops.aten.reflection_pad3d(x, [1, 2, 2, 0, 0, 1]), (x3,)),
    Case("reflection_pad1d_unbatched", lambda x: torch.ops.aten.reflection_pad1d(x, [2, 2]), (x1[0],)),
    # replicate
    Case("pad_replicate_1d", lambda x: F.pad(x, (2, 4), mode="replicate"), (x1,)),
    Case("pad_replicate_2d", lambda x: F.pad(x, (3, 0, 1, 2), mode="replicate"), (x2,)),
    Case("pad_replicate_3d", lambda x: F.pad(x, (1, 1, 2, 0, 0, 3), mode="replicate"), (x3,)),
    Case("pad_replicate_negative", lambda x: F.pad(x, (2, -1, -2, 1), mode="replicate"), (x2,)),
    Case("replication_pad1d", nn.ReplicationPad1d((0, 3)), (x1,)),
    Case("replication_pad2d", nn.ReplicationPad2d((1, 2, 3, 4)), (x2,)),
    Case("replication_pad3d", nn.ReplicationPad3d(2), (x3,)),
    Case("replication_pad1d_direct", lambda x: torch.ops.aten.replication_pad1d(x, [2, -1]), (x1,)),
    Case("replication_pad2d_direct", lambda x: torch.ops.aten.replication_pad2d(x, [0, 2, 3, 1]), (x2,)),
    Case("replication_pad3d_direct", lambda x: torch.ops.aten.replication_pad3d(x, [1, 0, 0, 2, 2, -1]), (x3,)),
    # circular
    Case("pad_circular_1d", lambda x: F.pad(x, (2, 3), mode="circular"), (x1,)),
    Case("pad_circular_2d", lambda x: F.pad(x, (1, 2, 3, 1), mode="circular"), (x2,)),
    Case("pad_circular_3d", lambda x: F.pad(x, (1, 2, 0, 1, 2, 1), mode="circular"), (x3,)),
    Case("pad_circular_negative", lambda x: F.pad(x, (-1, 2, 2, -1), mode="circular"), (x2,)),
    Case("pad_circular_int", lambda x: F.pad(x, (1, 2, 1, 0), mode="circular"), (xi,)),
    Case("pad_circular_scripted", ScriptCircular(), (x2,), script=True),
    Case("pad_circular_direct", lambda x: torch.ops.aten._pad_circular(x, [2, 1, 0, 2]), (x2,)),
    Case("conv_circular", nn.Conv2d(3, 4, 3, padding=2, padding_mode="circular"), (x2,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
