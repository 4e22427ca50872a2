"""Linear algebra (src/symbolics/linalg.cpp)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=1.0):
    return torch.randn(*shape) * scale


def ri(*shape, lo=-5, hi=6, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


m3 = r(3, 3)
batch = r(2, 4, 4)
x34 = r(3, 4)
x234 = r(2, 3, 4)
# Determinants of both signs (tiled past 64 results: T2O_CHECK_META compares small
# values with at::equal, for which NaN != NaN).
signed = torch.stack([torch.eye(3) * 2, torch.diag(torch.tensor([-1.0, 2.0, 3.0])), m3]).repeat(22, 1, 1)


def weight_norm(module, name="weight", dim=0):
    torch.manual_seed(0)
    return nn.utils.weight_norm(module, name=name, dim=dim)


CASES = [
    # determinants (Det from opset 11)
    Case("det", torch.det, (m3,), min_opset=11, error_below={9: "supported from opset 11"}),
    Case("linalg_det_batched", torch.linalg.det, (batch,), min_opset=11),
    Case("det_double", torch.det, (m3.double(),), min_opset=11),
    Case("logdet", torch.logdet, (signed,), min_opset=11, error_below={10: "supported from opset 11"}),
    Case("slogdet", torch.slogdet, (signed,), min_opset=11, error_below={9: "supported from opset 11"}),
    Case("slogdet_double", torch.linalg.slogdet, (signed.double(),), min_opset=11),
    Case("logdet_double", torch.logdet, (batch.double() @ batch.double().transpose(1, 2),), min_opset=11),
    Case("linalg_slogdet", torch.linalg.slogdet, (batch,), min_opset=11),
    # linalg_norm: vector and matrix cases
    Case("linalg_norm_default", lambda a: torch.linalg.norm(a), (x234,)),
    Case("linalg_norm_default_keepdim", lambda a: torch.linalg.norm(a, keepdim=True), (x234,)),
    Case("linalg_norm_dim", lambda a: torch.linalg.norm(a, dim=1), (x234,)),
    Case("linalg_norm_dims", lambda a: torch.linalg.norm(a, dim=(0, -1), keepdim=True), (x234,)),
    Case("linalg_norm_vector_ord", lambda a: torch.linalg.norm(a, 3.0), (r(6),)),
    Case("linalg_norm_vector_ord1_dim", lambda a: torch.linalg.norm(a, 1, dim=-1), (x234,)),
    Case("linalg_norm_vector_inf", lambda a: torch.linalg.norm(a, float("inf"), dim=0), (x234,)),
    Case("linalg_norm_vector_neginf", lambda a: torch.linalg.norm(a, -float("inf"), dim=2, keepdim=True), (x234,)),
    Case("linalg_norm_vector_zero", lambda a: torch.linalg.norm(a, 0, dim=1),
         (torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, -3.0]]),)),
    Case("linalg_norm_vector_neg", lambda a: torch.linalg.norm(a, -2, dim=1), (x34,)),
    Case("linalg_norm_fro", lambda a: torch.linalg.norm(a, "fro"), (x34,)),
    Case("linalg_norm_fro_dims", lambda a: torch.linalg.norm(a, "fro", dim=(2, 0), keepdim=True), (x234,)),
    Case("linalg_norm_matrix_1", lambda a: torch.linalg.norm(a, 1), (x34,)),
    Case("linalg_norm_matrix_neg1", lambda a: torch.linalg.norm(a, -1, dim=(1, 2)), (x234,)),
    Case("linalg_norm_matrix_inf", lambda a: torch.linalg.norm(a, float("inf"), dim=(-1, -2), keepdim=True), (x234,)),
    Case("linalg_norm_matrix_neginf", lambda a: torch.linalg.norm(a, -float("inf")), (x34,)),
    Case("linalg_norm_dtype", lambda a: torch.linalg.norm(a, dim=1, dtype=torch.float64), (x34,)),
    # nuclear and spectral norms: from the singular values (linalg_svd.cpp)
    Case("linalg_norm_nuc", lambda a: torch.linalg.norm(a, "nuc"), (x34,), pt2=True),
    Case("linalg_norm_2", lambda a: torch.linalg.norm(a, 2), (x34,), pt2=True),
    # linalg_matrix_norm
    Case("matrix_norm_default", lambda a: torch.linalg.matrix_norm(a), (x234,)),
    Case("matrix_norm_fro_keepdim", lambda a: torch.linalg.matrix_norm(a, "fro", keepdim=True), (x234,)),
    Case("matrix_norm_1", lambda a: torch.linalg.matrix_norm(a, 1), (x234,)),
    Case("matrix_norm_neg1_dims", lambda a: torch.linalg.matrix_norm(a, -1, dim=(0, 2)), (x234,)),
    Case("matrix_norm_inf_keepdim", lambda a: torch.linalg.matrix_norm(a, float("inf"), keepdim=True), (x234,)),
    Case("matrix_norm_neginf", lambda a: torch.linalg.matrix_norm(a, -float("inf"), dim=(-1, 0)), (x234,)),
    Case("matrix_norm_dtype", lambda a: torch.linalg.matrix_norm(a, 1, dtype=torch.float64), (x234,)),
    Case("matrix_norm_nuc", lambda a: torch.linalg.matrix_norm(a, "nuc"), (x234,), pt2=True),
    Case("matrix_norm_neg2_dims_keepdim", lambda a: torch.linalg.matrix_norm(a, -2, dim=(0, 2), keepdim=True),
         (x234.double(),), pt2=True),
    Case("matrix_norm_2_wide", lambda a: torch.linalg.matrix_norm(a, 2), (r(2, 3, 5),), pt2=True),
    # weight_norm
    Case("weight_norm_linear", weight_norm(nn.Linear(4, 5)), (x34,)),
    Case("weight_norm_conv_dim1", weight_norm(nn.Conv1d(3, 4, 2), dim=1), (x234,)),
    Case("weight_norm_last_dim", weight_norm(nn.Linear(4, 5), dim=-1), (x34,)),
    Case("weight_norm_no_dim", weight_norm(nn.Linear(4, 5), dim=None), (x34,)),
    # dim -2 counts from the end (issue 43: refused as out of range)
    Case("weight_norm_conv_dim_neg2", weight_norm(nn.Conv1d(3, 4, 2), dim=-2), (x234,)),
    Case("weight_norm_double", lambda v, g: torch._weight_norm(v, g, 0), (x34.double(), r(3, 1).double())),
    Case("weight_norm_inputs", lambda v, g: torch._weight_norm(v, g, 1), (x34, r(1, 4).abs())),
    # renorm
    Case("renorm", lambda a: torch.renorm(a, 2, 0, 1.0), (x34,)),
    Case("renorm_p1_dim", lambda a: torch.renorm(a, 1, -1, 2.5), (x234,)),
    Case("renorm_pinf", lambda a: torch.renorm(a, float("inf"), 1, 1.5), (x234,)),
    Case("renorm_p3", lambda a: torch.renorm(a, 3, 1, 1.2), (x34,)),
    Case("renorm_double", lambda a: torch.renorm(a, 3, 0, 1.0), (x34.double(),)),
    Case("renorm_inplace", lambda a: (a * 1).renorm_(2, 1, 0.5), (x34,)),
    # trace
    Case("trace", torch.trace, (x34,)),
    Case("trace_square", torch.trace, (m3,)),
    Case("trace_int", torch.trace, (ri(3, 3, dtype=torch.int32),)),
    Case("trace_double", torch.trace, (r(4, 2).double(),)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
