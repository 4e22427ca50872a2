"""Gathers and scatters through flat or broadcast indices
(src/symbolics/take_put.cpp): take_along_dim, put, index_reduce,
segment_reduce, through both frontends."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
x = torch.randn(3, 4)
inf = float("inf")

CASES = optest.enable_pt2([
    # take_along_dim (GatherElements: opset 11)
    Case("take_along_dim", lambda a, i: torch.take_along_dim(a, i, 1), (x, torch.randint(-4, 4, (3, 2))), min_opset=11,
         error_below={9: "supported from opset 11"}),
    Case("take_along_dim_broadcast", lambda a, i: torch.take_along_dim(a, i, 0),
         (torch.randn(3, 1, 4), torch.randint(0, 3, (2, 5, 1))), min_opset=11),
    Case("take_along_dim_flat", lambda a, i: torch.take_along_dim(a, i), (x, torch.randint(0, 12, (2, 5))), min_opset=11),
    Case("take_along_dim_argsort", lambda a: torch.take_along_dim(a, a.argsort(-1), -1), (torch.randn(2, 3, 5).double(),),
         min_opset=11),
    Case("take_along_dim_int", lambda a, i: torch.take_along_dim(a, i, 1), (torch.arange(12).reshape(3, 4), torch.tensor([[3], [0], [1]])),
         min_opset=11),
    # put (ScatterElements: 11; accumulate with reduction "add" from 16, a one-hot MatMul before)
    Case("put", lambda a, i, v: a.put(i, v), (x, torch.tensor([0, 5, -1]), torch.tensor([1.0, 2.0, 3.0])), min_opset=11),
    Case("put_accumulate", lambda a, i, v: a.put(i, v, accumulate=True),
         (x, torch.tensor([[0, 5], [0, -12]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])), min_opset=11),
    Case("put_accumulate_int", lambda a, i, v: a.put(i, v, accumulate=True),
         (torch.arange(6).reshape(2, 3), torch.tensor([1, 1, 4]), torch.tensor([10, 20, 30])), min_opset=11),
    Case("put_0d", lambda a, i, v: a.put(i, v), (torch.tensor(1.0), torch.tensor([0]), torch.tensor([5.0])), min_opset=11),
    Case("put_inplace", lambda a, i, v: a.clone().put_(i, v, accumulate=True) * 2,
         (x.double(), torch.tensor([3, 3]), torch.tensor([0.5, 0.25]).double()), min_opset=11),
    # index_reduce (ScatterElements reductions: mul 16, max/min 18)
    Case("index_reduce_prod", lambda a, i, v: a.index_reduce(0, i, v, "prod"), (x, torch.tensor([0, 2, 0]), torch.randn(3, 4)),
         min_opset=16, error_below={13: "supported from opset 16"}),
    Case("index_reduce_mean_exclude", lambda a, i, v: a.index_reduce(1, i, v, "mean", include_self=False),
         (x, torch.tensor([0, 2, 0]), torch.randn(3, 3)), min_opset=16),
    Case("index_reduce_mean", lambda a, i, v: a.index_reduce(1, i, v, "mean"),
         (x.double(), torch.tensor([3, 3, 1, 3]), torch.randn(3, 4).double()), min_opset=16),
    Case("index_reduce_amax", lambda a, i, v: a.index_reduce(0, i, v, "amax"), (x, torch.tensor([0, 2, 0]), torch.randn(3, 4)),
         min_opset=18, error_below={17: "opset 18"}),
    Case("index_reduce_amin_exclude", lambda a, i, v: a.index_reduce(-1, i, v, "amin", include_self=False),
         (x, torch.tensor([1, 1]), torch.randn(3, 2)), min_opset=18),
    Case("index_reduce_mean_int", lambda a, i, v: a.index_reduce(0, i, v, "mean"),
         (torch.tensor([-7, 3, 5]), torch.tensor([0, 0, 2]), torch.tensor([2, 0, -4])), min_opset=16),
    Case("index_reduce_prod_int_exclude", lambda a, i, v: a.index_reduce(0, i, v, "prod", include_self=False),
         (torch.tensor([[2, 3], [4, 5]]), torch.tensor([1, 1]), torch.tensor([[3, -1], [2, 2]])), min_opset=16),
    # segment_reduce with lengths or offsets (add/mul from 16, max/min from 18)
    Case("segment_reduce_sum", lambda d, l: torch.segment_reduce(d, "sum", lengths=l), (torch.randn(6), torch.tensor([2, 3, 1])),
         min_opset=16, error_below={13: "supported from opset 16"}),
    Case("segment_reduce_max", lambda d, l: torch.segment_reduce(d, "max", lengths=l), (torch.randn(6, 2), torch.tensor([2, 0, 4])),
         min_opset=18),
    Case("segment_reduce_min_initial", lambda d, l: torch.segment_reduce(d, "min", lengths=l, initial=0.0),
         (torch.randn(6, 2), torch.tensor([2, 0, 4])), min_opset=18),
    Case("segment_reduce_mean", lambda d, l: torch.segment_reduce(d, "mean", lengths=l), (torch.randn(7, 3), torch.tensor([3, 0, 4])),
         min_opset=16),
    Case("segment_reduce_mean_initial", lambda d, l: torch.segment_reduce(d, "mean", lengths=l, initial=1.5),
         (torch.randn(6), torch.tensor([2, 0, 4])), min_opset=16),
    Case("segment_reduce_prod_offsets", lambda d, o: torch.segment_reduce(d, "prod", offsets=o),
         (torch.randn(5).double(), torch.tensor([0, 2, 2, 5])), min_opset=16),
    Case("segment_reduce_sum_initial", lambda d, l: torch.segment_reduce(d, "sum", lengths=l, initial=-1.0),
         (torch.randn(4, 2, 2), torch.tensor([1, 3])), min_opset=16),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['take_along_dim'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
