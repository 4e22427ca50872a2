"""Rearranging elements (src/symbolics/rearrange.cpp): flip, fliplr/ud, roll,
rot90, tril/triu, diagonal(_copy), unfold(_copy), as_strided(_copy), repeat_interleave,
movedim (moveaxis), numpy_T, mT, mH (adjoint), tensor_split,
unsafe_split_with_sizes, broadcast_tensors, atleast_Nd, narrow_copy,
_shape_as_tensor, _reshape_from_tensor."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.onnx.operators

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0):
    return torch.randn(*shape) * scale


def ri(*shape, high=10):
    return torch.randint(-high, high, shape)


class WithBuffers(nn.Module):
    def __init__(self, fn, **buffers):
        super().__init__()
        self.fn = fn
        for k, v in buffers.items():
            self.register_buffer(k, v)

    def forward(self, *args):
        return self.fn(self, *args)


x = r(3, 4, 5)

CASES = [
    # ---- flip / roll / rot90
    Case("flip", lambda x: torch.flip(x, [0, 2]), (x,), opsets=(9, 10, 17)),
    Case("flip_neg", lambda x: x.flip(-1), (x,), opsets=(9, 10, 17)),
    Case("flip_int", lambda x: x.flip([0, 1]), (ri(3, 4),), opsets=(9, 10, 17)),
    Case("fliplr", torch.fliplr, (x,), opsets=(9, 10, 17)),
    Case("flipud", torch.flipud, (r(5),), opsets=(9, 10, 17)),
    Case("roll", lambda x: torch.roll(x, 1, 0), (x,)),
    Case("roll_multi", lambda x: torch.roll(x, (-2, 7), (1, -1)), (x,)),
    Case("roll_flat", lambda x: torch.roll(x, 5), (x,)),
    Case("roll_zero", lambda x: x.roll(4, 1), (x,)),
    Case("rot90", lambda x: torch.rot90(x), (x,), opsets=(9, 10, 17)),
    Case("rot90_k2", lambda x: torch.rot90(x, 2, [1, 2]), (x,), opsets=(9, 10, 17)),
    Case("rot90_k3_neg", lambda x: torch.rot90(x, -1, [-1, 0]), (x,), opsets=(9, 10, 17)),
    Case("rot90_k0", lambda x: torch.rot90(x, 4), (x,)),
    # ---- tril / triu
    Case("tril", torch.tril, (x,), opsets=(9, 11, 13, 14, 17)),
    Case("tril_diag", lambda x: torch.tril(x, 2), (r(4, 6),), opsets=(9, 11, 13, 14, 17)),
    Case("tril_neg_diag_int", lambda x: x.tril(-1), (ri(2, 5, 3),), opsets=(9, 11, 14, 17)),
    Case("triu", torch.triu, (x,), opsets=(9, 11, 13, 14, 17)),
    Case("triu_diag", lambda x: torch.triu(x, 1), (r(6, 4),), opsets=(9, 11, 14, 17)),
    Case("triu_neg_diag_bool", lambda x: x.triu(-2), (r(5, 5) > 0,), opsets=(9, 11, 14, 17)),
    Case("triu_int8", lambda x: x.triu(), (ri(3, 3).to(torch.int8),), opsets=(9, 14)),
    Case("tril_inplace", lambda x: (x * 1).tril_(1), (r(3, 3),), opsets=(9, 14)),
    Case("triu_run_time_diag", lambda x, y: torch.triu(x, y.size(0) - 4), (r(4, 5), r(5)), opsets=(9, 14)),
    # ---- diagonal
    Case("diagonal", torch.diagonal, (r(4, 5),)),
    Case("diagonal_offset", lambda x: torch.diagonal(x, 2), (r(4, 5),)),
    Case("diagonal_neg_offset_dims", lambda x: torch.diagonal(x, -1, 2, 0), (x,)),
    Case("diagonal_offset_past_the_end", lambda x: torch.diagonal(x, 7), (r(4, 5),)),
    Case("diagonal_int_neg", lambda x: torch.diagonal(x, -1), (ri(5, 3),)),
    Case("diagonal_bool", lambda x: torch.diagonal(x > 0, 1), (r(3, 4),)),
    # dynamic axes: the diagonal's length comes from the run-time sizes from opset 10
    Case("diagonal_dynamic", lambda x: torch.diagonal(x, 1, 1, 2), (r(2, 3, 4),), opsets=(10, 13, 17),
         extra=("--dynamic-axes", '{"x":[0,1,2]}', "--input-names", "x"),
         more_args=[(r(3, 5, 2),), (r(1, 4, 4),), (r(2, 1, 6),)]),
    Case("diagonal_dynamic_neg", lambda x: torch.diagonal(x, -2), (r(5, 3),), opsets=(10, 17),
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"), more_args=[(r(3, 6),), (r(2, 2),)]),
    Case("diagonal_dims", lambda x: x.diagonal(0, -1, 1), (x,)),
    Case("diagonal_int", lambda x: x.diagonal(1), (ri(3, 3),)),
    Case("diagonal_copy", lambda x: torch.diagonal_copy(x, 1, 1, 2), (x,)),
    # ---- unfold / as_strided (im2col: test_fold.py)
    Case("unfold", lambda x: x.unfold(1, 2, 1), (x,)),
    Case("unfold_step", lambda x: x.unfold(-1, 2, 2), (x,)),
    Case("unfold_whole", lambda x: x.unfold(0, 3, 5), (x,)),
    Case("unfold_copy", lambda x: torch.unfold_copy(x, 2, 3, 1), (x,)),
    Case("as_strided", lambda x: x.as_strided((3, 3), (4, 1)), (r(4, 4),)),
    Case("as_strided_offset", lambda x: torch.as_strided(x, (2, 2, 2), (1, 5, 2), 3), (x,)),
    Case("as_strided_copy", lambda x: torch.as_strided_copy(x, (4, 2), (2, 1)), (r(10),)),
    # ---- repeat_interleave
    Case("repeat_interleave_int", lambda x: x.repeat_interleave(2, 1), (x,)),
    Case("repeat_interleave_int_flat", lambda x: torch.repeat_interleave(x, 3), (r(2, 3),)),
    Case("repeat_interleave_int_neg_dim", lambda x: x.repeat_interleave(2, dim=-1), (ri(2, 3),)),
    Case("repeat_interleave_run_time_int", lambda x, y: x.repeat_interleave(y.size(0), 0), (r(2, 3), r(3))),
    Case("repeat_interleave_tensor", lambda x, r: x.repeat_interleave(r, 1), (x, torch.tensor([1, 0, 3, 2])),
         min_opset=11, error_below={9: "needs opset 11"}),
    Case("repeat_interleave_tensor_flat", lambda x, r: torch.repeat_interleave(x, r), (r(2, 2), torch.tensor([2, 1, 1, 3])),
         min_opset=11),
    Case("repeat_interleave_tensor_single", lambda x, r: x.repeat_interleave(r, 0), (r(3, 2), torch.tensor([2]))),
    Case("repeat_interleave_const", WithBuffers(lambda m, x: x.repeat_interleave(m.reps, dim=0), reps=torch.tensor([2, 0, 1])),
         (r(3, 2),)),
    Case("repeat_interleave_repeats_only", lambda r: torch.repeat_interleave(r), (torch.tensor([1, 3, 0, 2]),), min_opset=11),
    Case("repeat_interleave_repeats_only_const", WithBuffers(lambda m, x: torch.repeat_interleave(m.reps) + x,
                                                             reps=torch.tensor([2, 1])), (ri(3),)),
    # ---- permutations
    Case("movedim", lambda x: torch.movedim(x, 0, 2), (x,)),
    Case("moveaxis_submodule", nn.Sequential(optest.Lambda(lambda x: torch.moveaxis(x, (0, 1), (2, 0)))), (x,)),
    Case("movedim_lists", lambda x: torch.movedim(x, (0, -1), (-1, 1)), (r(2, 3, 4, 5),)),
    Case("moveaxis", lambda x: torch.moveaxis(x, [1], [0]), (x,)),
    Case("numpy_T", lambda x: x.T, (x,)),
    Case("numpy_T_2d", lambda x: x.T, (r(3, 2),)),
    Case("mT", lambda x: x.mT, (x,)),
    Case("mH", lambda x: x.mH, (x,)),
    Case("adjoint", lambda x: x.adjoint(), (r(3, 2),)),
    # ---- splitting, broadcasting
    Case("tensor_split_sections", lambda x: torch.tensor_split(x, 3, 1), (x,)),
    Case("tensor_split_sections_uneven", lambda x: x.tensor_split(3, dim=-1), (x,)),
    Case("tensor_split_indices", lambda x: torch.tensor_split(x, [1, 4], dim=2), (x,)),
    Case("tensor_split_indices_neg_empty", lambda x: torch.tensor_split(x, [-1, 1, 9]), (r(5, 2),)),
    Case("tensor_split_tensor", WithBuffers(lambda m, x: torch.tensor_split(x, m.idx, 1), idx=torch.tensor([1, 3])), (x,)),
    Case("tensor_split_tensor_sections", WithBuffers(lambda m, x: torch.tensor_split(x, m.n), n=torch.tensor(2)), (x,)),
    Case("unsafe_split_with_sizes", lambda x: torch.ops.aten.unsafe_split_with_sizes(x, [1, 3], 1), (x,)),
    Case("broadcast_tensors", lambda x, y, z: torch.broadcast_tensors(x, y, z), (r(3, 1, 5), r(4, 1), ri(5))),
    Case("broadcast_tensors_same", lambda x, y: torch.broadcast_tensors(x, y), (r(2, 3), r(2, 3))),
    # ---- atleast_Nd
    # (0-d tensors are made inside the model: x.sum())
    Case("atleast_1d", lambda x: torch.atleast_1d(x.sum()), (r(3),)),
    Case("atleast_1d_noop", lambda x: torch.atleast_1d(x), (r(3),)),
    Case("atleast_2d", lambda x: torch.atleast_2d(x), (r(4),)),
    Case("atleast_2d_0d", lambda x: torch.atleast_2d(x.sum()), (r(3),)),
    Case("atleast_3d_1d", lambda x: torch.atleast_3d(x), (r(4),)),
    Case("atleast_3d_2d", lambda x: torch.atleast_3d(x), (r(2, 4),)),
    Case("atleast_3d_0d", lambda x: torch.atleast_3d(x.sum()), (r(3),)),
    Case("atleast_3d_seq", lambda x, y, z: torch.atleast_3d((x.sum(), y, z)), (r(2), r(3, 2), x)),
    Case("atleast_2d_seq", lambda x, y: torch.atleast_2d((x, y)), (r(3), ri(3, 2))),
    # ---- narrow_copy, shape_as_tensor, reshape_from_tensor
    Case("narrow_copy", lambda x: x.narrow_copy(1, 1, 2), (x,)),
    Case("narrow_copy_neg_start", lambda x: torch.narrow_copy(x, -1, -3, 2), (x,)),
    Case("narrow_copy_run_time", lambda x, y: x.narrow_copy(0, y.size(0) - 2, y.size(0) - 1), (x, r(2)),
         opsets=(10, 17)),
    Case("shape_as_tensor", lambda x: torch.onnx.operators.shape_as_tensor(x), (x,)),
    Case("reshape_from_tensor", lambda x, s: torch.onnx.operators.reshape_from_tensor_shape(x, s),
         (x, torch.tensor([4, 15]))),
    Case("reshape_from_shape_of", lambda x, y: torch.onnx.operators.reshape_from_tensor_shape(
        x, torch.onnx.operators.shape_as_tensor(y)), (x, r(6, 10))),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
