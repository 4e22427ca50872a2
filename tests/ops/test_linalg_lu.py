"""LU factorization, LU solves, linalg.solve and inverses
(src/symbolics/linalg_lu.cpp), through both frontends (TorchScript and
torch.export programs)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
la = torch.linalg


def wc(*shape, dtype=torch.float32):
    """A well-conditioned (diagonally dominated) random matrix batch."""
    n = shape[-1]
    return (torch.randn(*shape, dtype=torch.float64) + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def gen(*shape, dtype=torch.float32):
    """A random matrix batch (pivoting matters: no diagonal dominance)."""
    return torch.randn(*shape, dtype=dtype)


# a zero in the top-left corner: the first step must pivot
PIVOT = torch.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 1.0], [3.0, 0.5, -1.0]])
# rank 2: the third pivot is exactly zero (info = 3)
SINGULAR = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
# equal magnitudes in the pivot column: the first (LAPACK's choice) wins
TIES = torch.tensor([[1.0, 2.0, 0.0], [-1.0, 1.0, 1.0], [1.0, 0.0, 3.0]])

BIG = (9, 17)  # opsets for the large cases

CASES = optest.enable_pt2([
    # ---- LU factorization
    Case("lu_factor_3", lambda a: tuple(la.lu_factor(a)), (gen(3, 3),)),
    Case("lu_factor_1", lambda a: tuple(la.lu_factor(a)), (gen(1, 1),)),
    Case("lu_factor_batched_double", lambda a: tuple(la.lu_factor(a)), (gen(2, 3, 8, 8, dtype=torch.float64),)),
    Case("lu_factor_32", lambda a: tuple(la.lu_factor(a)), (gen(2, 32, 32),), opsets=BIG),
    Case("lu_factor_pivot", lambda a: tuple(la.lu_factor(a)), (PIVOT,)),
    Case("lu_factor_ties", lambda a: tuple(la.lu_factor(a)), (TIES,)),
    Case("lu_factor_tall", lambda a: tuple(la.lu_factor(a)), (gen(5, 3),)),
    Case("lu_factor_wide", lambda a: tuple(la.lu_factor(a)), (gen(2, 3, 5),)),
    Case("lu_factor_ex", lambda a: tuple(la.lu_factor_ex(a)), (torch.stack([gen(3, 3), SINGULAR, torch.zeros(3, 3)]),)),
    Case("lu_factor_ex_double", lambda a: tuple(la.lu_factor_ex(a)), (gen(4, 4, dtype=torch.float64),)),
    Case("torch_lu_infos", lambda a: tuple(torch.lu(a, get_infos=True)), (torch.stack([SINGULAR, PIVOT]),)),
    Case("torch_lu", lambda a: tuple(torch.lu(a)), (gen(2, 4, 4),)),
    Case("linalg_lu", lambda a: tuple(la.lu(a)), (gen(2, 5, 5),)),
    Case("linalg_lu_rect", lambda a: tuple(la.lu(a)), (gen(4, 6, dtype=torch.float64),)),
    Case("linalg_lu_tall", lambda a: tuple(la.lu(a)), (gen(3, 6, 4),)),
    Case("lu_unpack", lambda lu, p: tuple(torch.lu_unpack(lu, p)), tuple(la.lu_factor(gen(2, 4, 4)))),
    Case("lu_unpack_rect", lambda lu, p: tuple(torch.lu_unpack(lu, p)),
         tuple(la.lu_factor(gen(5, 3, dtype=torch.float64)))),
    Case("lu_unpack_pivots_only", lambda lu, p: torch.lu_unpack(lu, p, unpack_data=False)[0],
         tuple(la.lu_factor(gen(4, 4)))),
    Case("lu_unpack_data_only", lambda lu, p: torch.lu_unpack(lu, p, unpack_pivots=False)[1:],
         tuple(la.lu_factor(gen(4, 4)))),
    # ---- solves from an LU factorization
    Case("lu_solve", lambda lu, p, b: la.lu_solve(lu, p, b), (*la.lu_factor(wc(3, 3)), gen(3, 2))),
    Case("lu_solve_batched", lambda lu, p, b: la.lu_solve(lu, p, b),
         (*la.lu_factor(wc(2, 8, 8, dtype=torch.float64)), gen(2, 8, 3, dtype=torch.float64))),
    Case("lu_solve_broadcast", lambda lu, p, b: la.lu_solve(lu, p, b), (*la.lu_factor(wc(4, 4)), gen(3, 4, 2))),
    Case("lu_solve_adjoint", lambda lu, p, b: la.lu_solve(lu, p, b, adjoint=True),
         (*la.lu_factor(gen(2, 5, 5)), gen(2, 5, 2))),
    Case("lu_solve_right", lambda lu, p, b: la.lu_solve(lu, p, b, left=False),
         (*la.lu_factor(wc(2, 4, 4)), gen(2, 3, 4))),
    Case("lu_solve_right_adjoint", lambda lu, p, b: la.lu_solve(lu, p, b, left=False, adjoint=True),
         (*la.lu_factor(wc(4, 4, dtype=torch.float64)), gen(2, 4, dtype=torch.float64))),
    Case("lu_solve_old", lambda b, lu, p: torch.lu_solve(b, lu, p), (gen(2, 5, 1), *la.lu_factor(wc(2, 5, 5)))),
    # ---- linalg.solve / inv
    Case("solve_vector", lambda a, b: la.solve(a, b), (wc(3, 3), gen(3))),
    Case("solve_1", lambda a, b: la.solve(a, b), (wc(1, 1), gen(1, 2))),
    Case("solve_matrix_double", lambda a, b: la.solve(a, b), (wc(8, 8, dtype=torch.float64),
                                                              gen(8, 4, dtype=torch.float64))),
    Case("solve_batched_vector", lambda a, b: la.solve(a, b), (gen(2, 4, 4), gen(2, 4))),
    Case("solve_broadcast", lambda a, b: la.solve(a, b), (wc(2, 1, 3, 3), gen(4, 3, 2))),
    Case("solve_pivot", lambda a, b: la.solve(a, b), (PIVOT, gen(3, 2))),
    Case("solve_left_false", lambda a, b: la.solve(a, b, left=False), (gen(2, 4, 4), gen(2, 3, 4))),
    Case("solve_32", lambda a, b: la.solve(a, b), (wc(2, 32, 32), gen(2, 32, 5)), opsets=BIG),
    Case("solve_ex", lambda a, b: tuple(la.solve_ex(a, b)), (wc(2, 3, 3), gen(2, 3, 1))),
    Case("solve_ex_info", lambda a, b: la.solve_ex(a, b)[1], (torch.stack([SINGULAR, wc(3, 3)]), gen(2, 3))),
    Case("solve_ex_info_broadcast", lambda a, b: la.solve_ex(a, b)[1], (SINGULAR, gen(4, 3, 2))),
    Case("inv_3", lambda a: la.inv(a), (gen(3, 3),)),
    Case("inv_1", lambda a: la.inv(a), (gen(1, 1) + 2,)),
    Case("inv_batched_double", lambda a: la.inv(a), (wc(2, 2, 8, 8, dtype=torch.float64),)),
    Case("inv_pivot", lambda a: la.inv(a), (PIVOT,)),
    Case("inv_32", lambda a: la.inv(a), (wc(3, 32, 32),), opsets=BIG),
    Case("inverse", lambda a: torch.inverse(a), (wc(4, 4),)),
    Case("inv_empty_batch", lambda a: la.inv(a), (gen(0, 3, 3),)),
    Case("lu_factor_empty_batch", lambda a: tuple(la.lu_factor(a)), (gen(2, 0, 4, 4),)),
    Case("cholesky_empty_batch", lambda a: la.cholesky(a), (gen(0, 2, 2),)),
    Case("inv_ex", lambda a: tuple(la.inv_ex(a)), (wc(2, 5, 5),)),
    Case("inv_ex_info", lambda a: la.inv_ex(a)[1], (torch.stack([wc(3, 3), SINGULAR, torch.zeros(3, 3)]),)),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['solve_ex_info', 'solve_ex_info_broadcast', 'inv_ex_info'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
