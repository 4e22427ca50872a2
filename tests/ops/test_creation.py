"""Tensor creation (src/symbolics/creation.cpp).

Creation ops whose arguments are all known at export time and whose result is
small are folded to constants before conversion, so the cases here either
produce more than 64 elements, take a tensor input (*_like, new_*, fill_), or
get their numbers from tensor inputs (run-time values).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
x = torch.randn(2, 40)
xs = torch.randn(3, 4)
xi = torch.randint(-5, 5, (3, 4))


def n(v):
    # 1-element 1-D: run-time numbers come from n[0] (0-d model inputs do not survive optest's .npy files).
    return torch.tensor([v])


# ---- scripted modules (TorchScript keeps the creation ops as written)
class ScriptZeros(nn.Module):
    def forward(self, x):
        return torch.zeros([5, 20], dtype=torch.float64), torch.ones(x.size(0), 30, dtype=torch.int32)


class ScriptFull(nn.Module):
    def forward(self, x):
        return torch.full([4, 20], 7, dtype=torch.int64), torch.full([x.size(0), 40], 2.5, dtype=torch.float64)


class ScriptEmpty(nn.Module):
    def forward(self, x):
        return torch.empty([x.size(0), 40], dtype=torch.float64)


class ScriptTensorList(nn.Module):
    def forward(self, x):
        return torch.tensor([float(x.sum()), 2.0, float(x.max())])


class ScriptTensorIntList(nn.Module):
    def forward(self, x):
        return torch.tensor([int(x.argmax()), x.size(0), 7], dtype=torch.int32)


class ScriptTensorScalar(nn.Module):
    def forward(self, x):
        return torch.tensor(float(x.sum())) + x


class ScriptTensorNested(nn.Module):
    def forward(self, x):
        return torch.tensor([[1.5, 2.0], [3.0, 4.0]]) * x


class ScriptAsTensor(nn.Module):
    def forward(self, x):
        return torch.as_tensor(x, dtype=torch.float64)


class ScriptAsTensorConstant(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.arange(80).view(8, 10)

    def forward(self, x):
        return torch.as_tensor(self.w, dtype=torch.float32) + x


class ScriptAsTensorList(nn.Module):
    def forward(self, x):
        return torch.as_tensor([float(x.min()), float(x.max())])


class ScriptScalarTensor(nn.Module):
    def forward(self, x):
        return torch.scalar_tensor(float(x.sum()), dtype=torch.float64), torch.scalar_tensor(int(x.argmax()))


class ScriptArange(nn.Module):
    def forward(self, x):
        return torch.arange(x.size(1)), torch.arange(2, 200, 3, dtype=torch.float32)


class ScriptMeshgrid(nn.Module):
    def forward(self, a, b):
        return torch.meshgrid([a, b], indexing="xy")


class ScriptOneHot(nn.Module):
    def forward(self, i, n: int):
        return F.one_hot(i, n)


class ScriptLinspace(nn.Module):
    def forward(self, start, steps: int):
        return torch.linspace(float(start), 4.0, steps), torch.linspace(-3, 9, steps, dtype=torch.int64)


CASES = [
    # zeros / ones / empty / full
    Case("zeros", lambda x: torch.zeros(x.shape[0], 40), (x,)),
    Case("zeros_dtype", lambda x: torch.zeros(x.shape[0], 40, dtype=torch.int32), (x,)),
    Case("zeros_half", lambda x: torch.zeros(x.shape[0], 40, dtype=torch.float16), (x,)),
    Case("full_like_half", lambda x: torch.full_like(x.half(), 1.5), (xs,)),
    Case("zeros_bool", lambda x: torch.zeros(x.shape[0], 40, dtype=torch.bool), (x,)),
    Case("zeros_runtime_size", lambda n: torch.zeros(n[0], 3), (n(4),)),
    Case("zeros_scripted", ScriptZeros(), (x,), script=True),
    Case("ones", lambda x: torch.ones(x.shape[1], 3), (x,)),
    Case("ones_long", lambda x: torch.ones((x.shape[1], 2), dtype=torch.long), (x,)),
    Case("ones_runtime_size", lambda n: torch.ones(2, n[0], dtype=torch.float64), (n(3),)),
    # empty*: more than 64 elements, since T2O_CHECK_META compares the values of small tensors
    # between two runs, and uninitialized memory differs.
    Case("empty", lambda x: torch.empty(x.shape[0], 40), (x,), check="shape"),
    Case("empty_scripted", ScriptEmpty(), (x,), script=True, check="shape"),
    Case("full", lambda x: torch.full((x.shape[0], 40), 2.5), (x,)),
    Case("full_int", lambda x: torch.full((x.shape[0], 40), 3), (x,)),
    Case("full_dtype", lambda x: torch.full((x.shape[0], 40), 3, dtype=torch.float64), (x,)),
    Case("full_bool", lambda x: torch.full((x.shape[0], 40), 1, dtype=torch.bool), (x,)),
    Case("full_runtime_value", lambda x: torch.full((2, 5), x.sum()), (xs,)),
    Case("full_scripted", ScriptFull(), (x,), script=True),
    # *_like
    Case("zeros_like", torch.zeros_like, (xs,)),
    Case("zeros_like_dtype", lambda x: torch.zeros_like(x, dtype=torch.int64), (xs,)),
    Case("ones_like", torch.ones_like, (xi,)),
    Case("ones_like_bool", lambda x: torch.ones_like(x, dtype=torch.bool), (xs,)),
    Case("empty_like", torch.empty_like, (x,), check="shape"),
    Case("empty_like_dtype", lambda x: torch.empty_like(x, dtype=torch.float64), (x,), check="shape"),
    Case("full_like", lambda x: torch.full_like(x, 7.5), (xs,)),
    Case("full_like_int", lambda x: torch.full_like(x, 2.7), (xi,)),
    Case("full_like_dtype", lambda x: torch.full_like(x, 2, dtype=torch.int32), (xs,)),
    Case("full_like_runtime_value", lambda x: torch.full_like(x, x.max()), (xs,)),
    # new_*
    Case("new_zeros", lambda x: x.new_zeros((2, 5)), (xs,)),
    Case("new_zeros_dtype", lambda x: x.new_zeros(x.shape[1], 2, dtype=torch.int64), (xs,)),
    Case("new_ones", lambda x: x.new_ones((3, x.shape[0])), (xi,)),
    Case("new_ones_dtype", lambda x: x.new_ones((3,), dtype=torch.bool), (xs,)),
    Case("new_empty", lambda x: x.new_empty((2, 50)), (xs,), check="shape"),
    Case("new_empty_dtype", lambda x: x.new_empty((2, 50), dtype=torch.int32), (xs,), check="shape"),
    Case("new_full", lambda x: x.new_full((2, 5), -1.5), (xs,)),
    # 0-d and empty sizes
    Case("new_full_0d", lambda x: x.new_full((), 3.0) * x, (xs,)),
    Case("new_full_empty", lambda x: x.new_full((0, 2), 3.0), (xs,)),
    Case("new_ones_0d", lambda x: x.new_ones(()) + x, (xs,)),
    Case("new_zeros_0d", lambda x: x.new_zeros([]) - x, (xi,)),
    Case("new_zeros_empty", lambda x: x.new_zeros((2, 0)), (xs,)),
    Case("new_ones_of_0d", lambda x: x[0, 0].new_ones((2, 3)), (xs,)),
    Case("zeros_0d", lambda x: torch.zeros(()) + x, (xs,)),
    Case("full_0d", lambda x: torch.full((), 2, dtype=torch.int64) * x, (xi,)),
    Case("new_full_int", lambda x: x.new_full((2, 5), 4), (xi,)),
    Case("new_full_dtype", lambda x: x.new_full((2, 5), 4, dtype=torch.float64), (xi,)),
    # fill / zero
    Case("fill_", lambda x: (x * 1).fill_(2.5), (xs,)),
    Case("fill_int", lambda x: (x * 1).fill_(3.7), (xi,)),
    Case("fill_tensor", lambda x: (x * 1).fill_(x[0, 1]), (xs,)),
    Case("zero_", lambda x: (x * 1).zero_(), (xs,)),
    Case("zero_int", lambda x: (x + 1).zero_(), (xi,)),
    # arange
    Case("arange_end", lambda x: torch.arange(x.shape[1] * 3), (x,)),
    Case("arange_start_end", lambda x: torch.arange(5, x.shape[1] * 3), (x,)),
    Case("arange_step_float", lambda x: torch.arange(1, x.shape[1], 0.3), (x,)),
    Case("arange_negative_step", lambda x: torch.arange(x.shape[1] * 2, -3, -1), (x,)),
    Case("arange_dtype", lambda x: torch.arange(x.shape[1] * 2, dtype=torch.float64), (x,)),
    Case("arange_int_dtype_float_step", lambda x: torch.arange(0.5, x.shape[1] * 2, 1.5, dtype=torch.int64), (x,)),
    Case("arange_int32_float_bounds", lambda x: torch.arange(-1.7, x.shape[1] * 2 + 0.2, 1.3, dtype=torch.int32),
         (x,)),
    Case("arange_runtime_end", lambda n: torch.arange(n[0]), (n(7),)),
    # out= (the result replaces out; its dtype is out's)
    Case("arange_out", lambda x: torch.arange(x.shape[1] * 2, out=torch.empty(0, dtype=torch.int32)), (x,)),
    Case("arange_start_step_out", lambda x: torch.arange(1, x.shape[1] * 2, 0.5, out=torch.empty(0)), (x,)),
    Case("arange_runtime_start_end", lambda a, b: torch.arange(a[0], b[0]), (n(-3), n(9))),
    Case("arange_runtime_float", lambda t: torch.arange(0, t[0], 0.5), (n(3.2),)),
    Case("arange_runtime_step", lambda a, s: torch.arange(a[0], 20, s[0], dtype=torch.float64), (n(1.5), n(2.5))),
    Case("arange_runtime_int32", lambda t: torch.arange(0, t[0], 1.5, dtype=torch.int32), (n(7.2),)),
    Case("arange_scripted", ScriptArange(), (x,), script=True),
    Case("dim_arange", lambda x: torch._dim_arange(x, 1), (xs,)),
    Case("dim_arange_negative", lambda x: torch._dim_arange(x, -2), (xs,)),
    # eye
    Case("eye", lambda x: torch.eye(x.shape[1] // 4), (x,)),
    Case("eye_m", lambda x: torch.eye(x.shape[1] // 4, 12), (x,)),
    Case("eye_dtype", lambda x: torch.eye(9, x.shape[1] // 4, dtype=torch.int64), (x,)),
    Case("eye_bool", lambda x: torch.eye(x.shape[1] // 4, dtype=torch.bool), (x,)),
    Case("eye_runtime", lambda n: torch.eye(n[0]), (n(4),)),
    Case("eye_runtime_m", lambda n: torch.eye(3, n[0], dtype=torch.float64), (n(5),)),
    # linspace
    Case("linspace", lambda x: torch.linspace(-2, 5, 100) + x[0, 0], (x,)),
    # Integer linspace with steps that are exact in binary: PyTorch's own integer results for
    # other steps depend on its CPU kernel's vectorization and FMA contraction.
    Case("linspace_int", lambda x: torch.linspace(-3, 35, 77, dtype=torch.int64) + x.shape[0], (x,)),
    Case("linspace_runtime", lambda a, b: torch.linspace(a[0], b[0], 9), (n(-1.5), n(4.0))),
    Case("linspace_runtime_int", lambda a, b: torch.linspace(a[0], b[0], 7, dtype=torch.int32), (n(-3), n(9))),
    Case("linspace_runtime_one", lambda a, b: torch.linspace(a[0], b[0], 1), (n(2.5), n(4.0))),
    Case("linspace_runtime_double", lambda a, b: torch.linspace(a[0], b[0], 11, dtype=torch.float64), (n(0.1), n(1.0))),
    # scalar_tensor / tensor / as_tensor
    Case("scalar_tensor", lambda x: torch.scalar_tensor(x.sum()), (xs,)),
    Case("scalar_tensor_dtype", lambda x: torch.scalar_tensor(x.max(), dtype=torch.float64), (xs,)),
    Case("scalar_tensor_scripted", ScriptScalarTensor(), (xs,), script=True),
    Case("tensor_list", ScriptTensorList(), (xs,), script=True),
    Case("tensor_int_list", ScriptTensorIntList(), (xs,), script=True),
    Case("tensor_scalar", ScriptTensorScalar(), (xs,), script=True),
    Case("tensor_nested", ScriptTensorNested(), (torch.randn(2, 2),), script=True),
    Case("as_tensor", ScriptAsTensor(), (xs,), script=True),
    Case("as_tensor_constant", ScriptAsTensorConstant(), (torch.randn(8, 10),), script=True),
    Case("as_tensor_list", ScriptAsTensorList(), (xs,), script=True),
    # hann_window (HannWindow from opset 17)
    Case("hann_window", lambda x: torch.hann_window(100) * x[0, 0], (x,), opsets=(9, 11, 13, 17)),
    Case("hann_window_symmetric", lambda x: torch.hann_window(80, periodic=False) + x.shape[0], (x,),
         opsets=(9, 13, 17)),
    Case("hann_window_double", lambda x: torch.hann_window(70, dtype=torch.float64) + x.shape[0], (x,),
         opsets=(9, 17)),
    # meshgrid
    Case("meshgrid_ij", lambda a, b: torch.meshgrid(a, b, indexing="ij"), (torch.randn(3), torch.randn(4))),
    Case("meshgrid_xy", lambda a, b, c: torch.meshgrid(a, b, c, indexing="xy"),
         (torch.randn(3), torch.randn(4), torch.randn(2))),
    Case("meshgrid_default", lambda a, b: torch.meshgrid(a, b), (torch.randn(3), torch.randn(5))),
    Case("meshgrid_scalar", lambda a, b: torch.meshgrid(a[1], b, indexing="ij"), (torch.randn(2), torch.randn(4))),
    Case("meshgrid_single", lambda a: torch.meshgrid(a, indexing="xy"), (torch.randn(4),)),
    Case("meshgrid_scripted", ScriptMeshgrid(), (torch.randn(3), torch.randn(2)), script=True),
    # one_hot
    Case("one_hot", lambda i: F.one_hot(i, 6), (torch.tensor([[0, 3, 5], [2, 2, 1]]),)),
    Case("one_hot_inferred", lambda i: F.one_hot(i), (torch.tensor([0, 3, 1, 2]),)),
    # numbers computed at run time (scripted int arguments)
    Case("one_hot_runtime_classes", ScriptOneHot(), (torch.tensor([0, 3, 1]), 5), script=True,
         more_args=[(torch.tensor([0, 3, 1]), 7), (torch.tensor([0, 3, 1]), -1)]),
    Case("linspace_runtime_steps", ScriptLinspace(), (torch.tensor(0.5), 5), script=True, opsets=(11, 13, 17),
         # (integer results: steps whose step is exact in binary, where PyTorch 1.13 and 2.x agree)
         more_args=[(torch.tensor(-2.0), 1), (torch.tensor(3.0), 7), (torch.tensor(1.0), 0), (torch.tensor(1.0), 2),
                    (torch.tensor(0.25), 13)],
         error_below={10: "known at export time"}),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
