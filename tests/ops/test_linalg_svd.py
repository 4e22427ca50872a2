"""SVD (src/symbolics/linalg_svd.cpp, one-sided Jacobi) and what builds on
it: pinv, matrix_rank, cond, nuclear_norm, lstsq. Singular vectors are unique
up to sign, so SVD cases compare S, the reconstruction U diag(S) Vh, the Gram
matrices U^T U and Vh Vh^T, and |U|, |Vh| where the values are distinct."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf = float("inf")


def r(*shape):
    return torch.randn(*shape)


def sym(*shape):
    a = torch.randn(*shape)
    return a + a.transpose(-2, -1)


def low_rank(m, n, k, batch=()):
    return torch.randn(*batch, m, k) @ torch.randn(*batch, k, n)


def svd_inv(full):
    def f(a):
        u, s, vh = torch.linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        rec = (u[..., :, :k] * s.unsqueeze(-2)) @ vh[..., :k, :]
        return s, rec, u.transpose(-2, -1) @ u, vh @ vh.transpose(-2, -1), u[..., :, :k].abs(), vh[..., :k, :].abs()
    return f


def svd_gram(a):
    """Rank-deficient: only the values, the reconstruction and orthonormality are unique."""
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return s, (u * s.unsqueeze(-2)) @ vh, u.transpose(-2, -1) @ u, vh @ vh.transpose(-2, -1)


def svd_legacy(some):
    def f(a):
        u, s, v = torch.svd(a, some=some)
        k = s.shape[-1]
        return (s, (u[..., :, :k] * s.unsqueeze(-2)) @ v[..., :, :k].transpose(-2, -1), u.transpose(-2, -1) @ u,
                v.transpose(-2, -1) @ v, v[..., :, :k].abs())
    return f


a53, a35, a44 = r(5, 3), r(3, 5), r(4, 4)
b243 = r(2, 4, 3)
s5 = sym(5, 5)
full_rank_tall = r(6, 3)

CASES = optest.enable_pt2([
    # SVD
    Case("svd_tall", svd_inv(False), (a53,)),
    Case("svd_tall_full", svd_inv(True), (a53,)),
    Case("svd_wide", svd_inv(False), (a35,)),
    Case("svd_wide_full_double", svd_inv(True), (a35.double(),)),
    Case("svd_square_batched", svd_inv(True), (r(2, 4, 4),)),
    Case("svd_batched_double", svd_inv(False), (r(3, 6, 5).double(),)),
    Case("svd_1x1", svd_inv(True), (torch.tensor([[-3.0]]),)),
    Case("svd_column", svd_inv(True), (r(4, 1),)),
    Case("svd_row", svd_inv(False), (r(1, 4).double(),)),
    Case("svd_rank_deficient", svd_gram, (low_rank(6, 5, 2),)),
    Case("svd_zero", svd_gram, (torch.zeros(3, 2),)),
    Case("svd_large", svd_inv(False), (r(4, 3) * 1e20,)),
    Case("svd_16x12_double", svd_inv(False), (r(16, 12).double(),)),
    Case("svd_legacy", svd_legacy(True), (a53,)),
    Case("svd_legacy_full", svd_legacy(False), (a35.double(),)),
    Case("svd_legacy_values", lambda a: tuple(torch.svd(a, compute_uv=False)), (b243,)),
    Case("svdvals", torch.linalg.svdvals, (a35,)),
    Case("_linalg_svd_values", lambda a: torch.ops.aten._linalg_svd(a, False, False), (b243,)),
    Case("_linalg_svd_full", lambda a: torch.ops.aten._linalg_svd(a, True, True)[1:2], (a35.double(),)),
    Case("svdvals_batched_double", torch.linalg.svdvals, (r(2, 3, 7, 4).double(),)),
    Case("svdvals_rank_deficient", torch.linalg.svdvals, (low_rank(5, 5, 3),)),
    # pinv, rank, cond, norms, lstsq
    Case("pinv", torch.linalg.pinv, (a53,)),
    Case("pinv_wide_double", torch.linalg.pinv, (a35.double(),)),
    Case("pinv_batched", torch.linalg.pinv, (b243,)),
    Case("pinv_rank_deficient", torch.linalg.pinv, (low_rank(5, 4, 2).double(),)),
    Case("pinv_atol_rtol", lambda a: torch.linalg.pinv(a, atol=0.5, rtol=0.1),
         (torch.diag(torch.tensor([3.0, 0.2, 1.0, 0.4])),)),
    Case("pinv_atol", lambda a: torch.linalg.pinv(a, atol=0.5), (torch.diag(torch.tensor([3.0, 0.2, -1.0])),)),
    Case("pinv_rcond", lambda a: torch.linalg.pinv(a, 0.2), (torch.diag(torch.tensor([3.0, 0.5, 1.0])),)),
    Case("pinv_rtol_tensor", lambda a, t: torch.linalg.pinv(a, rtol=t), (low_rank(4, 4, 2), torch.tensor(0.01))),
    Case("pinv_hermitian", lambda a: torch.linalg.pinv(a, hermitian=True), (s5,)),
    Case("pinv_hermitian_singular", lambda a: torch.linalg.pinv(a, hermitian=True),
         (torch.diag(torch.tensor([2.0, 0.0, -4.0])).double(),)),
    Case("pinverse", torch.pinverse, (a35,)),
    Case("pinverse_rcond", lambda a: torch.pinverse(a, rcond=0.3), (torch.diag(torch.tensor([3.0, 0.5, 1.0])),)),
    Case("matrix_rank", torch.linalg.matrix_rank, (low_rank(6, 5, 3),)),
    Case("matrix_rank_batched_double", torch.linalg.matrix_rank,
         (torch.stack([low_rank(4, 5, 1), low_rank(4, 5, 4), torch.zeros(4, 5)]).double(),)),
    Case("matrix_rank_tol", lambda a: torch.linalg.matrix_rank(a, tol=0.5),
         (torch.diag(torch.tensor([3.0, 0.2, 1.0, 0.4])),)),
    Case("matrix_rank_atol_rtol", lambda a: torch.linalg.matrix_rank(a, atol=0.3, rtol=0.1),
         (torch.diag(torch.tensor([3.0, 0.2, 1.0, 0.4])),)),
    Case("matrix_rank_rtol", lambda a: torch.linalg.matrix_rank(a, rtol=0.2),
         (torch.diag(torch.tensor([3.0, 0.2, 1.0, 0.4])),)),
    Case("matrix_rank_hermitian", lambda a: torch.linalg.matrix_rank(a, hermitian=True),
         (torch.diag(torch.tensor([3.0, 0.0, -1.0, 0.0])),)),
    Case("matrix_rank_tol_tensor", lambda a, t: torch.linalg.matrix_rank(a, t), (low_rank(5, 5, 2), torch.tensor(0.1))),
    Case("cond", torch.linalg.cond, (a44,)),
    Case("cond_tall_batched", torch.linalg.cond, (b243.double(),)),
    Case("cond_neg2", lambda a: torch.linalg.cond(a, -2), (a35,)),
    Case("cond_fro", lambda a: torch.linalg.cond(a, "fro"), (a44.double(),)),
    Case("cond_nuc", lambda a: torch.linalg.cond(a, "nuc"), (a44.double(),)),
    Case("cond_1", lambda a: torch.linalg.cond(a, 1), (a44.double(),)),
    Case("cond_neg1", lambda a: torch.linalg.cond(a, -1), (r(2, 3, 3).double(),)),
    Case("cond_inf", lambda a: torch.linalg.cond(a, inf), (a44.double(),)),
    Case("cond_neginf", lambda a: torch.linalg.cond(a, -inf), (a44.double(),)),
    Case("cond_singular", lambda a: torch.linalg.cond(a, 1), (torch.tensor([[1.0, 2.0], [2.0, 4.0]]),)),
    Case("nuclear_norm", torch.nuclear_norm, (a53,)),
    Case("nuclear_norm_keepdim", lambda a: torch.nuclear_norm(a, keepdim=True), (a35.double(),)),
    Case("nuclear_norm_dim", lambda a: torch.nuclear_norm(a, dim=(0, 2), keepdim=True), (r(3, 2, 4),)),
    Case("nuclear_norm_dim_rev", lambda a: torch.nuclear_norm(a, dim=(-1, 1)), (r(2, 5, 3).double(),)),
    # lstsq: torch.export cannot capture linalg_lstsq
    Case("lstsq", lambda a, b: torch.linalg.lstsq(a, b), (full_rank_tall, r(6, 2)), pt2=False),
    Case("lstsq_batched_double", lambda a, b: torch.linalg.lstsq(a, b), (r(2, 5, 3).double(), r(2, 5, 4).double()),
         pt2=False),
    Case("lstsq_square", lambda a, b: torch.linalg.lstsq(a, b).solution, (a44, r(4, 1)), pt2=False),
    Case("lstsq_gels", lambda a, b: torch.linalg.lstsq(a, b, driver="gels"), (full_rank_tall.double(), r(6, 2).double()),
         pt2=False),
    Case("lstsq_rank_deficient", lambda a, b: torch.linalg.lstsq(a, b)[::2], (low_rank(6, 4, 2).double(), r(6, 2).double()),
         pt2=False),
])

# (PyTorch 1.13's lstsq is not reproducible from one run to the next, which the
# meta check (T2O_CHECK_META) compares: 2.x only)
CASES = optest.needs_torch2(CASES, ['lstsq', 'lstsq_batched_double', 'lstsq_square', 'lstsq_gels',
                                    'lstsq_rank_deficient'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
