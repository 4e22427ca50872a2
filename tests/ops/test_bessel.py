"""Bessel, modified Bessel and Airy functions (src/symbolics/bessel.cpp),
through both frontends (TorchScript and torch.export programs). Inputs cover
each branch of PyTorch's Cephes algorithms (the small-argument expansions,
the asymptotic forms and the boundaries between them), the special values
(0, -0, +-inf, NaN, negative arguments of y/k) and several shapes."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf, nan = float("inf"), float("nan")
S = torch.special

SPECIAL = [0.0, -0.0, inf, -inf, nan, 1e-6, -1e-6, 1e-5, 0.5, -0.5, 2.0, 2.09, -2.09, 5.0, -5.0, 8.0, -8.0, 1e3, -1e3]


def grid(lo, hi, steps=97, extra=()):
    return torch.cat([torch.linspace(lo, hi, steps), torch.tensor(list(extra))])


def case(name, fn, x, **kw):
    # nn.Sequential keeps the exact operator in the trace (torch.special.i0 records aten::special_i0)
    return Case(name, nn.Sequential(optest.Lambda(fn)), (x,), **kw)


# (name, function, small range, large range): values of each case stay of one
# magnitude, so the tolerance 1e-4 * (1 + |torch|) means something.
FUNCS = [
    ("i0", torch.i0, (-3, 3), (8, 80)),
    ("special_i0", S.i0, (-8.5, 8.5), (-80, -8)),
    ("i0e", S.i0e, (-10, 10), (8, 1e4)),
    ("i1", S.i1, (-3, 3), (-80, -8)),
    ("i1e", S.i1e, (-10, 10), (8, 1e4)),
    ("bessel_j0", S.bessel_j0, (-5.5, 5.5), (5, 300)),
    ("bessel_j1", S.bessel_j1, (-5.5, 5.5), (-300, -5)),
    ("bessel_y0", S.bessel_y0, (-1, 5.5), (5, 300)),
    ("bessel_y1", S.bessel_y1, (0.5, 5.5), (5, 300)),
    ("modified_bessel_i0", S.modified_bessel_i0, (-3, 3), (-80, 80)),
    ("modified_bessel_i1", S.modified_bessel_i1, (-3, 3), (-80, 80)),
    ("modified_bessel_k0", S.modified_bessel_k0, (-1, 4), (2, 80)),
    ("modified_bessel_k1", S.modified_bessel_k1, (0.3, 4), (2, 80)),
    ("scaled_modified_bessel_k0", S.scaled_modified_bessel_k0, (-1, 4), (2, 1e4)),
    ("scaled_modified_bessel_k1", S.scaled_modified_bessel_k1, (0.3, 4), (2, 1e4)),
    ("spherical_bessel_j0", S.spherical_bessel_j0, (-1, 1), (-300, 300)),
    ("airy_ai", S.airy_ai, (-2.5, 2.5), (-100, 110)),
]

cases = []
for name, fn, small, large in FUNCS:
    cases += [
        case(f"{name}_small", fn, grid(*small)),
        case(f"{name}_large", fn, grid(*large)),
        case(f"{name}_special", fn, torch.tensor(SPECIAL)),
        case(f"{name}_double", fn, torch.cat([grid(*small), grid(*large, extra=SPECIAL)]).double()),
    ]

cases += [
    case("i0_0d", torch.i0, torch.tensor(1.5), opsets=(9, 17)),
    case("i0_int", torch.i0, torch.arange(-5, 6), opsets=(9, 17)),
    case("i1e_batched", S.i1e, torch.randn(2, 3, 4) * 6, opsets=(9, 17)),
    case("bessel_j0_empty", S.bessel_j0, torch.zeros(0, 3), opsets=(9, 17)),
    case("bessel_y1_batched_double", S.bessel_y1, (torch.rand(3, 5) * 12).double(), opsets=(9, 17)),
    case("modified_bessel_k1_int", S.modified_bessel_k1, torch.arange(0, 6), opsets=(9, 17)),
    case("airy_ai_0d_double", S.airy_ai, torch.tensor(-7.25, dtype=torch.float64), opsets=(9, 17)),
    case("spherical_bessel_j0_batched", S.spherical_bessel_j0, torch.randn(4, 1, 3) * 4, opsets=(9, 17)),
]

CASES = optest.enable_pt2(cases)

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
