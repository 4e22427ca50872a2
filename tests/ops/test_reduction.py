"""Reductions (src/symbolics/reduction.cpp)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


def ri(*shape, lo=-9, hi=10, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


x = r(2, 3, 4)
x4 = r(2, 3, 4, 5)
xi = ri(2, 3, 4)
xi32 = ri(2, 3, 4, dtype=torch.int32)
xu8 = ri(2, 3, 4, lo=0, hi=9, dtype=torch.uint8)
xi8 = ri(2, 3, 4, dtype=torch.int8)
b = torch.rand(2, 3, 4) > 0.5
bt = torch.rand(2, 3, 4) > 0.05  # mostly True, for all()
xd = r(3, 4, dtype=torch.float64)
xh = r(3, 4, scale=1.0).half()
small = torch.rand(2, 3, 4) + 0.5  # for prod
v = torch.tensor([2.5])  # x[0] makes a 0-d tensor in the model
# ties along dims, for argmax/argmin's first occurrence
ties = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, -1.0], [5.0, 5.0, 5.0, 5.0]])
# NaN in some rows (more than 64 elements: the meta-run check compares small values exactly)
nan = r(70, 10)
nan[torch.rand(70, 10) < 0.05] = float("nan")
big = r(3, 5, scale=300.0)


def dyn(**axes):
    """--dynamic-axes for the named inputs: the sizes become run-time values."""
    import json
    return ("--dynamic-axes", json.dumps({k: list(v) for k, v in axes.items()}, separators=(",", ":")))



class ScriptedNorms(torch.nn.Module):
    """Scripted code calls aten::norm and aten::frobenius_norm directly
    (torch 2.x traces torch.norm as aten::linalg_vector_norm)."""

    def forward(self, a):
        return a.norm(2.0, [1]), a.norm(1), a.norm(3.0, [0, 2], True), torch.frobenius_norm(a, [0, 1], False)


CASES = [
    # ---- sum
    Case("sum_all", lambda a: a.sum(), (x,)),
    Case("sum_dim", lambda a: a.sum(1), (x,)),
    Case("sum_dim_neg", lambda a: a.sum(-1), (x,)),
    Case("sum_dims", lambda a: a.sum((0, 2)), (x,)),
    Case("sum_dims_keepdim", lambda a: a.sum((-1, 0), keepdim=True), (x,)),
    Case("sum_keepdim", lambda a: a.sum(1, keepdim=True), (x,)),
    Case("sum_dim_empty", lambda a: torch.sum(a, dim=[]), (x,)),
    Case("sum_dtype", lambda a: a.sum(dtype=torch.float64), (x,)),
    Case("sum_dim_dtype", lambda a: a.sum(1, dtype=torch.float64), (xi,)),
    Case("sum_int", lambda a: a.sum(), (xi,)),
    Case("sum_int32", lambda a: a.sum(0), (xi32,)),
    Case("sum_int8", lambda a: a.sum(1), (xi8,)),
    Case("sum_uint8", lambda a: a.sum(), (xu8,)),
    Case("sum_bool", lambda a: a.sum(), (b,)),
    Case("sum_bool_dim", lambda a: a.sum(-1, keepdim=True), (b,)),
    Case("sum_half", lambda a: a.sum(0), (xh,), atol_scale=1e-3),
    Case("sum_double", lambda a: a.sum(1), (xd,)),
    Case("sum_0d", lambda a: a[0].sum(), (v,)),
    Case("sum_0d_dim", lambda a: a[0].sum(0), (v,)),
    Case("sum_0d_int_keepdim", lambda a: a[0].sum(0, keepdim=True), (torch.tensor([3]),)),
    Case("mean_0d", lambda a: a[0].mean(), (v,)),
    Case("prod_0d", lambda a: a[0].prod(0), (v,)),
    Case("amax_0d", lambda a: a[0].amax(), (v,)),
    Case("min_0d", lambda a: a[0].min(), (v,)),
    Case("all_0d", lambda a: a[0].all(), (v,)),
    Case("var_0d_biased", lambda a: a[0].var(unbiased=False), (v,)),
    Case("logsumexp_0d", lambda a: torch.logsumexp(a[0], 0), (v,)),
    Case("count_nonzero_0d", lambda a: torch.count_nonzero(a[0]), (v,)),
    # ---- mean
    Case("mean_all", lambda a: a.mean(), (x,)),
    Case("mean_dim", lambda a: a.mean(-2), (x,)),
    Case("mean_dims_keepdim", lambda a: a.mean((1, 2), keepdim=True), (x4,)),
    Case("mean_dtype", lambda a: a.mean(dtype=torch.float64), (x,)),
    Case("mean_int_dtype", lambda a: a.mean(1, dtype=torch.float32), (xi,)),
    Case("mean_half", lambda a: a.mean(1), (xh,), atol_scale=1e-3),
    Case("mean_dim_none", lambda a: torch.mean(a, dim=None, keepdim=True), (x,)),
    # ---- prod
    Case("prod_all", lambda a: a.prod(), (small,)),
    Case("prod_dim", lambda a: a.prod(1), (small,)),
    Case("prod_dim_keepdim", lambda a: a.prod(-1, keepdim=True), (small,)),
    Case("prod_int", lambda a: a.prod(2), (ri(2, 3, 4, lo=-3, hi=4),)),
    Case("prod_bool", lambda a: a.prod(0), (b,)),
    Case("prod_dtype", lambda a: a.prod(dtype=torch.float64), (small,)),
    # ---- nansum / nanmean
    Case("nansum", torch.nansum, (nan,)),
    Case("nansum_dim", lambda a: torch.nansum(a, 1, keepdim=True), (nan,)),
    Case("nansum_int", lambda a: torch.nansum(a, 0), (xi,)),
    Case("nanmean", lambda a: torch.nanmean(a, 1), (nan,)),
    Case("nanmean_all", torch.nanmean, (nan,)),
    # ---- amax / amin
    Case("amax", lambda a: a.amax(1), (x,)),
    Case("amax_dims_keepdim", lambda a: a.amax((0, -1), keepdim=True), (x,)),
    Case("amax_all", lambda a: torch.amax(a, dim=[]), (x,)),
    Case("amax_int", lambda a: a.amax(0), (xi,)),
    Case("amax_uint8", lambda a: a.amax(0), (xu8,)),
    Case("amax_int8", lambda a: a.amax(-1), (xi8,)),
    Case("amax_bool", lambda a: a.amax(2), (b,)),
    Case("amin", lambda a: a.amin(-1), (x,)),
    Case("amin_int32", lambda a: a.amin((1, 2)), (xi32,)),
    Case("amin_bool", lambda a: a.amin(0, keepdim=True), (b,)),
    Case("amax_nan", lambda a: a.amax(1), (nan,)),
    # ---- max / min
    Case("max_all", lambda a: a.max(), (x,)),
    Case("max_all_int", lambda a: a.max(), (xi,)),
    Case("max_all_bool", lambda a: a.max(), (b,)),
    Case("min_all", lambda a: torch.min(a), (xi8,)),
    Case("max_dim", lambda a: a.max(1), (x,)),
    Case("max_dim_keepdim", lambda a: torch.max(a, -1, keepdim=True), (x,)),
    Case("max_dim_values", lambda a: a.max(0)[0], (x,)),
    Case("max_dim_indices", lambda a: a.max(2).indices, (x,)),
    Case("max_dim_int", lambda a: a.max(1), (xi,)),
    Case("max_dim_ties", lambda a: a.max(1), (ties,)),
    Case("max_dim_bool", lambda a: a.max(1), (b,)),
    Case("max_dim_uint8", lambda a: a.max(-1), (xu8,)),
    Case("max_dim_nan", lambda a: a.max(1), (nan,)),
    Case("min_dim_nan", lambda a: torch.min(a, 0, keepdim=True), (nan.t().contiguous(),)),
    Case("amin_nan", lambda a: a.amin(-1, keepdim=True), (nan,)),
    Case("argmax_nan", lambda a: a.argmax(1), (nan,)),
    Case("argmin_nan", lambda a: a.argmin(1, keepdim=True), (nan,)),
    Case("max_0d", lambda a: a[0].max(0), (v,)),
    Case("min_dim", lambda a: a.min(0), (x,)),
    Case("min_dim_keepdim", lambda a: torch.min(a, 1, True), (xi32,)),
    Case("min_dim_ties", lambda a: a.min(-1), (ties,)),
    Case("max_other", lambda a, b: torch.max(a, b), (x, r(4)), opsets=(9, 11, 12, 13, 17)),
    Case("max_other_int", lambda a, b: torch.max(a, b), (xi, xi.flip(0)), opsets=(9, 11, 12, 13, 17)),
    Case("max_other_mixed", lambda a, b: torch.max(a, b), (xi, x), opsets=(9, 11, 12, 13, 17)),
    Case("min_other_int8", lambda a, b: torch.min(a, b), (xi8, xi8.flip(1)), opsets=(9, 11, 12, 13, 17)),
    Case("min_other_int16", lambda a, b: torch.min(a, b), (xi8.short(), xi8.flip(1).short()),
         opsets=(9, 11, 12, 13, 17)),
    Case("min_other_bool", lambda a, b: torch.min(a, b), (b, bt), opsets=(9, 11, 12, 13, 17)),
    # ---- argmax / argmin
    Case("argmax", lambda a: a.argmax(), (x,)),
    Case("argmax_keepdim", lambda a: a.argmax(keepdim=True), (x,)),
    Case("argmax_dim", lambda a: a.argmax(1), (x,)),
    Case("argmax_dim_neg_keepdim", lambda a: torch.argmax(a, -1, keepdim=True), (x,)),
    Case("argmax_ties", lambda a: a.argmax(1), (ties,)),
    Case("argmax_ties_all", lambda a: a.argmax(), (ties,)),
    Case("argmax_int", lambda a: a.argmax(0), (xi,)),
    Case("argmax_uint8", lambda a: a.argmax(), (xu8,)),
    Case("argmax_0d", lambda a: a[0].argmax(), (v,)),
    Case("argmax_0d_dim", lambda a: a[0].argmax(0), (v,)),
    Case("argmin", lambda a: a.argmin(), (xi32,)),
    Case("argmax_double", lambda a: a.argmax(1), (xd,)),
    Case("argmax_int8", lambda a: a.argmax(1), (xi8,)),
    Case("max_dim_double", lambda a: a.max(0), (xd,)),
    Case("max_dim_int16", lambda a: a.max(0), (xi8.short(),)),
    Case("amax_double", lambda a: a.amax(0), (xd,)),
    Case("max_dim_half", lambda a: a.max(1), (xh,)),
    Case("amax_half", lambda a: a.amax(0), (xh,)),
    Case("argmax_half", lambda a: a.argmax(), (xh,)),
    Case("var_half", lambda a: a.var(1), (xh,), atol_scale=2e-3),
    Case("norm_half", lambda a: a.norm(), (xh,), atol_scale=2e-3),
    Case("any_half", lambda a: a.any(1), (xh,)),
    Case("argmin_dim", lambda a: a.argmin(-2), (x,)),
    Case("argmin_ties", lambda a: a.argmin(0, keepdim=True), (ties,)),
    # ---- any / all
    Case("any", lambda a: a.any(), (b,)),
    Case("any_dim", lambda a: a.any(1), (b,)),
    Case("any_dim_keepdim", lambda a: a.any(-1, keepdim=True), (b,)),
    Case("any_float", lambda a: (a * 0.01).any(1), (torch.tensor([[0.0, 0.0], [0.0, 0.5], [-0.3, 0.0]]),)),
    Case("any_int", lambda a: a.any(0), (ri(3, 4, lo=0, hi=2),)),
    Case("any_uint8", lambda a: a.any(), (xu8,)),
    Case("all", lambda a: a.all(), (bt,)),
    Case("all_dim", lambda a: a.all(2), (bt,)),
    Case("all_float", lambda a: (a * 0.1).all(1), (torch.tensor([[1.0, 0.5], [0.0, 0.5]]),)),
    Case("all_uint8_dim", lambda a: a.all(0), (xu8,)),
    Case("any_0d", lambda a: a[0].any(), (v,)),
    # ---- count_nonzero
    Case("count_nonzero", torch.count_nonzero, (xi,)),
    Case("count_nonzero_dim", lambda a: torch.count_nonzero(a, 1), (x.round(),)),
    Case("count_nonzero_dims", lambda a: torch.count_nonzero(a, (0, -1)), (b,)),
    # ---- var / std
    Case("var", lambda a: a.var(), (x,)),
    Case("var_biased", lambda a: a.var(unbiased=False), (x,)),
    Case("var_dim", lambda a: a.var(1), (x,)),
    Case("var_dims_keepdim", lambda a: a.var((0, 2), keepdim=True), (x,)),
    Case("var_dim_biased", lambda a: torch.var(a, -1, unbiased=False, keepdim=True), (x,)),
    Case("var_correction", lambda a: torch.var(a, 1, correction=2), (x,)),
    Case("var_correction_0", lambda a: torch.var(a, dim=None, correction=0), (x,)),
    Case("var_dim_none", lambda a: torch.var(a, dim=None, keepdim=True), (x,)),
    Case("var_double", lambda a: a.var(0), (xd,)),
    Case("std", lambda a: a.std(), (x,)),
    Case("std_biased", lambda a: a.std(unbiased=False), (x,)),
    Case("std_dim", lambda a: a.std(-1, keepdim=True), (x,)),
    Case("std_correction", lambda a: torch.std(a, (0, 1), correction=0), (x,)),
    Case("var_mean", lambda a: torch.var_mean(a), (x,)),
    Case("var_mean_dim", lambda a: torch.var_mean(a, 1, keepdim=True), (x,)),
    Case("var_mean_biased", lambda a: torch.var_mean(a, (0, 2), unbiased=False), (x,)),
    Case("var_mean_correction", lambda a: torch.var_mean(a, -1, correction=2), (x,)),
    Case("std_mean", lambda a: torch.std_mean(a), (x,)),
    Case("std_mean_dim", lambda a: torch.std_mean(a, 0, unbiased=False, keepdim=True), (x,)),
    Case("std_mean_correction", lambda a: torch.std_mean(a, dim=None, correction=0), (x,)),
    Case("dyn_var", lambda a: a.var(1), (x,), extra=dyn(a=[0, 1])),
    Case("dyn_var_all", lambda a: a.var(), (x,), extra=dyn(a=[2])),
    Case("dyn_std_mean", lambda a: torch.std_mean(a, (0, 2)), (x,), extra=dyn(a=[0, 2])),
    Case("dyn_mean", lambda a: a.mean(-1), (x,), extra=dyn(a=[2])),
    Case("dyn_argmax_all", lambda a: a.argmax(), (x,), extra=dyn(a=[0])),
    # ---- logsumexp
    Case("logsumexp", lambda a: torch.logsumexp(a, 1), (x,)),
    Case("logsumexp_dims_keepdim", lambda a: torch.logsumexp(a, (0, -1), keepdim=True), (x,)),
    Case("logsumexp_large", lambda a: torch.logsumexp(a, -1), (big,)),
    Case("logsumexp_int", lambda a: torch.logsumexp(a, 0), (xi,)),
    Case("logsumexp_inf", lambda a: torch.logsumexp(a, 1),
         (torch.tensor([[-1.0, float("-inf")], [1.0, float("-inf")], [500.0, 2.0]]),)),
    # ---- norm
    Case("norm", lambda a: a.norm(), (x,)),
    Case("norm_p1", lambda a: a.norm(p=1), (x,)),
    Case("norm_p3", lambda a: torch.norm(a, p=3), (x,)),
    Case("norm_dim", lambda a: a.norm(dim=1), (x,)),
    Case("norm_dim_keepdim", lambda a: torch.norm(a, 2, dim=(0, 2), keepdim=True), (x,)),
    Case("norm_p1_dim", lambda a: torch.norm(a, 1, dim=-1), (x,)),
    Case("norm_inf", lambda a: torch.norm(a, float("inf"), dim=1), (x,)),
    Case("norm_neg_inf", lambda a: torch.norm(a, float("-inf"), dim=1), (x,)),
    Case("norm_p0", lambda a: torch.norm(a, 0, dim=1), (x.round(),)),
    Case("norm_p_half", lambda a: torch.norm(a, 0.5, dim=0), (x,)),
    Case("norm_dtype", lambda a: torch.norm(a, 3, dtype=torch.float64), (x,)),
    Case("norm_dim_dtype", lambda a: torch.norm(a, 3, dim=1, dtype=torch.float64), (x,)),
    Case("norm_fro", lambda a: torch.norm(a, p="fro"), (x,)),
    Case("frobenius_norm_dim", lambda a: torch.norm(a, p="fro", dim=(1, 2)), (x,)),
    Case("frobenius_norm_keepdim", lambda a: torch.norm(a, p="fro", dim=(0, 1), keepdim=True), (x,)),
    Case("norm_0d", lambda a: a[0].norm(), (v,)),
    Case("norm_scripted", ScriptedNorms(), (x,), script=True),
    Case("linalg_vector_norm", lambda a: torch.linalg.vector_norm(a), (x,)),
    Case("linalg_vector_norm_keepdim", lambda a: torch.linalg.vector_norm(a, keepdim=True), (x,)),
    Case("linalg_vector_norm_dim", lambda a: torch.linalg.vector_norm(a, 3, dim=(0, -1)), (x,)),
    Case("linalg_vector_norm_inf", lambda a: torch.linalg.vector_norm(a, float("inf"), dim=1, keepdim=True), (x,)),
    Case("linalg_vector_norm_p0", lambda a: torch.linalg.vector_norm(a, 0), (x.round(),)),
    Case("linalg_vector_norm_p1", lambda a: torch.linalg.vector_norm(a, 1, dim=-1), (x,)),
    Case("linalg_vector_norm_dtype", lambda a: torch.linalg.vector_norm(a, dtype=torch.float64), (x,)),
    Case("linalg_vector_norm_0d", lambda a: torch.linalg.vector_norm(a[0], -2.5), (v,)),
    # ---- cumsum
    Case("cumsum", lambda a: a.cumsum(1), (x,), min_opset=11, error_below={9: "supported from opset 11"}),
    Case("cumsum_neg", lambda a: torch.cumsum(a, -1), (x,), min_opset=11),
    Case("cumsum_dtype", lambda a: torch.cumsum(a, 0, dtype=torch.float64), (x,), min_opset=11),
    Case("cumsum_int", lambda a: a.cumsum(2), (xi,), min_opset=11),
    Case("cumsum_int32", lambda a: a.cumsum(0), (xi32,), min_opset=11),
    Case("cumsum_bool", lambda a: a.cumsum(1), (b,), min_opset=11),
    Case("cumsum_uint8", lambda a: a.cumsum(1), (xu8,), min_opset=11),
    Case("cumsum_0d", lambda a: a[0].cumsum(0), (v,), min_opset=11),
    Case("cumsum_inplace", lambda a: a.clone().cumsum_(1), (x,), min_opset=11),
    # ---- cumprod
    Case("cumprod", lambda a: a.cumprod(1), (x,), pt2=True),
    # opset 26: one CumProd node
    Case("cumprod_26", lambda a: a.cumprod(1), (x,), opsets=(25, 26, 28), expect_ops={26: ("CumProd",), 28: ("CumProd",)},
         pt2=True),
    Case("cumprod_26_int", lambda a: a.cumprod(-1), (ri(3, 8, lo=-4, hi=5),), opsets=(26,),
         expect_ops={26: ("CumProd",)}),
    Case("cumprod_26_int64_wraps", lambda a: a.cumprod(0), (torch.tensor([3**20, 3**19, 3, -7, 11]),), opsets=(26,)),
    Case("cumprod_26_bool", lambda a: a.cumprod(2), (bt,), opsets=(26,)),
    Case("cumprod_26_half", lambda a: a.cumprod(1), (r(3, 6, scale=1.5).half(),), opsets=(26,)),
    Case("cumprod_26_dtype", lambda a: a.cumprod(1, dtype=torch.float64), (xi,), opsets=(26,)),
    Case("cumprod_26_nan_inf_zero", lambda a: a.cumprod(-1),
         (torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), 0.0, 3.0]]),), opsets=(26,)),
    Case("cumprod_nan_inf_zero", lambda a: a.cumprod(-1),
         (torch.tensor([[2.0, float("nan"), 0.0, 3.0], [2.0, float("inf"), 0.0, 3.0], [2.0, 0.0, float("inf"), 3.0]]),),
         pt2=True),
    Case("cumprod_int64_wraps", lambda a: a.cumprod(0), (torch.tensor([3**20, 3**19, 3, -7, 11]),), pt2=True),
    Case("cumprod_empty_dim", lambda a: a.cumprod(1), (torch.randn(3, 0),), pt2=True),
    Case("cumprod_zeros_negatives", lambda a: a.cumprod(-1),
         (torch.tensor([[1.5, -2.0, 0.5, 0.0, 3.0], [-1.0, -1.0, -2.0, 4.0, -0.5], [0.0, 2.0, -3.0, 1.0, 1.0]]),),
         min_opset=11),
    Case("cumprod_dim0", lambda a: torch.cumprod(a, 0), (r(6, 3, scale=1.5),)),
    Case("cumprod_int", lambda a: a.cumprod(1), (ri(3, 8, lo=-4, hi=5),)),
    Case("cumprod_int_large", lambda a: a.cumprod(0), (ri(12, lo=-20, hi=21),)),
    Case("cumprod_bool", lambda a: a.cumprod(2), (bt,)),
    Case("cumprod_dtype", lambda a: a.cumprod(1, dtype=torch.float64), (xi,)),
    Case("cumprod_0d", lambda a: a[0].cumprod(0), (v,)),
    Case("cumprod_inplace", lambda a: a.clone().cumprod_(0), (x,)),
    # ---- sum_to_size
    Case("sum_to_size", lambda a: a.sum_to_size(3, 1), (x,)),
    Case("sum_to_size_keep", lambda a: a.sum_to_size(2, 1, 4), (x,)),
    Case("sum_to_size_same", lambda a: a.sum_to_size(2, 3, 4), (x,)),
    Case("sum_to_size_int", lambda a: a.sum_to_size(1, 4), (xi,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
