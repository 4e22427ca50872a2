"""Miscellaneous math (src/symbolics/math.cpp)."""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=1.0):
    return torch.randn(*shape) * scale


def ri(*shape, lo=-5, hi=6, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


def axes(d, names):
    """CLI flags making the given input dims dynamic (the cases run at other sizes: TorchScript only)."""
    return ("--dynamic-axes", json.dumps(d, separators=(",", ":")), "--input-names", ",".join(names))


x34, y34, z34 = r(3, 4), r(3, 4), r(3, 4)
pos34 = torch.rand(3, 4) + 0.1
# Specials: zeros, infinities and NaN next to ordinary values.
# (Tiled past 64 elements: T2O_CHECK_META compares small values with at::equal, for which NaN != NaN.)
special = torch.tensor([[0.0, -0.0, 1.5, -2.0], [float("inf"), float("-inf"), float("nan"), 3.0]]).repeat(5, 4)
with_zeros = torch.tensor([[0.0, 1.0, -2.0, 0.5], [3.0, 0.0, -0.25, 2.0]])


class IsFloatingPoint(nn.Module):
    def forward(self, x):
        return x * float(x.is_floating_point())


class Conj(nn.Module):
    def forward(self, x):
        return torch.conj(x) + torch.conj_physical(x)


CASES = [
    # addcmul / addcdiv
    Case("addcmul", lambda a, b, c: torch.addcmul(a, b, c), (x34, y34, z34)),
    Case("addcmul_value", lambda a, b, c: torch.addcmul(a, b, c, value=-0.5), (x34, r(4), r(3, 1))),
    Case("addcmul_int", lambda a, b, c: torch.addcmul(a, b, c, value=3), (ri(3, 4), ri(3, 4), ri(4))),
    Case("addcmul_inplace", lambda a, b, c: (a * 1).addcmul_(b, c, value=2.0), (x34, y34, z34)),
    Case("addcdiv", lambda a, b, c: torch.addcdiv(a, b, c), (x34, y34, pos34)),
    Case("addcdiv_value", lambda a, b, c: torch.addcdiv(a, b, c, value=0.25), (x34, r(1, 4), pos34)),
    Case("addcdiv_inplace", lambda a, b, c: (a * 1).addcdiv_(b, c, value=-2), (x34, y34, pos34)),
    # lerp
    Case("lerp_scalar_low", lambda a, b: torch.lerp(a, b, 0.3), (x34, y34)),
    Case("lerp_scalar_high", lambda a, b: torch.lerp(a, b, 0.75), (x34, y34)),
    Case("lerp_tensor", lambda a, b, w: torch.lerp(a, b, w), (x34, y34, torch.rand(3, 4) * 1.4 - 0.2)),
    Case("lerp_tensor_broadcast", lambda a, b, w: torch.lerp(a, b, w), (x34, r(4), torch.rand(3, 1))),
    Case("lerp_inplace", lambda a, b: (a * 1).lerp_(b, 0.6), (x34, y34)),
    Case("lerp_double", lambda a, b, w: torch.lerp(a, b, w), (x34.double(), y34.double(), torch.rand(3, 4).double())),
    # cross products
    Case("cross_dim", lambda a, b: torch.cross(a, b, dim=1), (r(4, 3), r(4, 3))),
    Case("cross_neg_dim", lambda a, b: torch.cross(a, b, dim=-2), (r(2, 3, 5), r(2, 3, 5))),
    Case("cross_default_dim", lambda a, b: torch.cross(a, b), (r(4, 3, 3), r(4, 3, 3))),
    Case("cross_int", lambda a, b: torch.cross(a, b, dim=0), (ri(3, 2), ri(3, 2))),
    Case("linalg_cross", lambda a, b: torch.linalg.cross(a, b), (r(2, 4, 3), r(2, 4, 3))),
    Case("linalg_cross_dim_broadcast", lambda a, b: torch.linalg.cross(a, b, dim=1), (r(2, 3, 4), r(1, 3, 4))),
    # dim=None: PyTorch takes the first dim of size 3 at run time; a dynamic dim up to the example's
    # choice could change it (issue 43), dynamic dims after it cannot
    Case("cross_default_dim_dynamic_before", lambda a, b: torch.cross(a, b), (r(4, 3), r(4, 3)), opsets=(),
         error_below={11: "is dynamic", 17: "is dynamic"}, extra=axes({"a": [0], "b": [0]}, ["a", "b"]), pt2=False),
    Case("cross_default_dim_dynamic_after", lambda a, b: torch.cross(a, b), (r(3, 5), r(3, 5)), opsets=(11, 17),
         extra=axes({"a": [1], "b": [1]}, ["a", "b"]), pt2=False,
         more_args=[(r(3, 7), r(3, 7)), (r(3, 3), r(3, 3))]),
    # outer / ger
    Case("outer", lambda a, b: torch.outer(a, b), (r(3), r(5))),
    Case("ger", lambda a, b: torch.ger(a, b), (r(4), r(2))),
    Case("outer_int", lambda a, b: torch.outer(a, b), (ri(3), ri(4))),
    Case("outer_mixed", lambda a, b: torch.outer(a, b), (ri(3), r(4))),
    Case("outer_bool", lambda a, b: torch.outer(a, b),
         (torch.tensor([True, False, True]), torch.tensor([False, True]))),
    # tensordot
    Case("tensordot_int_dims", lambda a, b: torch.tensordot(a, b, dims=2), (r(2, 3, 4), r(3, 4, 5))),
    Case("tensordot_lists", lambda a, b: torch.tensordot(a, b, dims=([1, 0], [0, 2])), (r(3, 4, 5), r(4, 2, 3))),
    Case("tensordot_neg", lambda a, b: torch.tensordot(a, b, dims=([-1], [-2])), (r(2, 3), r(4, 3, 5))),
    Case("tensordot_zero", lambda a, b: torch.tensordot(a, b, dims=0), (r(2, 3), r(4))),
    Case("tensordot_full", lambda a, b: torch.tensordot(a, b, dims=([0, 1], [1, 0])), (r(3, 4), r(4, 3))),
    Case("tensordot_int", lambda a, b: torch.tensordot(a, b, dims=1), (ri(2, 3), ri(3, 2))),
    # einsum (Einsum from opset 12)
    Case("einsum_matmul", lambda a, b: torch.einsum("ij,jk->ik", a, b), (r(3, 4), r(4, 5)), min_opset=12,
         error_below={11: "supported from opset 12"}),
    Case("einsum_implicit", lambda a, b: torch.einsum("ij,jk", a, b), (r(3, 4), r(4, 5)), min_opset=12),
    Case("einsum_implicit_order", lambda a, b: torch.einsum("ba,ca", a, b), (r(3, 4), r(5, 4)), min_opset=12),
    Case("einsum_batch_ellipsis", lambda a, b: torch.einsum("...ij,...jk->...ik", a, b),
         (r(2, 3, 4), r(1, 4, 5)), min_opset=12),
    Case("einsum_implicit_ellipsis", lambda a: torch.einsum("...ii", a), (r(2, 3, 3),), min_opset=12),
    Case("einsum_spaces_trace", lambda a: torch.einsum("i i ->", a), (r(4, 4),), min_opset=12),
    Case("einsum_outer_sum", lambda a, b, c: torch.einsum("i,j,ij->i", a, b, c), (r(3), r(4), r(3, 4)), min_opset=12),
    Case("einsum_double", lambda a, b: torch.einsum("bij,bjk->bik", a, b), (r(2, 3, 4).double(), r(2, 4, 2).double()),
         min_opset=12),
    Case("einsum_int", lambda a, b: torch.einsum("bij,bjk->bik", a, b), (ri(2, 3, 4), ri(2, 4, 2)), min_opset=12),
    # distances
    Case("cdist", lambda a, b: torch.cdist(a, b), (r(5, 4), r(6, 4))),
    Case("cdist_double", lambda a, b: torch.cdist(a, b, p=1.5), (r(5, 4).double(), r(6, 4).double())),
    Case("cdist_batched", lambda a, b: torch.cdist(a, b), (r(2, 5, 3), r(2, 30, 3))),
    Case("cdist_broadcast_batch", lambda a, b: torch.cdist(a, b), (r(2, 5, 3), r(1, 4, 3))),
    Case("cdist_p1", lambda a, b: torch.cdist(a, b, p=1.0), (r(5, 4), r(6, 4))),
    Case("cdist_p3", lambda a, b: torch.cdist(a, b, p=3.0), (r(5, 4), r(6, 4))),
    Case("cdist_p0", lambda a, b: torch.cdist(a, b, p=0.0),
         (ri(5, 4, lo=0, hi=2).float(), ri(6, 4, lo=0, hi=2).float())),
    Case("cdist_pinf", lambda a, b: torch.cdist(a, b, p=float("inf")), (r(5, 4), r(6, 4))),
    Case("cdist_mm_mode", lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), (r(5, 4), r(6, 4))),
    Case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), (x34, y34)),
    Case("cosine_similarity_dim_eps", lambda a, b: F.cosine_similarity(a, b, dim=-1, eps=0.5),
         (r(2, 3, 4), r(2, 3, 4))),
    Case("cosine_similarity_broadcast", lambda a, b: F.cosine_similarity(a, b, dim=1), (r(2, 3, 4), r(3, 1))),
    # equal shapes in the example, b broadcast along dim at run time: the norms are over the broadcast shape
    Case("cosine_similarity_dynamic_broadcast", lambda a, b: F.cosine_similarity(a, b, dim=1), (r(3, 4), r(3, 4)),
         opsets=(9, 13, 17), extra=axes({"a": [1], "b": [1]}, ["a", "b"]), pt2=False,
         more_args=[(r(3, 6), r(3, 1)), (r(3, 5), r(3, 5))]),
    Case("cosine_similarity_small", lambda a, b: F.cosine_similarity(a, b, dim=0),
         (torch.tensor([1e-5, 0.0, 2e-6]), torch.tensor([1e-5, 3e-6, 0.0]))),
    Case("pairwise_distance", lambda a, b: F.pairwise_distance(a, b), (x34, y34)),
    Case("pairwise_distance_args", lambda a, b: F.pairwise_distance(a, b, p=1.0, eps=1e-3, keepdim=True),
         (r(2, 3, 4), r(3, 4))),
    Case("pairwise_distance_p3", lambda a, b: F.pairwise_distance(a, b, p=3.0), (x34, r(4))),
    Case("pairwise_distance_pinf", lambda a, b: F.pairwise_distance(a, b, p=float("inf")), (x34, y34)),
    # classification
    Case("isinf", torch.isinf, (special,), opsets=(9, 10, 13, 17)),
    Case("isinf_double", torch.isinf, (special.double(),), opsets=(9, 10, 17)),
    Case("isinf_int", torch.isinf, (ri(3, 4),), opsets=(9, 10, 17)),
    Case("isposinf", torch.isposinf, (special,), opsets=(9, 10, 17)),
    Case("isneginf", torch.isneginf, (special,), opsets=(9, 10, 17)),
    Case("isfinite", torch.isfinite, (special,)),
    Case("isfinite_int", torch.isfinite, (ri(3, 4),)),
    Case("nan_to_num", torch.nan_to_num, (special,)),
    Case("nan_to_num_args", lambda a: torch.nan_to_num(a, nan=1.5, posinf=100.0, neginf=-7.0), (special,)),
    Case("nan_to_num_posinf_only", lambda a: torch.nan_to_num(a, posinf=9.0), (special.double(),)),
    Case("nan_to_num_int", torch.nan_to_num, (ri(3, 4),)),
    Case("nan_to_num_inplace", lambda a: (a * 1).nan_to_num_(nan=-1.0), (special,)),
    Case("aminmax", lambda a: torch.aminmax(a), (x34,)),
    Case("aminmax_keepdim_all", lambda a: torch.aminmax(a, keepdim=True), (x34,)),
    Case("aminmax_dim", lambda a: torch.aminmax(a, dim=1), (r(2, 3, 4),)),
    Case("aminmax_neg_dim_keepdim", lambda a: torch.aminmax(a, dim=-3, keepdim=True), (r(2, 3, 4),)),
    Case("aminmax_int", lambda a: torch.aminmax(a, dim=0), (ri(3, 4),)),
    Case("aminmax_bool", lambda a: torch.aminmax(a, dim=1), (torch.rand(3, 4) > 0.5,)),
    Case("aminmax_scalar", lambda a: torch.aminmax(a.sum(), dim=0), (r(3),)),
    Case("is_floating_point", IsFloatingPoint(), (x34,), script=True),
    Case("is_floating_point_int", IsFloatingPoint(), (ri(3, 4),), script=True),
    Case("conj", Conj(), (x34,), script=True),
    Case("resolve_conj", lambda a: torch.resolve_conj(a) + 1, (x34,)),
    # binary functions
    Case("atan2", torch.atan2,
         (torch.cat([x34, torch.zeros(1, 4)]), torch.cat([y34, torch.tensor([[0.0, 1.0, -1.0, 0.0]])]))),
    Case("atan2_broadcast_int", torch.atan2, (ri(3, 4), ri(4))),
    Case("atan2_inplace", lambda a, b: (a * 1).atan2_(b), (x34, y34)),
    Case("atan2_double", torch.atan2, (x34.double(), y34.double())),
    Case("hypot", torch.hypot, (x34, r(4))),
    Case("hypot_inplace", lambda a, b: (a * 1).hypot_(b), (x34, y34)),
    Case("logaddexp", torch.logaddexp, (r(3, 4, scale=30.0), r(4, scale=30.0))),
    # (infinite outputs are mapped to finite numbers for the comparison)
    Case("logaddexp_inf", lambda a, b: torch.nan_to_num(torch.logaddexp(a, b), posinf=1e3, neginf=-1e3),
         (torch.tensor([float("inf"), float("-inf"), 1.0, float("-inf")]),
          torch.tensor([float("inf"), float("-inf"), float("-inf"), 2.0]))),
    Case("logaddexp_double", torch.logaddexp, (x34.double(), y34.double())),
    Case("logaddexp2", torch.logaddexp2, (r(3, 4, scale=30.0), r(3, 4, scale=30.0))),
    Case("xlogy", torch.xlogy, (with_zeros, pos34[:2])),
    Case("xlogy_nan", torch.xlogy, (torch.tensor([0.0, 0.0, 1.0]).repeat(30),
                                    torch.tensor([float("nan"), 2.0, float("nan")]).repeat(30))),
    Case("xlogy_scalar_other", lambda a: torch.xlogy(a, 3.0), (with_zeros,)),
    Case("xlogy_scalar_self", lambda b: torch.xlogy(2, b), (pos34,)),
    Case("xlogy_int", torch.xlogy, (ri(3, 4, lo=0, hi=3), ri(3, 4, lo=1, hi=5))),
    Case("xlogy_inplace", lambda a, b: (a * 1).xlogy_(b), (with_zeros, pos34[:2])),
    Case("special_xlogy", lambda a, b: torch.special.xlogy(a, b), (with_zeros, pos34[:2])),
    Case("special_xlog1py", lambda a, b: torch.special.xlog1py(a, b), (with_zeros, pos34[:2])),
    Case("special_xlog1py_scalar", lambda b: torch.special.xlog1py(0.5, b), (pos34,)),
    Case("special_entr", lambda a: torch.special.entr(a), (torch.cat([with_zeros.abs(), pos34]),)),
    Case("special_entr_negative", lambda a: torch.nan_to_num(torch.special.entr(a), neginf=-1e3),
         (torch.cat([with_zeros.repeat(1, 4), special]),)),
    Case("erfinv", torch.erfinv, (torch.rand(8, 10) * 1.98 - 0.99,)),
    Case("erfinv_central", torch.erfinv, (torch.rand(3, 4) * 1.4 - 0.7,)),
    Case("erfinv_edges", lambda a: torch.nan_to_num(torch.erfinv(a), posinf=100.0, neginf=-100.0),
         (torch.tensor([-1.0, 1.0, 1.5, -2.0, 0.0, 0.7, -0.7, 0.999, -0.9999, float("nan")]).repeat(7),)),
    Case("erfinv_double_inplace", lambda a: (a * 1).erfinv_(), (torch.rand(3, 4).double() * 1.8 - 0.9,)),
    Case("special_erfinv", lambda a: torch.special.erfinv(a), (torch.rand(3, 4) * 1.8 - 0.9,)),
    Case("special_ndtr", lambda a: torch.special.ndtr(a), (r(3, 4, scale=3.0),)),
    Case("heaviside", torch.heaviside, (with_zeros, r(2, 4))),
    Case("heaviside_scalar_values", lambda a, v: torch.heaviside(a, v), (with_zeros, torch.tensor(0.5))),
    Case("heaviside_int", torch.heaviside, (ri(3, 4), ri(4))),
    Case("copysign", torch.copysign, (x34, torch.tensor([[1.0, -1.0, 0.0, -0.0]]))),
    Case("copysign_scalar", lambda a: torch.copysign(a, -2.0), (x34,)),
    Case("copysign_scalar_neg_zero", lambda a: torch.copysign(a, -0.0), (x34,)),
    Case("copysign_int", torch.copysign, (ri(3, 4), ri(3, 4))),
    Case("copysign_inplace", lambda a, b: (a * 1).copysign_(b), (x34, y34)),
    # unary functions
    Case("sinc", torch.sinc, (torch.cat([with_zeros, r(2, 4)]),)),
    Case("sinc_double", torch.sinc, (x34.double(),)),
    Case("special_sinc", lambda a: torch.special.sinc(a), (r(3, 4),)),
    Case("sinc_int", torch.sinc, (ri(3, 4),)),
    Case("deg2rad", torch.deg2rad, (r(3, 4, scale=180.0),)),
    Case("rad2deg", torch.rad2deg, (x34,)),
    Case("rad2deg_double", torch.rad2deg, (x34.double(),)),
    Case("logit", torch.logit, (torch.rand(3, 4),)),
    Case("logit_double", lambda a: torch.logit(a, eps=0.2), (torch.rand(3, 4).double(),)),
    Case("logit_eps", lambda a: torch.logit(a, eps=0.1), (torch.tensor([[0.0, 0.05, 0.5, 0.95, 1.0]]),)),
    Case("special_logit", lambda a: torch.special.logit(a, 1e-3), (torch.rand(3, 4),)),
    Case("logit_inplace", lambda a: (a * 1).logit_(), (torch.rand(3, 4),)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
