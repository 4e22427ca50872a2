"""Scans and cumulative operators (src/symbolics/scan.cpp), through both
frontends (TorchScript and torch.export programs)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf = float("inf")
nan = float("nan")

# ties (the last index wins), NaN (sticks, its index moves to later NaNs), -inf/inf
TIES = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, nan, 5.0, nan, 1.0],
                     [-inf, -inf, 0.0, -0.0, inf, inf, -2.0, 7.0, 7.0]])
INT_TIES = torch.tensor([[2, 1, 1, 2, 1, 0, -5], [0, 0, 0, 9, 9, -9, 9]])


def grad(**kw):
    return lambda x: torch.gradient(x, **kw)


CASES = optest.enable_pt2([
    Case("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), (torch.randn(2, 5, 3) * 10,)),
    Case("logcumsumexp_neg_inf", lambda x: torch.logcumsumexp(x, 0), (torch.tensor([-inf, -inf, 1.0, -inf, 80.0]),)),
    Case("logcumsumexp_double", lambda x: torch.logcumsumexp(x, -1), (torch.randn(3, 4).double() * 100,)),
    Case("logcumsumexp_0d", lambda x: torch.logcumsumexp(x, 0), (torch.tensor(2.5),)),

    # cummax / cummin: values and indices
    Case("cummax_ties_nan", lambda x: tuple(torch.cummax(x, 1)), (TIES,)),
    Case("cummin_ties_nan", lambda x: tuple(torch.cummin(x, -1)), (TIES,)),
    Case("cummax_dim0", lambda x: tuple(torch.cummax(x, 0)), (TIES.t().contiguous(),)),
    Case("cummax_int", lambda x: tuple(torch.cummax(x, 1)), (INT_TIES,)),
    Case("cummin_int", lambda x: tuple(torch.cummin(x, 1)), (INT_TIES,)),
    Case("cummin_int32_extremes", lambda x: tuple(torch.cummin(x, 0)),
         (torch.tensor([2**31 - 1, 2**31 - 1, -2**31, 5], dtype=torch.int32),)),
    Case("cummax_int64_extremes", lambda x: tuple(torch.cummax(x, 0)),
         (torch.tensor([-2**63, -2**63, 3, 2**63 - 1]),)),
    Case("cummax_double_batched", lambda x: tuple(torch.cummax(x, 1)), (torch.randn(2, 6, 3).double().round(),)),
    Case("cummin_batched", lambda x: tuple(torch.cummin(x, 2)), (torch.randn(2, 3, 5).round(),)),
    Case("cummax_bool", lambda x: tuple(torch.cummax(x, 0)), (torch.tensor([False, True, False, True]),)),
    Case("cummax_0d", lambda x: tuple(torch.cummax(x, 0)), (torch.tensor(1.5),)),
    Case("cummin_empty_dim", lambda x: tuple(torch.cummin(x, 0)), (torch.zeros(0, 3),)),

    # diff
    Case("diff", lambda x: torch.diff(x), (torch.randn(3, 5),)),
    Case("diff_n2_dim0", lambda x: torch.diff(x, n=2, dim=0), (torch.randn(5, 3).double(),)),
    Case("diff_prepend_append", lambda x, p, a: torch.diff(x, n=1, dim=1, prepend=p, append=a),
         (torch.randn(2, 3), torch.randn(2, 1), torch.randn(2, 2))),
    Case("diff_int", lambda x: torch.diff(x, n=3), (torch.tensor([1, 4, 9, 16, -25, 36]),)),
    Case("diff_bool", lambda x: torch.diff(x), (torch.tensor([True, True, False, True]),)),
    Case("diff_n_past_length", lambda x: torch.diff(x, n=4, dim=0), (torch.randn(3, 2),)),

    # trapezoid / trapz / cumulative_trapezoid
    Case("trapezoid", lambda y: torch.trapezoid(y), (torch.randn(3, 7),)),
    Case("trapezoid_dx_dim0", lambda y: torch.trapezoid(y, dx=0.25, dim=0), (torch.randn(5, 2).double(),)),
    Case("trapezoid_x_1d", lambda y, x: torch.trapezoid(y, x, dim=1),
         (torch.randn(2, 5, 3), torch.tensor([0.0, 0.5, 2.0, 2.5, 4.0]))),
    Case("trapezoid_x_full", lambda y, x: torch.trapezoid(y, x), (torch.randn(2, 4), torch.randn(2, 4).cumsum(1))),
    Case("trapezoid_x_lower_rank", lambda y, x: torch.trapezoid(y, x),
         (torch.randn(3, 2, 4), torch.randn(2, 4))),
    Case("trapezoid_int", lambda y: torch.trapezoid(y), (torch.tensor([[1, 2, 4], [0, -3, 5]]),)),
    Case("trapezoid_empty_dim", lambda y: torch.trapezoid(y, dim=0), (torch.zeros(0, 3),)),
    Case("trapz_dx", lambda y: torch.trapz(y, dx=2.0), (torch.randn(4, 6),)),
    Case("trapz_x", lambda y, x: torch.trapz(y, x, dim=0), (torch.randn(4, 3), torch.tensor([1.0, 2.0, 4.0, 8.0]))),
    Case("cumulative_trapezoid", lambda y: torch.cumulative_trapezoid(y), (torch.randn(3, 6),), min_opset=11),
    Case("cumulative_trapezoid_dx", lambda y: torch.cumulative_trapezoid(y, dx=0.1, dim=0),
         (torch.randn(6, 2).double(),), min_opset=11),
    Case("cumulative_trapezoid_x", lambda y, x: torch.cumulative_trapezoid(y, x, dim=1),
         (torch.randn(2, 5, 2), torch.tensor([0.0, 1.0, 1.5, 3.0, 3.25])), min_opset=11),
    Case("cumulative_trapezoid_int", lambda y: torch.cumulative_trapezoid(y), (torch.tensor([1, 5, -2, 7]),),
         min_opset=11),

    # gradient
    Case("gradient", grad(), (torch.randn(4, 5),)),
    Case("gradient_spacing_dim", grad(spacing=2.0, dim=1), (torch.randn(3, 6).double(),)),
    Case("gradient_edge2", grad(spacing=0.5, dim=0, edge_order=2), (torch.randn(5, 3),)),
    Case("gradient_dims_edge2", grad(dim=[0, 2], edge_order=2), (torch.randn(3, 2, 4),)),
    Case("gradient_coords", lambda x, c: torch.gradient(x, spacing=(c,), dim=1),
         (torch.randn(2, 5), torch.tensor([0.0, 1.0, 1.5, 3.5, 4.0]))),
    Case("gradient_coords_edge2", lambda x, c0, c1: torch.gradient(x, spacing=(c0, c1), edge_order=2),
         (torch.randn(4, 3).double(), torch.tensor([0.0, 0.5, 2.0, 2.5]).double(), torch.tensor([1.0, 2.0, 4.0]).double())),
    # Scalar[] spacing (gradient.scalarrayint / .scalarrayarray): the tracer cannot record a list of numbers
    Case("gradient_scalar_list", grad(spacing=[2.0, 0.5]), (torch.randn(4, 5),), torchscript=False),
    Case("gradient_scalar_list_dims_edge2", grad(spacing=[0.25, 3.0], dim=[1, 0], edge_order=2),
         (torch.randn(4, 5).double(),), torchscript=False),
    Case("gradient_int", grad(dim=0), (torch.tensor([1, 4, 9, 16, 25]),)),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
