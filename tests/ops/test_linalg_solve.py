"""Triangular and Cholesky solves and matrix functions
(src/symbolics/linalg_solve.cpp), through both frontends (TorchScript and
torch.export programs). The LU-based operators are in test_linalg_lu.py."""
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


def spd(*shape, dtype=torch.float32):
    """A symmetric positive definite batch: A A^T + n I."""
    n = shape[-1]
    a = torch.randn(*shape, dtype=torch.float64)
    return (a @ a.transpose(-1, -2) + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def tri(*shape, dtype=torch.float32):
    """A matrix whose triangles are both well-conditioned triangular matrices
    (the solvers must read only the one they are told to)."""
    return wc(*shape, dtype=dtype)


def lower_chol(*shape, dtype=torch.float32):
    return la.cholesky(spd(*shape, dtype=torch.float64)).to(dtype)


NOT_PD = torch.tensor([[4.0, 2.0, 0.0], [2.0, 1.0, 1.0], [0.0, 1.0, 3.0]])  # leading minor 2 is 0

BIG = (9, 17)  # opsets for the large cases

CASES = optest.enable_pt2([
    # ---- triangular solves (the other triangle holds values that must be ignored)
    Case("solve_triangular_upper", lambda a, b: la.solve_triangular(a, b, upper=True), (tri(4, 4), gen(4, 2))),
    Case("solve_triangular_lower_double", lambda a, b: la.solve_triangular(a, b, upper=False),
         (tri(2, 8, 8, dtype=torch.float64), gen(2, 8, 3, dtype=torch.float64))),
    Case("solve_triangular_right", lambda a, b: la.solve_triangular(a, b, upper=True, left=False),
         (tri(2, 4, 4), gen(2, 3, 4))),
    Case("solve_triangular_right_lower_unit",
         lambda a, b: la.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
         (gen(4, 4), gen(3, 4))),
    Case("solve_triangular_unit_broadcast", lambda a, b: la.solve_triangular(a, b, upper=True, unitriangular=True),
         (gen(3, 3), gen(2, 3, 3))),
    Case("solve_triangular_1", lambda a, b: la.solve_triangular(a, b, upper=False), (gen(1, 1) + 3, gen(1, 4))),
    Case("solve_triangular_32", lambda a, b: la.solve_triangular(a, b, upper=False), (tri(32, 32), gen(32, 4)),
         opsets=BIG),
    Case("triangular_solve", lambda b, a: tuple(torch.triangular_solve(b, a)), (gen(2, 3, 2), tri(3, 3))),
    Case("triangular_solve_lower_t", lambda b, a: tuple(torch.triangular_solve(b, a, upper=False, transpose=True)),
         (gen(4, 1, dtype=torch.float64), tri(2, 4, 4, dtype=torch.float64))),
    Case("triangular_solve_unit", lambda b, a: tuple(torch.triangular_solve(b, a, unitriangular=True)),
         (gen(3, 2), gen(3, 3))),
    # ---- Cholesky
    Case("cholesky_3", lambda a: la.cholesky(a), (spd(3, 3),)),
    Case("cholesky_1", lambda a: la.cholesky(a), (spd(1, 1),)),
    Case("cholesky_upper_double", lambda a: la.cholesky(a, upper=True), (spd(2, 8, 8, dtype=torch.float64),)),
    Case("cholesky_32", lambda a: la.cholesky(a), (spd(2, 32, 32),), opsets=BIG),
    Case("cholesky_lower_only", lambda a: la.cholesky(a), (torch.tril(spd(4, 4)) + torch.triu(gen(4, 4), 1),)),
    Case("cholesky_upper_only", lambda a: la.cholesky(a, upper=True),
         (torch.triu(spd(4, 4)) + torch.tril(gen(4, 4), -1),)),
    Case("cholesky_ex", lambda a: tuple(la.cholesky_ex(a)), (spd(2, 5, 5),)),
    Case("cholesky_ex_info", lambda a: la.cholesky_ex(a)[1],
         (torch.stack([spd(3, 3), NOT_PD, -torch.eye(3), torch.zeros(3, 3)]),)),
    Case("cholesky_solve", lambda b, l: torch.cholesky_solve(b, l), (gen(4, 2), lower_chol(4, 4))),
    Case("cholesky_solve_upper_broadcast", lambda b, u: torch.cholesky_solve(b, u, upper=True),
         (gen(3, 5, 2, dtype=torch.float64), lower_chol(5, 5, dtype=torch.float64).mT.contiguous())),
    Case("cholesky_inverse", lambda l: torch.cholesky_inverse(l), (lower_chol(2, 4, 4),)),
    Case("cholesky_inverse_upper", lambda u: torch.cholesky_inverse(u, upper=True),
         (lower_chol(8, 8, dtype=torch.float64).mT.contiguous(),)),
    # ---- matrix functions
    Case("matrix_power_neg", lambda a: la.matrix_power(a, -2), (wc(2, 3, 3),)),
    Case("matrix_power_0", lambda a: la.matrix_power(a, 0), (gen(2, 3, 3),)),
    Case("matrix_power_1", lambda a: la.matrix_power(a, 1), (gen(3, 3),)),
    Case("matrix_power_3", lambda a: la.matrix_power(a, 3), (gen(3, 3, dtype=torch.float64),)),
    Case("matrix_power_13", lambda a: la.matrix_power(a, 13), (gen(2, 4, 4) / 4,)),
    Case("matrix_power_int", lambda a: la.matrix_power(a, 6), (torch.randint(-2, 3, (3, 3)),)),
    # (pt2 records aten::matrix_power, an alias the .pt2 frontend does not map yet)
    Case("matrix_power_neg_1", lambda a: torch.matrix_power(a, -1), (wc(4, 4, dtype=torch.float64),)),
    Case("matrix_exp_small", lambda a: la.matrix_exp(a), (gen(3, 3) * 0.1,)),
    Case("matrix_exp", lambda a: la.matrix_exp(a), (gen(4, 4),)),
    Case("matrix_exp_scaled", lambda a: la.matrix_exp(a), (gen(2, 3, 3) * 3,)),
    Case("matrix_exp_double", lambda a: la.matrix_exp(a), (gen(2, 6, 6, dtype=torch.float64) * 2,)),
    Case("matrix_exp_mixed_norms", lambda a: la.matrix_exp(a),
         (torch.stack([gen(3, 3) * 0.01, gen(3, 3) * 2, torch.zeros(3, 3), -5 * torch.eye(3)]),)),
    Case("matrix_exp_large", lambda a: la.matrix_exp(a), (gen(3, 3, dtype=torch.float64) * 10,)),
    Case("matrix_exp_nan", lambda a: la.matrix_exp(a), (torch.tensor([[1.0, float("nan")], [0.0, 1.0]]),)),
    Case("matrix_exp_empty_batch", lambda a: la.matrix_exp(a), (gen(0, 3, 3),)),
    Case("matrix_exp_1", lambda a: torch.matrix_exp(a), (gen(2, 1, 1),)),
    Case("matrix_exp_32", lambda a: la.matrix_exp(a), (gen(32, 32, dtype=torch.float64) / 4,), opsets=BIG),
    Case("multi_dot", lambda a, b, c: la.multi_dot([a, b, c]), (gen(3, 5), gen(5, 2), gen(2, 4))),
    Case("multi_dot_vectors", lambda a, b, c, d: la.multi_dot([a, b, c, d]),
         (gen(6), gen(6, 2), gen(2, 7), gen(7))),
    Case("multi_dot_two", lambda a, b: la.multi_dot([a, b]), (gen(3, 4, dtype=torch.float64),
                                                             gen(4, dtype=torch.float64))),
    Case("chain_matmul", lambda a, b, c: torch.chain_matmul(a, b, c), (gen(2, 8), gen(8, 3), gen(3, 5))),
    Case("linalg_vander", lambda x: la.vander(x), (gen(4),)),
    Case("linalg_vander_n", lambda x: la.vander(x, N=6), (gen(2, 3, dtype=torch.float64),)),
    Case("linalg_vander_int", lambda x: la.vander(x), (torch.tensor([1, -2, 3, 0], dtype=torch.int32),)),
    Case("vander", lambda x: torch.vander(x), (gen(5),)),
    Case("vander_increasing", lambda x: torch.vander(x, N=3, increasing=True), (gen(4, dtype=torch.float64),)),
    Case("vander_int", lambda x: torch.vander(x, N=4), (torch.tensor([2, -1, 0, 5]),)),
    Case("vander_1", lambda x: torch.vander(x, N=1), (gen(3),)),
    Case("vecdot", lambda x, y: la.vecdot(x, y), (gen(2, 5), gen(5))),
    Case("vecdot_dim", lambda x, y: la.vecdot(x, y, dim=0), (gen(4, 3, dtype=torch.float64),
                                                             gen(4, 1, dtype=torch.float64))),
    Case("tensorinv", lambda a: la.tensorinv(a, ind=1), (wc(6, 6).reshape(6, 2, 3),)),
    Case("tensorinv_2", lambda a: la.tensorinv(a), (wc(4, 4, dtype=torch.float64).reshape(2, 2, 4),)),
    Case("tensorsolve", lambda a, b: la.tensorsolve(a, b), (wc(6, 6).reshape(2, 3, 6), gen(2, 3))),
    Case("tensorsolve_dims", lambda a, b: la.tensorsolve(a, b, dims=(0,)),
         (wc(6, 6).reshape(6, 2, 3), gen(2, 3))),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['matrix_exp_nan'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
