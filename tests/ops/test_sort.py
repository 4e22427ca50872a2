"""Sorting and selection (src/symbolics/sort.cpp): sort, argsort, msort, topk,
kthvalue, median, nanmedian, mode, unique (_unique, _unique2, unique_dim,
unique_consecutive), bucketize, searchsorted."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def distinct(*shape, scale=3.0):
    """Random values without ties (sorting ties have no defined order in PyTorch)."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.randperm(n).float() - n / 2) * scale / n + torch.rand(n) * 0.01).reshape(shape)


def ints(*shape, high=5):
    return torch.randint(-high, high, shape)


class WithBuffers(nn.Module):
    def __init__(self, fn, **buffers):
        super().__init__()
        self.fn = fn
        for k, v in buffers.items():
            self.register_buffer(k, v)

    def forward(self, *args):
        return self.fn(self, *args)


x = distinct(3, 4, 5)
nan = float("nan")
O_TOPK = (9, 10, 11, 13, 17)

CASES = [
    # ---- sort / argsort / msort
    Case("sort", lambda x: torch.sort(x), (x,), opsets=O_TOPK),
    Case("sort_dim_descending", lambda x: torch.sort(x, 1, True), (x,), opsets=O_TOPK),
    Case("sort_neg_dim", lambda x: x.sort(dim=-2), (x,), opsets=O_TOPK),
    Case("sort_stable_ties", lambda x: torch.sort(x, dim=1, stable=True), (ints(3, 8, high=3).float(),), opsets=O_TOPK),
    Case("sort_stable_descending", lambda x: torch.sort(x, stable=True, descending=True), (ints(2, 9, high=2),),
         opsets=O_TOPK),
    Case("sort_int", lambda x: torch.sort(x, 0), (torch.randperm(7) - 3,), opsets=O_TOPK),
    Case("sort_int8", lambda x: torch.sort(x, 0, descending=True), ((torch.randperm(7) - 3).to(torch.int8),),
         opsets=(9, 11)),
    Case("sort_double", lambda x: torch.sort(x, -1), (distinct(2, 6).double(),), opsets=(9, 10, 11)),
    Case("argsort", lambda x: torch.argsort(x), (x,), opsets=O_TOPK),
    Case("argsort_dim_descending", lambda x: x.argsort(0, descending=True), (x,), opsets=O_TOPK),
    Case("argsort_stable", lambda x: torch.argsort(x, dim=-1, stable=True), (ints(4, 7, high=2),), opsets=O_TOPK),
    Case("msort", lambda x: torch.msort(x), (x,), opsets=O_TOPK),
    # ---- topk
    Case("topk", lambda x: torch.topk(x, 2), (x,), opsets=O_TOPK),
    Case("topk_dim_smallest", lambda x: torch.topk(x, 3, dim=1, largest=False), (x,), opsets=O_TOPK),
    Case("topk_unsorted", lambda x: torch.topk(x, 3, 0, True, False)[0].sort(0)[0], (distinct(6, 2),), opsets=O_TOPK),
    Case("topk_int", lambda x: x.topk(2, -1, False), (torch.randperm(9).reshape(3, 3),), opsets=O_TOPK),
    Case("topk_k_from_size", lambda x: torch.topk(x, x.size(1) // 2, 1), (x,), opsets=O_TOPK),
    # ---- kthvalue / median / nanmedian / mode
    Case("kthvalue", lambda x: torch.kthvalue(x, 2), (x,), opsets=O_TOPK),
    Case("kthvalue_dim_keepdim", lambda x: x.kthvalue(3, 0, keepdim=True), (x,), opsets=O_TOPK),
    Case("kthvalue_int", lambda x: torch.kthvalue(x, 1, -2), (torch.randperm(12).reshape(4, 3),), opsets=O_TOPK),
    Case("median_all", lambda x: torch.median(x), (x,), opsets=O_TOPK),
    Case("median_all_even", lambda x: x.median(), (distinct(6),), opsets=O_TOPK),
    Case("median_dim", lambda x: torch.median(x, 1), (x,), opsets=O_TOPK),
    Case("median_dim_keepdim", lambda x: x.median(-1, keepdim=True), (x,), opsets=O_TOPK),
    Case("median_int", lambda x: x.median(0), (torch.randperm(12).reshape(4, 3),), opsets=O_TOPK),
    Case("median_nan", lambda x: torch.median(x, 1),
         (torch.tensor([[1.0, nan, 2.0, nan], [4.0, 3.0, 2.0, 1.0], [nan, 0.5, 0.0, 1.0]]),), opsets=O_TOPK),
    Case("median_all_nan", lambda x: torch.median(x), (torch.tensor([1.0, nan, 2.0]),), opsets=(9, 17)),
    Case("nanmedian", lambda x: torch.nanmedian(x, 1),
         (torch.tensor([[1.0, nan, 2.0, nan, 5.0], [4.0, 3.0, 2.0, 1.0, 0.0], [nan, 0.5, 0.0, 1.0, nan]]),),
         min_opset=11, error_below={9: "supported from opset 11"}),
    Case("nanmedian_keepdim", lambda x: x.nanmedian(0, keepdim=True), (x,), min_opset=11),
    Case("nanmedian_all", lambda x: torch.nanmedian(x), (torch.tensor([[3.0, nan], [1.0, 2.0]]),), min_opset=11),
    Case("nanmedian_int", lambda x: torch.nanmedian(x, -1), (torch.randperm(12).reshape(3, 4),), min_opset=11),
    Case("mode", lambda x: torch.mode(x, 1), (torch.tensor([[3.0, 1, 3, 1, 2], [5, 5, 4, 4, 4], [0, 1, 2, 3, 4]]),),
         min_opset=11, error_below={9: "supported from opset 11"}),
    Case("mode_default_keepdim", lambda x: x.mode(keepdim=True), (ints(3, 4, 7, high=3),), min_opset=11),
    Case("mode_dim0", lambda x: torch.mode(x, 0), (ints(6, 5, high=2),), min_opset=11),
    Case("mode_bool", lambda x: torch.mode(x, 0), (ints(5, 3, high=2) > 0,), min_opset=11),
    # ---- unique
    Case("unique", lambda x: torch.unique(x), (ints(4, 5),), min_opset=11, error_below={9: "supported from opset 11"}),
    Case("unique_inverse_counts", lambda x: torch.unique(x, return_inverse=True, return_counts=True),
         (ints(3, 4).float(),), min_opset=11),
    Case("unique_inverse", lambda x: torch.unique(x, return_inverse=True), (ints(2, 3, 4),), min_opset=11),
    Case("unique_counts", lambda x: torch.unique(x, return_counts=True)[1], (ints(10),), min_opset=11),
    # sorted=False: PyTorch 2.x's CPU kernels return sorted values anyway (and the export sorts too);
    # 1.13's order is a hash order (shapes compared there)
    Case("unique_unsorted", lambda x: torch.unique(x, sorted=False, return_inverse=True, return_counts=True),
         (ints(10),), min_opset=11, check="values" if optest.TORCH_VERSION >= (2, 0) else "shape"),
    Case("unique_unsorted_float", lambda x: torch.unique(x, sorted=False, return_counts=True),
         (torch.tensor([3.0, 1.0, 2.0, 1.0, 3.0, -1.0, 7.5, 2.0]),), min_opset=11),
    Case("unique_bool", lambda x: torch.unique(x, return_counts=True), (ints(10) > 0,), min_opset=11),
    Case("unique_int32", lambda x: torch.unique(x, return_inverse=True), (ints(3, 3).int(),), min_opset=11),
    Case("_unique", lambda x: torch._unique(x, True, True), (ints(7),), min_opset=11),
    Case("unique_dim", lambda x: torch.unique(x, dim=1), (torch.tensor([[1, 2, 1, 2], [3, 4, 3, 0]]),), min_opset=11),
    Case("unique_dim_all", lambda x: torch.unique(x, return_inverse=True, return_counts=True, dim=0),
         (torch.tensor([[1.0, 2], [0, 1], [1, 2], [0, 0]]),), min_opset=11),
    Case("unique_consecutive", lambda x: torch.unique_consecutive(x), (torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]),),
         min_opset=11, error_below={9: "supported from opset 11"}),
    Case("unique_consecutive_all", lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True),
         (torch.tensor([[1.0, 1, 2], [2, 3, 3]]),), min_opset=11),
    Case("unique_consecutive_dim", lambda x: torch.unique_consecutive(x, return_counts=True, dim=1),
         (torch.tensor([[1, 1, 2, 2, 1], [3, 3, 4, 0, 3]]),), min_opset=11),
    Case("unique_consecutive_dim_inverse", lambda x: torch.unique_consecutive(x, return_inverse=True, dim=0),
         (torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]]),), min_opset=11),
    Case("unique_consecutive_bool", lambda x: torch.unique_consecutive(x, return_counts=True),
         (torch.tensor([True, True, False, True]),), min_opset=11),
    Case("unique_dim_consecutive", lambda x: torch.ops.aten.unique_dim_consecutive(x, 0, True, True),
         (torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]]),), min_opset=11),
    # ---- bucketize / searchsorted
    Case("bucketize", lambda x, b: torch.bucketize(x, b), (x, torch.tensor([-1.0, 0.0, 0.5, 2.0]))),
    Case("bucketize_right_int32", lambda x, b: torch.bucketize(x, b, out_int32=True, right=True),
         (ints(3, 4).float(), torch.tensor([-2.0, 0.0, 1.0, 3.0]))),
    Case("bucketize_int_values", lambda x, b: torch.bucketize(x, b), (ints(3, 4), torch.tensor([-2.0, 0.5, 3.0]))),
    Case("bucketize_nan", lambda x, b: torch.bucketize(x, b), (torch.tensor([nan, 0.5, 9.0]), torch.tensor([0.0, 1.0]))),
    Case("bucketize_const", WithBuffers(lambda m, x: torch.bucketize(x, m.b, right=True), b=torch.tensor([0, 1, 2])),
         (ints(5),)),
    Case("searchsorted", lambda s, x: torch.searchsorted(s, x), (torch.tensor([-1.0, 0.0, 0.5, 2.0]), x)),
    Case("searchsorted_right", lambda s, x: torch.searchsorted(s, x, right=True, out_int32=True),
         (torch.tensor([-2, 0, 1, 3]), ints(2, 5))),
    Case("searchsorted_side", lambda s, x: torch.searchsorted(s, x, side="right"),
         (torch.tensor([-2.0, 0.0, 1.0, 3.0]), ints(7).float())),
    Case("searchsorted_nd", lambda s, x: torch.searchsorted(s, x),
         (torch.sort(torch.randn(2, 3, 6))[0], torch.randn(2, 3, 4))),
    Case("searchsorted_sorter", lambda s, x, p: torch.searchsorted(s, x, sorter=p),
         (torch.tensor([3.0, -1.0, 2.0, 0.0]), torch.randn(5) * 2, torch.tensor([1, 3, 2, 0]))),
    Case("searchsorted_nd_sorter", lambda s, x, p: torch.searchsorted(s, x, sorter=p),
         (torch.tensor([[3.0, -1.0, 2.0], [0.0, 1.0, -1.0]]), torch.randn(2, 4), torch.tensor([[1, 2, 0], [2, 0, 1]])),
         min_opset=11),
    Case("searchsorted_nan", lambda s, x: torch.searchsorted(s, x), (torch.tensor([0.0, 1.0]), torch.tensor([nan, 0.5]))),
]

CASES = optest.needs_torch2(CASES, ['unique_unsorted_float'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
