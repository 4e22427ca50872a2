"""Histograms (src/symbolics/histogram.cpp): histc, histogram, histogramdd,
bincount, through both frontends. Counting changes at opset 16 (one-hot sums
before, ScatterElements with reduction "add" from 16)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
nan = float("nan")
inf = float("inf")
OPSETS = (9, 11, 13, 16, 17, 18, 23)

# every bin edge of [0, 4] in 4 bins, values outside, NaN and +-inf (not counted)
ON_EDGES = torch.tensor([[0.0, 1.0, 2.0, 3.0, 4.0, 4.0, -1.0], [5.0, nan, 0.5, 3.999, inf, -inf, 2.0]])
# edges of 8 bins over [0, 8] (exact), with the values on them
INTS = torch.tensor([0.0, 1.0, 1.0, 2.0, 3.5, 7.0, 8.0, 8.0, 4.0, -0.5, 8.5])


def case(name, f, args, **kw):
    return Case(name, f, args, opsets=OPSETS, **kw)


CASES = optest.enable_pt2([
    # histc
    case("histc_edges", lambda x: torch.histc(x, bins=4, min=0, max=4), (ON_EDGES,)),
    case("histc_data_range", lambda x: torch.histc(x, bins=7), (torch.randn(3, 50),)),
    case("histc_data_range_edges", lambda x: torch.histc(x, bins=4, min=3, max=3), (INTS,)),
    # interior edges that float32 cannot represent: the bin of each value as PyTorch's float arithmetic puts it
    case("histc_tenths", lambda x: torch.histc(x, bins=10, min=0, max=1), (torch.arange(11) / 10 + torch.tensor(0.0),)),
    case("histc_thirds_double", lambda x: torch.histc(x, bins=3, min=0, max=1), (torch.arange(7).double() / 6,)),
    case("histc_double", lambda x: torch.histc(x, bins=10, min=-1.5, max=2.0), (torch.randn(200).double(),)),
    case("histc_constant_data", lambda x: torch.histc(x, bins=4), (torch.full((5,), 2.0),)),
    case("histc_0d", lambda x: torch.histc(x, bins=3, min=0, max=3), (torch.tensor(1.0),)),
    case("histc_empty", lambda x: torch.histc(x, bins=3, min=0, max=1), (torch.zeros(0),)),
    # PyTorch bins half values in half arithmetic that ONNX Runtime does not reproduce: refused
    Case("histc_half_refused", lambda x: torch.histc(x, bins=10, min=0, max=1), (torch.arange(11).half() / 10,),
         opsets=(), error_below={9: "float16/bfloat16", 18: "float16/bfloat16"}, pt2=False),

    # histogram: bin count (data range or range=), given edges, weight, density
    case("histogram_bins", lambda x: tuple(torch.histogram(x, 4)), (INTS.clamp(0, 8),)),
    case("histogram_range_edges", lambda x: tuple(torch.histogram(x, 8, range=(0.0, 8.0))), (INTS,)),
    case("histogram_tenths", lambda x: tuple(torch.histogram(x, 10, range=(0.0, 1.0))), (torch.arange(11) / 10,)),
    case("histogram_sevenths_data_range", lambda x: tuple(torch.histogram(x, 7)), (torch.arange(15) / 7 - 1,)),
    case("histogram_random", lambda x: tuple(torch.histogram(x, 10)), (torch.randn(4, 25),)),
    case("histogram_double_weight", lambda x, w: tuple(torch.histogram(x, 5, range=(-2.0, 2.0), weight=w)),
         (torch.randn(40).double(), torch.rand(40).double())),
    case("histogram_density", lambda x: tuple(torch.histogram(x, 6, range=(-3.0, 3.0), density=True)), (torch.randn(60),)),
    case("histogram_constant_data", lambda x: tuple(torch.histogram(x, 4)), (torch.full((3,), 2.0),)),
    case("histogram_empty", lambda x: tuple(torch.histogram(x, 4)), (torch.zeros(0),)),
    case("histogram_tensor_bins", lambda x, b: tuple(torch.histogram(x, b)),
         (torch.tensor([0.0, 0.5, 0.25, 2.0, 3.0, 3.0, -1.0, 3.5, nan, 1.0]), torch.tensor([0.0, 0.5, 2.0, 3.0]))),
    case("histogram_tensor_bins_weight_density", lambda x, b, w: tuple(torch.histogram(x, b, weight=w, density=True)),
         (torch.randn(3, 10), torch.tensor([-2.0, -0.5, 0.0, 0.1, 1.0, 2.5]), torch.rand(3, 10))),

    # histogramdd
    case("histogramdd", lambda x: tuple(torch.histogramdd(x, [3, 4])), (torch.randn(50, 2),)),
    case("histogramdd_range_weight", lambda x, w: tuple(torch.histogramdd(x, [2, 4], range=[0.0, 2.0, 0.0, 4.0], weight=w)),
         (torch.tensor([[0.0, 0.0], [1.0, 4.0], [2.0, 1.0], [0.5, 3.0], [3.0, 1.0], [1.0, 1.0]]), torch.arange(6.0))),
    case("histogramdd_int_bins_density", lambda x: tuple(torch.histogramdd(x, 3, density=True)), (torch.randn(2, 20, 3).double(),)),
    case("histogramdd_tensor_bins", lambda x, b0, b1: tuple(torch.histogramdd(x, [b0, b1])),
         (torch.rand(30, 2) * 2, torch.tensor([0.0, 0.5, 1.0, 2.0]), torch.tensor([0.0, 1.0, 2.0]))),

    # bincount (the length is max + 1 or minlength, known at run time)
    case("bincount", lambda x: torch.bincount(x), (torch.tensor([1, 2, 2, 5, 0, 2]),),
         more_args=[(torch.tensor([7, 0, 0, 1, 1, 0]),), (torch.tensor([0, 0, 0, 0, 0, 0]),)]),
    case("bincount_minlength", lambda x: torch.bincount(x, minlength=10), (torch.tensor([1, 2, 2, 5]),)),
    case("bincount_weights", lambda x, w: torch.bincount(x, w), (torch.tensor([3, 0, 3, 1]), torch.tensor([0.5, 1.0, -2.0, 4.0]))),
    case("bincount_weights_double", lambda x, w: torch.bincount(x, w, minlength=6),
         (torch.tensor([3, 0, 3, 1]), torch.tensor([0.5, 1.0, -2.0, 4.0]).double())),
    case("bincount_int_weights", lambda x, w: torch.bincount(x, w), (torch.tensor([3, 0, 3]), torch.tensor([2, 5, 7]))),
    case("bincount_int32", lambda x: torch.bincount(x), (torch.tensor([4, 4, 1], dtype=torch.int32),)),
    case("bincount_empty", lambda x: torch.bincount(x, minlength=3), (torch.zeros(0, dtype=torch.long),)),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['histc_edges', 'histc_half_refused', 'histogram_tensor_bins'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
