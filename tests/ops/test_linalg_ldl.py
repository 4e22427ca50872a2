"""LDL^T factorization (Bunch-Kaufman, as LAPACK's sytrf) and its solve
(src/symbolics/linalg_ldl.cpp), through both frontends (TorchScript and
torch.export programs)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
la = torch.linalg


def sym(*shape, dtype=torch.float32):
    """A random symmetric (indefinite) matrix batch."""
    a = torch.randn(*shape, dtype=torch.float64)
    return (a + a.mT).to(dtype)


def spd_ish(*shape, dtype=torch.float32):
    """A symmetric, well-conditioned, indefinite matrix batch (for solves)."""
    n = shape[-1]
    signs = torch.tensor([(-1.0) ** i for i in range(n)], dtype=torch.float64)
    return (sym(*shape, dtype=torch.float64) + 2 * n * torch.diag(signs)).to(dtype)


# zero diagonal: every step takes a 2x2 pivot block
SWAP = torch.tensor([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 2.0, 0.0]])
# a small diagonal next to large off-diagonal entries: 2x2 blocks with an interchange (kp > k + 1)
MIXED = torch.tensor([[1e-3, 0.1, 5.0, 0.2], [0.1, 2.0, 0.3, 0.1], [5.0, 0.3, 1e-3, 0.4], [0.2, 0.1, 0.4, 3.0]])
# rank 2: a zero column appears (info = its index, 1-based)
SINGULAR = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]])
# the 1x1 pivot moves to the largest diagonal entry (kp = imax, a 1x1 block)
DIAG_SWAP = torch.tensor([[0.1, 1.0, 0.0], [1.0, 9.0, 0.5], [0.0, 0.5, -4.0]])

BIG = (9, 17)  # opsets for the large cases


def factor_solve(a, b):
    ld, piv = la.ldl_factor(a)
    return la.ldl_solve(ld, piv, b)


CASES = optest.enable_pt2([
    Case("ldl_factor_3", lambda a: tuple(la.ldl_factor(a)), (sym(3, 3),)),
    Case("ldl_factor_1", lambda a: tuple(la.ldl_factor(a)), (sym(1, 1),)),
    Case("ldl_factor_5_double", lambda a: tuple(la.ldl_factor(a)), (sym(5, 5, dtype=torch.float64),)),
    Case("ldl_factor_batched", lambda a: tuple(la.ldl_factor(a)), (sym(2, 3, 6, 6),)),
    Case("ldl_factor_24", lambda a: tuple(la.ldl_factor(a)), (sym(2, 24, 24, dtype=torch.float64),), opsets=BIG),
    Case("ldl_factor_swap", lambda a: tuple(la.ldl_factor(a)), (SWAP,)),
    Case("ldl_factor_mixed", lambda a: tuple(la.ldl_factor(a)), (torch.stack([MIXED, MIXED.flip(0, 1)]),)),
    Case("ldl_factor_diag_swap", lambda a: tuple(la.ldl_factor(a)), (DIAG_SWAP,)),
    Case("ldl_factor_lower_only", lambda a: tuple(la.ldl_factor(a)), (torch.randn(4, 4),)),
    Case("ldl_factor_hermitian", lambda a: tuple(la.ldl_factor(a, hermitian=True)), (sym(4, 4),)),
    Case("ldl_factor_ex", lambda a: tuple(la.ldl_factor_ex(a)),
         (torch.stack([sym(3, 3), SINGULAR, torch.zeros(3, 3)]),)),
    Case("ldl_factor_ex_ok", lambda a: tuple(la.ldl_factor_ex(a)), (sym(5, 5, dtype=torch.float64),)),
    Case("ldl_solve", lambda ld, p, b: la.ldl_solve(ld, p, b), (*la.ldl_factor(spd_ish(4, 4)), torch.randn(4, 2))),
    Case("ldl_solve_swap", lambda ld, p, b: la.ldl_solve(ld, p, b), (*la.ldl_factor(SWAP), torch.randn(4, 3))),
    Case("ldl_solve_mixed", lambda ld, p, b: la.ldl_solve(ld, p, b), (*la.ldl_factor(MIXED), torch.randn(4, 1))),
    Case("ldl_solve_batched_double", lambda ld, p, b: la.ldl_solve(ld, p, b),
         (*la.ldl_factor(spd_ish(2, 3, 5, 5, dtype=torch.float64)), torch.randn(2, 3, 5, 2, dtype=torch.float64))),
    Case("ldl_factor_solve", factor_solve, (torch.stack([spd_ish(6, 6), sym(6, 6)]), torch.randn(2, 6, 3))),
    Case("ldl_factor_solve_16", factor_solve, (spd_ish(16, 16, dtype=torch.float64),
                                               torch.randn(16, 4, dtype=torch.float64)), opsets=BIG),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
