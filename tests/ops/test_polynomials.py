"""Orthogonal polynomials of torch.special (src/symbolics/polynomials.cpp),
through both frontends (TorchScript and torch.export programs): n as a
tensor (one n per element, broadcast with x), as a number (the n_scalar
overload) and x as a number (x_scalar); n from -2 (0) to 20, x inside and
outside the orthogonality interval, at its ends (the shortcuts), NaN/inf,
non-integer n (truncated), float32 and float64."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf, nan = float("inf"), float("nan")
S = torch.special


def column(values):
    return torch.tensor(values).reshape(-1, 1)


def row(values):
    return torch.tensor(values, dtype=torch.float32).reshape(1, -1)


N_ALL = row(list(range(-2, 21)))
N_SMALL = row(list(range(-1, 9)))
N_ODD = torch.tensor([[0.0, 1.0, 2.7, 3.2, -0.5, nan, inf, 6.0]])

# (name, function, its interval, points outside it): values of each case stay
# of one magnitude, so the tolerance 1e-4 * (1 + |torch|) means something.
FUNCS = [
    ("chebyshev_polynomial_t", S.chebyshev_polynomial_t, (-1, 1), [-1.6, -1.1, 1.02, 1.3]),
    ("chebyshev_polynomial_u", S.chebyshev_polynomial_u, (-1, 1), [-1.6, -1.1, 1.02, 1.3]),
    ("chebyshev_polynomial_v", S.chebyshev_polynomial_v, (-1, 1), [-1.6, -1.1, 1.02, 1.3]),
    ("chebyshev_polynomial_w", S.chebyshev_polynomial_w, (-1, 1), [-1.6, -1.1, 1.02, 1.3]),
    ("shifted_chebyshev_polynomial_t", S.shifted_chebyshev_polynomial_t, (0, 1), [-0.3, -0.05, 1.01, 1.2]),
    ("shifted_chebyshev_polynomial_u", S.shifted_chebyshev_polynomial_u, (0, 1), [-0.3, -0.05, 1.01, 1.2]),
    ("shifted_chebyshev_polynomial_v", S.shifted_chebyshev_polynomial_v, (0, 1), [-0.3, -0.05, 1.01, 1.2]),
    ("shifted_chebyshev_polynomial_w", S.shifted_chebyshev_polynomial_w, (0, 1), [-0.3, -0.05, 1.01, 1.2]),
    ("hermite_polynomial_h", S.hermite_polynomial_h, (-0.5, 0.5), [-2.5, -1.3, 1.7, 3.0]),
    ("hermite_polynomial_he", S.hermite_polynomial_he, (-1, 1), [-3.5, -2.2, 2.4, 4.0]),
    ("laguerre_polynomial_l", S.laguerre_polynomial_l, (0, 3), [-1.5, -0.4, 6.0, 9.0]),
    ("legendre_polynomial_p", S.legendre_polynomial_p, (-1, 1), [-1.6, -1.1, 1.02, 1.3]),
]

cases = []
for name, fn, (lo, hi), outside in FUNCS:
    inside = column(torch.linspace(lo, hi, 41).tolist() + [(lo + hi) / 2, lo + 1e-6, hi - 1e-6])
    two = lambda x, n, fn=fn: fn(x, n)  # noqa: E731
    per_element_n = torch.randint(0, 16, (5, 7))
    cases += [
        # every n from -2 to 20 at every x of the interval (and its ends)
        Case(f"{name}_grid", two, (inside, N_ALL)),
        Case(f"{name}_grid_double", two, (inside.double(), N_ALL.double())),
        # outside the interval, where the values grow: smaller n
        Case(f"{name}_outside", two, (column(outside), N_SMALL)),
        Case(f"{name}_outside_double", two, (column(outside).double(), N_SMALL.double())),
        # non-integer, negative, NaN and infinite n; NaN and infinite x
        Case(f"{name}_odd_n", two, (column([lo, hi, (lo + hi) / 2, nan, inf, -inf]), N_ODD)),
        # n per element (int64, promoted), not broadcast
        Case(f"{name}_n_per_element", two,
             (torch.rand(5, 7) * (hi - lo) + lo, per_element_n), opsets=(9, 13, 17)),
        # n a number (n_scalar), x a number (x_scalar)
        Case(f"{name}_n_scalar", lambda x, fn=fn: fn(x, 7), (torch.rand(3, 4) * (hi - lo) + lo,),
             opsets=(9, 13, 17)),
        Case(f"{name}_x_scalar", lambda n, fn=fn, x=lo + 0.3 * (hi - lo): fn(x, n),
             (torch.arange(0.0, 13.0).double(),), opsets=(9, 13, 17)),
    ]

cases += [
    Case("chebyshev_polynomial_t_0d", lambda x, n: S.chebyshev_polynomial_t(x, n),
         (torch.tensor(0.3), torch.tensor(9.0)), opsets=(9, 17)),
    Case("legendre_polynomial_p_empty", lambda x, n: S.legendre_polynomial_p(x, n),
         (torch.zeros(0, 3), torch.ones(1, 3)), opsets=(9, 17)),
    # PyTorch gives NaN above n = 128 (float32) / 512 (float64)
    Case("hermite_polynomial_he_limit", lambda x, n: S.hermite_polynomial_he(x, n),
         (torch.tensor([[0.01], [-0.02]]), torch.tensor([[3.0, 128.0, 129.0, 600.0]])), opsets=(9, 17)),
    Case("hermite_polynomial_h_limit_double", lambda x, n: S.hermite_polynomial_h(x, n),
         (torch.tensor([[0.001], [-0.002]]).double(), torch.tensor([[3.0, 512.0, 513.0]]).double()), opsets=(9, 17)),
    Case("chebyshev_polynomial_u_large_n", lambda x, n: S.chebyshev_polynomial_u(x, n),
         (torch.linspace(-0.99, 0.99, 9).reshape(-1, 1), torch.tensor([[50.0, 200.0]])), opsets=(9, 17)),
    Case("laguerre_polynomial_l_int_x", lambda x, n: S.laguerre_polynomial_l(x, n),
         (torch.arange(0, 4).reshape(-1, 1), torch.arange(0, 6).reshape(1, -1)), opsets=(9, 17)),
]

CASES = optest.enable_pt2(cases)

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
