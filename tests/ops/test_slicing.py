"""Slicing: slice, select, narrow, index_select (src/symbolics/slicing.cpp)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


x = r(4, 5, 6)
x7 = r(7, 3)
xi = torch.randint(-5, 5, (4, 5, 6))
b = torch.rand(4, 5, 6) > 0.5
v = torch.tensor([2.5])
# ONNX Slice takes steps and run-time bounds from opset 10; opset 9 gathers.
STEP_OPSETS = (9, 10, 11, 13, 17)


def dyn(**axes):
    """--dynamic-axes for the named inputs: the sizes become run-time values."""
    import json
    return ("--dynamic-axes", json.dumps({k: list(v) for k, v in axes.items()}, separators=(",", ":")))


class ScriptBounds(nn.Module):
    """Bounds computed at run time from the data."""

    def forward(self, x, n):
        k = int(n[0])
        return x[:, k:], x[k:-1], x[-k:], x[:, :, k:k + 2], x.narrow(1, k, 2), x.narrow(2, -2 * k, 2), x[::k]


class ScriptSelect(nn.Module):
    def forward(self, x, n):
        k = int(n[0])
        return x[k], x[-k], x.select(1, -k), x[:, k]


class ScriptNarrowTensor(nn.Module):
    def forward(self, x, n):
        return torch.narrow(x, 0, n[0], 2)


CASES = [
    # ---- slice
    Case("slice", lambda a: a[1:3], (x,)),
    Case("slice_dim1", lambda a: a[:, 2:], (x,)),
    Case("slice_dim_last", lambda a: a[..., :4], (x,)),
    Case("slice_neg_start", lambda a: a[-2:], (x,)),
    Case("slice_neg_end", lambda a: a[:, :-1], (x,)),
    Case("slice_neg_both", lambda a: a[:, :, -4:-1], (x,)),
    Case("slice_omitted", lambda a: a[:, :], (x,)),
    Case("slice_beyond", lambda a: a[1:100], (x,)),
    Case("slice_empty", lambda a: a[3:1], (x,)),
    Case("slice_multi", lambda a: a[1:, 1:4, :-2], (x,)),
    Case("slice_int", lambda a: a[:, 1:3], (xi,)),
    Case("slice_bool", lambda a: a[2:], (b,)),
    Case("slice_size_bound", lambda a: a[: a.size(0) // 2], (x,)),
    Case("slice_size_bound2", lambda a: a[:, a.size(1) - 2:], (x,)),
    Case("slice_step", lambda a: a[::2], (x,), opsets=STEP_OPSETS),
    Case("slice_step_start", lambda a: a[:, 1::3], (x,), opsets=STEP_OPSETS),
    Case("slice_step_neg_bounds", lambda a: a[:, :, -5:-1:2], (x,), opsets=STEP_OPSETS),
    Case("slice_step_beyond", lambda a: a[1:100:3], (x7,), opsets=STEP_OPSETS),
    Case("slice_step_empty", lambda a: a[:, 4:2:2], (x,), opsets=STEP_OPSETS),
    Case("slice_step_big", lambda a: a[:, ::10], (x,), opsets=STEP_OPSETS),
    Case("slice_step_int", lambda a: a[..., 1::2], (xi,), opsets=STEP_OPSETS),
    Case("dyn_slice_step", lambda a: a[:, 1::2], (x,), extra=dyn(a=[0, 1]), opsets=STEP_OPSETS),
    Case("dyn_slice_neg", lambda a: a[-3:-1], (x7,), extra=dyn(a=[0]), opsets=STEP_OPSETS),
    Case("slice_copy", lambda a: torch.ops.aten.slice_copy(a, 1, 1, 4), (x,)),
    Case("slice_inplace_add", lambda a: a[1:3].clone().add_(1), (x,)),
    Case("script_bounds", ScriptBounds(), (x, torch.tensor([1])), script=True, opsets=STEP_OPSETS),
    Case("dyn_slice_half", lambda a: a[: a.size(0) // 2], (x,), extra=dyn(a=[0]), opsets=STEP_OPSETS),
    Case("dyn_slice_end", lambda a: a[:, a.size(1) - 2:], (x,), extra=dyn(a=[1]), opsets=STEP_OPSETS),
    Case("dyn_slice_static_dim", lambda a: a[:, 1:3], (x,), extra=dyn(a=[0])),
    # ---- select
    Case("select", lambda a: a[1], (x,)),
    Case("select_dim", lambda a: a[:, 2], (x,)),
    Case("select_neg", lambda a: a[-1], (x,)),
    Case("select_neg_dim", lambda a: a.select(-1, -2), (x,)),
    Case("select_1d", lambda a: a[0], (v,)),
    Case("select_int", lambda a: a[:, :, 3], (xi,)),
    Case("select_bool", lambda a: a[2], (b,)),
    Case("select_copy", lambda a: torch.select_copy(a, 1, -1), (x,)),
    Case("select_chain", lambda a: a[1][2][3], (x,)),
    Case("script_select", ScriptSelect(), (x, torch.tensor([2])), script=True, opsets=(9, 10, 11, 13, 17)),
    Case("dyn_select_last", lambda a: a[a.size(0) - 1], (x,), extra=dyn(a=[0])),
    Case("dyn_select_neg", lambda a: a.select(1, -1), (x,), extra=dyn(a=[1])),
    # ---- narrow
    Case("narrow", lambda a: a.narrow(0, 1, 2), (x,)),
    Case("narrow_neg_start", lambda a: a.narrow(1, -3, 2), (x,)),
    Case("narrow_neg_start_end", lambda a: torch.narrow(a, -1, -2, 2), (x,)),
    Case("narrow_neg_dim", lambda a: a.narrow(-2, 0, 5), (xi,)),
    Case("narrow_tensor_start", ScriptNarrowTensor(), (x, torch.tensor([1])), script=True, opsets=STEP_OPSETS),
    Case("dyn_narrow", lambda a: a.narrow(0, a.size(0) - 2, 2), (x,), extra=dyn(a=[0]), opsets=STEP_OPSETS),
    Case("dyn_narrow_neg", lambda a: a.narrow(2, -3, 2), (x,), extra=dyn(a=[2])),
    # ---- index_select
    Case("index_select", lambda a, i: a.index_select(1, i), (x, torch.tensor([0, 3, 3, 1]))),
    Case("index_select_neg_dim", lambda a, i: torch.index_select(a, -1, i), (x, torch.tensor([5, 0]))),
    Case("index_select_int32", lambda a, i: a.index_select(0, i), (xi, torch.tensor([2, 1], dtype=torch.int32))),
    Case("index_select_0d_index", lambda a, i: a.index_select(0, i[1]), (x, torch.tensor([0, 3]))),
    Case("index_select_0d_self", lambda a, i: a[0].index_select(0, i), (v, torch.tensor([0]))),
    Case("index_select_1d", lambda a, i: a.index_select(0, i), (r(7), torch.tensor([6, 0, 2]))),
    Case("index_select_bool", lambda a, i: a.index_select(2, i), (b, torch.tensor([1, 1]))),
    Case("index_select_empty", lambda a, i: a.index_select(1, i[:0]), (x, torch.tensor([1, 2]))),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
