"""Indexing (src/symbolics/indexing.cpp): index, index_put, index_add/copy/fill,
masked_fill/scatter/select, gather, scatter, scatter_add, scatter_reduce,
take, nonzero, nonzero_numpy, argwhere, select/slice/diagonal_scatter."""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0):
    return torch.randn(*shape) * scale


def ri(*shape, high=10):
    return torch.randint(-high, high, shape)


def L(*v):
    return torch.tensor(v, dtype=torch.long)


def axes(d, names):
    """CLI flags making the given input dims dynamic (the cases run at other sizes: TorchScript only)."""
    return ("--dynamic-axes", json.dumps(d, separators=(",", ":")), "--input-names", ",".join(names))


class WithBuffers(nn.Module):
    """fn(self, *args) with constant tensors registered as buffers (exported as initializers)."""

    def __init__(self, fn, **buffers):
        super().__init__()
        self.fn = fn
        for k, v in buffers.items():
            self.register_buffer(k, v)

    def forward(self, *args):
        return self.fn(self, *args)


def put(fn):
    """In-place assignment on a copy of the first argument."""

    def f(x, *args):
        y = x * 1
        fn(y, *args)
        return y

    return f


class ScatterAtRunTime(nn.Module):
    """slice_scatter / select_scatter at a position read from tensor data."""

    def forward(self, x, s, t, i):
        return torch.slice_scatter(x, s, 1, int(i[0]), None, 2), torch.select_scatter(x, t, 2, int(i[1]))


x = r(3, 4, 5)


class StaticCacheUpdate(nn.Module):
    """transformers' StaticCache update: the new keys written at cache_position = arange(past, past + seq)."""

    def forward(self, cache, new, past):
        position = torch.arange(past, past + new.shape[2])
        return cache.index_copy(2, position, new)


TENSOR_SCATTER = {24: ("TensorScatter",), 28: ("TensorScatter",)}
O_PUT = (9, 11, 13, 16, 17)

# Scatter indices along dim 1 of a [3, 4, 5] tensor (with duplicates), and a smaller one.
sc_idx = torch.randint(0, 4, (3, 6, 5))
sc_small = torch.randint(0, 4, (2, 3, 4))

CASES = [
    # ---- aten::index
    Case("index_dim0", lambda x, i: x[i], (x, L(0, 2, -1, 1))),
    Case("index_dim1", lambda x, i: x[:, i], (x, L(3, -4, 0))),
    Case("index_last", lambda x, i: x[..., i], (x, L(4, 0))),
    Case("index_2d_index", lambda x, i: x[:, i], (x, L(0, 1, 3, 2, 1, 0).reshape(2, 3))),
    Case("index_two_adjacent_front", lambda x, i, j: x[i, j], (x, L(0, 2, -1), L(1, 3, 0))),
    Case("index_two_adjacent_middle", lambda x, i, j: x[:, i, j], (x, L(0, 2, -1), L(1, 4, 0))),
    Case("index_two_apart", lambda x, i, j: x[i, :, j], (x, L(0, 2), L(1, -1))),
    Case("index_broadcast", lambda x, i, j: x[i[:, None], j], (x, L(0, 2), L(1, 3, 0))),
    Case("index_three", lambda x, i, j, k: x[i, j, k], (x, L(0, 2), L(1, 3), L(4, 0))),
    Case("index_const", WithBuffers(lambda m, x: x[:, m.i], i=L(2, 0, 1)), (x,)),
    Case("index_4d_apart", lambda x, i, j: x[:, i, :, j], (r(2, 3, 4, 5), L(0, 2), L(1, 4))),
    Case("index_int_tensor", lambda x, i: x[i], (ri(5, 3), L(4, 0, 0))),
    Case("index_bool_values", lambda x, i: x[i], (r(4, 2) > 0, L(3, 1))),
    # (0-d index tensors are made inside the model: i[0].)
    Case("index_0d", lambda x, i: torch.ops.aten.index(x, [None, i[0]]), (x, L(-2))),
    Case("index_0d_pair", lambda x, i, j: torch.ops.aten.index(x, [i[0], None, j[0]]), (x, L(1), L(3))),
    Case("index_mask_full", lambda x: x[x > 0], (x,)),
    Case("index_mask_dim0", lambda x, m: x[m], (x, torch.tensor([True, False, True]))),
    Case("index_mask_dim1", lambda x, m: x[:, m], (x, torch.tensor([False, True, True, False]))),
    Case("index_mask_2d_trailing", lambda x, m: x[:, m], (x, r(4, 5) > 0)),
    Case("index_mask_and_int", lambda x, m, j: x[m, :, j], (x, torch.tensor([True, False, True]), L(4, 0))),
    Case("index_mask_uint8", lambda x, m: x[m], (x, torch.tensor([1, 0, 1], dtype=torch.uint8))),
    # ---- aten::index_put
    Case("index_put_dim0", put(lambda y, i, v: y.__setitem__(i, v)), (x, L(2, 0), r(2, 4, 5)), opsets=O_PUT),
    Case("index_put_scalar", put(lambda y, i: y.__setitem__(i, 7.5)), (x, L(1, -1)), opsets=O_PUT),
    # (Traced `y[:, i] = v` writes through a slice view of y, which the
    # functionalization pass does not propagate yet; aten.index_put with None
    # entries is the same operator call without the view.)
    Case("index_put_dim1_broadcast", lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v), (x, L(3, 0), r(5)),
         opsets=O_PUT),
    Case("index_put_two_apart", lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v),
         (x, L(0, 2), L(1, -1), r(2, 4)), opsets=O_PUT),
    Case("index_put_two_middle", lambda x, i, j, v: torch.ops.aten.index_put(x, [None, i, j], v),
         (x, L(0, 2), L(1, 4), r(3, 2)), opsets=O_PUT),
    Case("index_put_two_middle_accumulate", lambda x, i, j, v: torch.ops.aten.index_put(x, [None, i, j], v, True),
         (x, L(0, 2, 0), L(1, 4, 1), r(3, 3)), opsets=O_PUT),
    Case("index_put_bool_tensor", lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v), (r(3, 4) > 0, L(3, 0), r(3, 2) > 0),
         opsets=O_PUT),
    Case("index_put_mask_scalar", put(lambda y: y.__setitem__(y > 0, 0.0)), (x,), opsets=O_PUT),
    Case("index_put_mask_dim1", lambda x, m, v: torch.ops.aten.index_put(x, [None, m], v),
         (x, torch.tensor([False, True, True, False]), torch.tensor(-1.0)), opsets=O_PUT),
    # Traced assignments through views (functionalized into *_scatter + index_put).
    Case("setitem_dim1", put(lambda y, i, v: y.__setitem__((slice(None), i), v)), (x, L(3, 0), r(5)), opsets=O_PUT),
    Case("setitem_two_apart", put(lambda y, i, j, v: y.__setitem__((i, slice(None), j), v)),
         (x, L(0, 2), L(1, -1), r(2, 4)), opsets=O_PUT),
    Case("setitem_slice_and_index", put(lambda y, i, v: y.__setitem__((slice(1, 3), i), v)),
         (x, L(3, 0), r(2, 2, 5)), opsets=O_PUT),
    Case("setitem_slice", put(lambda y, v: y.__setitem__((slice(None), slice(1, 3)), v)), (x, r(3, 2, 5))),
    Case("setitem_select_scalar", put(lambda y: y.__setitem__(1, 0.5)), (x,)),
    Case("setitem_step_slice", put(lambda y, v: y.__setitem__((Ellipsis, slice(0, None, 2)), v)), (x, r(3, 4, 3)),
         opsets=(10, 17)),
    Case("setitem_mask_dim1", put(lambda y, m: y.__setitem__((slice(None), m), -1.0)),
         (x, torch.tensor([False, True, True, False])), opsets=O_PUT),
    Case("index_put_mask_dim1_values", lambda x, m, v: torch.ops.aten.index_put(x, [None, m], v),
         (x, torch.tensor([False, True, True, False]), r(2, 5)), opsets=O_PUT),
    Case("index_put_mask_values", put(lambda y: y.__setitem__(y > 0, y[y > 0] * 2)), (x,), opsets=O_PUT),
    Case("index_put_mask_row_values", put(lambda y, m, v: y.__setitem__(m, v)),
         (r(4, 3), torch.tensor([True, False, True, True]), r(3)), opsets=O_PUT),
    Case("index_put_accumulate", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
         (x, L(0, 2, 0, -1), r(4, 4, 5)), opsets=O_PUT),
    Case("index_put_accumulate_two", lambda x, i, j, v: x.index_put((i, j), v, accumulate=True),
         (x, L(0, 2, 0), L(1, 1, 1), r(3, 5)), opsets=O_PUT),
    Case("index_put_accumulate_int", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
         (ri(5, 3), L(1, 1, 4), ri(3, 3)), opsets=O_PUT),
    Case("index_put_inplace_accumulate", put(lambda y, i, v: y.index_put_((i,), v, accumulate=True)),
         (r(6), L(0, 5, 0, 0), r(4)), opsets=O_PUT),
    Case("index_put_0d_indices", lambda x, i, j, v: torch.ops.aten.index_put(x, [i[0], None, j[0]], v),
         (x, L(1), L(-1), r(4)), opsets=O_PUT),
    Case("index_put_0d_accumulate", lambda x, i, v: torch.ops.aten.index_put(x, [i[0]], v, True),
         (x, L(2), r(4, 5)), opsets=O_PUT),
    Case("index_put_impl", put(lambda y, i, v: torch.ops.aten._index_put_impl_(y, [i], v, True, False)),
         (r(5), L(0, 4, 0), r(3)), opsets=O_PUT),
    Case("index_put_int_values", put(lambda y, i, v: y.__setitem__(i, v)), (ri(4, 3), L(3, 0), ri(2, 3)),
         opsets=O_PUT),
    # ---- index_add / index_copy / index_fill
    Case("index_add", lambda x, i, s: x.index_add(1, i, s), (x, L(0, 3, 0), r(3, 3, 5)), opsets=(9, 11, 16, 17)),
    Case("index_add_alpha_neg_dim", lambda x, i, s: x.index_add(-1, i, s, alpha=2.5), (x, L(4, 4, 1), r(3, 4, 3)),
         opsets=(9, 11, 16, 17)),
    Case("index_add_int", lambda x, i, s: torch.index_add(x, 0, i, s), (ri(4, 3), L(1, 1), ri(2, 3)),
         opsets=(9, 11, 16, 17)),
    Case("index_add_inplace", put(lambda y, i, s: y.index_add_(0, i, s)), (x, L(2, 1), r(2, 4, 5)),
         opsets=(9, 16)),
    Case("index_copy", lambda x, i, s: x.index_copy(1, i, s), (x, L(3, 0), r(3, 2, 5))),
    # opset 24: a consecutive index (a static KV cache's update) is one TensorScatter
    Case("index_copy_consecutive", lambda c, s: c.index_copy(2, torch.tensor([3, 4, 5]), s),
         (r(2, 3, 8, 4), r(2, 3, 3, 4)), opsets=(23, 24, 28), expect_ops=TENSOR_SCATTER, pt2=True),
    Case("index_copy_consecutive_dim_from_end", lambda c, s: c.index_copy(-2, torch.tensor([5, 6, 7]), s),
         (r(2, 8, 4), r(2, 3, 4)), opsets=(24,), expect_ops={24: ("TensorScatter",)}, pt2=True),
    Case("index_copy_consecutive_int", lambda c, s: c.index_copy(1, torch.tensor([0, 1]), s),
         (ri(2, 5, 3), ri(2, 2, 3)), opsets=(24,), expect_ops={24: ("TensorScatter",)}),
    Case("index_copy_not_consecutive_24", lambda c, s: c.index_copy(2, torch.tensor([5, 1, 2]), s),
         (r(2, 3, 8, 4), r(2, 3, 3, 4)), opsets=(24,)),
    Case("index_copy_static_cache", StaticCacheUpdate(), (r(2, 3, 10, 4), r(2, 3, 2, 4), torch.tensor(4)),
         opsets=(24, 28), expect_ops=TENSOR_SCATTER, pt2=False,
         extra=("--dynamic-axes", '{"new":[2]}', "--input-names", "cache,new,past"),
         more_args=[(r(2, 3, 10, 4), r(2, 3, 5, 4), torch.tensor(0)), (r(2, 3, 10, 4), r(2, 3, 1, 4), torch.tensor(9))]),
    Case("index_copy_dim0_inplace", put(lambda y, i, s: y.index_copy_(0, i, s)), (r(5, 2), L(4, 1, 2), r(3, 2))),
    Case("index_fill", lambda x, i: x.index_fill(1, i, -2.0), (x, L(0, 3))),
    Case("index_fill_neg", lambda x, i: x.index_fill(-1, i, 5), (ri(3, 4), L(-1, 0, 0))),
    Case("index_fill_tensor_value", lambda x, i, v: x.index_fill(0, i, v[0]), (x, L(1), torch.tensor([3.5]))),
    Case("index_fill_inplace", put(lambda y, i: y.index_fill_(2, i, 0.0)), (x, L(4, 2))),
    # ---- masked_fill / masked_select / masked_scatter
    Case("masked_fill", lambda x: x.masked_fill(x > 1, -1.0), (x,)),
    Case("masked_fill_broadcast", lambda x, m: x.masked_fill(m, 2.0), (x, r(4, 1) > 0)),
    Case("masked_fill_tensor_value", lambda x, v: x.masked_fill(x < 0, v[0]), (x, torch.tensor([9.0]))),
    Case("masked_fill_int", lambda x: x.masked_fill(x > 2, 100), (ri(3, 4),)),
    Case("masked_fill_bool", lambda x, m: x.masked_fill(m, 1), (r(3, 4) > 0, r(3, 4) > 1)),
    Case("masked_fill_int8", lambda x, m: x.masked_fill(m, -7), (ri(3, 4).to(torch.int8), r(3, 4) > 1)),
    Case("masked_fill_inplace", put(lambda y: y.masked_fill_(y < -1, 0.5)), (x,)),
    Case("masked_select", lambda x: torch.masked_select(x, x > 0.5), (x,)),
    Case("masked_select_broadcast", lambda x, m: x.masked_select(m), (r(3, 4), torch.tensor([True, False, True, True]))),
    Case("masked_select_mask_bigger", lambda x, m: x.masked_select(m), (r(4), r(3, 4) > 0)),
    Case("masked_scatter", lambda x, s: x.masked_scatter(x > 0, s), (x, r(60)), min_opset=11,
         error_below={9: "supported from opset 11"}),
    Case("masked_scatter_broadcast", lambda x, m, s: x.masked_scatter(m, s), (r(3, 4), torch.tensor([True, False, True, False]), r(4, 4)),
         min_opset=11),
    Case("masked_scatter_inplace", put(lambda y, s: y.masked_scatter_(y < 0, s)), (ri(3, 3), ri(12)), min_opset=11),
    # equal shapes in the example, a mask that broadcasts at run time: expanded whenever a shape may vary
    # (issue 43: the example's equal shapes skipped the Expand)
    Case("masked_select_dynamic_broadcast", lambda x, m: x.masked_select(m), (r(3, 4), r(3, 4) > 0),
         opsets=(9, 11, 17), extra=axes({"x": [0, 1], "m": [0, 1]}, ["x", "m"]), pt2=False,
         more_args=[(r(3, 4), r(1, 4) > 0), (r(2, 5), r(2, 5) > 0)]),
    Case("masked_scatter_dynamic_broadcast", lambda x, m, s: x.masked_scatter(m, s), (r(3, 4), r(3, 4) > 0, r(12)),
         opsets=(11, 17), extra=axes({"x": [0, 1], "m": [0, 1]}, ["x", "m", "s"]), pt2=False,
         more_args=[(r(3, 4), r(1, 4) > 0, r(12))]),
    # ---- gather
    Case("gather", lambda x, i: torch.gather(x, 1, i), (x, torch.randint(0, 4, (3, 6, 5))), opsets=(9, 10, 11, 17)),
    Case("gather_smaller_index", lambda x, i: x.gather(-1, i), (x, torch.randint(0, 5, (2, 3, 2))),
         opsets=(9, 11, 17)),
    Case("gather_int", lambda x, i: x.gather(0, i), (ri(4, 3), torch.randint(0, 4, (2, 3))), opsets=(9, 11, 17)),
    Case("gather_bool", lambda x, i: x.gather(0, i), (r(4, 3) > 0, torch.randint(0, 4, (2, 3))), opsets=(9, 11, 17)),
    # ---- scatter
    Case("scatter_src", lambda x, i, s: x.scatter(1, i, s), (x, torch.stack([torch.randperm(4)[:3] for _ in range(15)]).reshape(3, 5, 3).transpose(1, 2), r(3, 3, 5)),
         opsets=(9, 11, 16, 17)),
    Case("scatter_src_bigger", lambda x, i, s: x.scatter(0, i, s), (r(4, 3), L(3, 1, 0).reshape(1, 3), r(3, 3))),
    Case("scatter_value", lambda x, i: x.scatter(1, i, -3.0), (x, sc_small)),
    Case("scatter_inplace_neg_dim", put(lambda y, i, s: y.scatter_(-1, i, s)), (r(3, 4), L(3, 1, 0, 1, 2, 3).reshape(2, 3), r(2, 3))),
    Case("scatter_reduce_add", lambda x, i, s: x.scatter(1, i, s, reduce="add"), (x, sc_idx, r(3, 6, 5)),
         opsets=(9, 11, 16, 17)),
    Case("scatter_reduce_multiply", lambda x, i, s: x.scatter(1, i, s, reduce="multiply"), (x, sc_idx, r(3, 6, 5, scale=1.0)),
         opsets=(9, 11, 16, 17)),
    Case("scatter_value_reduce", lambda x, i: x.scatter(1, i, 2.0, reduce="add"), (x, sc_small), opsets=(9, 16)),
    Case("scatter_add", lambda x, i, s: x.scatter_add(1, i, s), (x, sc_idx, r(3, 6, 5)), opsets=(9, 11, 16, 17)),
    Case("scatter_add_smaller", lambda x, i, s: torch.scatter_add(x, 1, i, s), (x, sc_small, r(3, 4, 5)),
         opsets=(9, 11, 16, 17)),
    Case("scatter_add_int_inplace", put(lambda y, i, s: y.scatter_add_(0, i, s)), (ri(3, 4), torch.randint(0, 3, (5, 4)), ri(5, 4)),
         opsets=(9, 16)),
    Case("scatter_reduce_sum", lambda x, i, s: x.scatter_reduce(1, i, s, "sum"), (x, sc_idx, r(3, 6, 5)), opsets=(9, 16)),
    Case("scatter_reduce_sum_excl", lambda x, i, s: x.scatter_reduce(1, i, s, "sum", include_self=False), (x, sc_idx, r(3, 6, 5)),
         opsets=(9, 16)),
    Case("scatter_reduce_prod", lambda x, i, s: x.scatter_reduce(1, i, s, "prod"), (x, sc_idx, r(3, 6, 5, scale=1.0)),
         opsets=(9, 16)),
    Case("scatter_reduce_mean", lambda x, i, s: x.scatter_reduce(1, i, s, "mean"), (x, sc_idx, r(3, 6, 5)), opsets=(9, 16)),
    Case("scatter_reduce_mean_excl", lambda x, i, s: x.scatter_reduce(1, i, s, "mean", include_self=False),
         (x, sc_idx, r(3, 6, 5)), opsets=(9, 16)),
    Case("scatter_reduce_amax", lambda x, i, s: x.scatter_reduce(1, i, s, "amax"), (x, sc_idx, r(3, 6, 5)), opsets=(9, 16)),
    # an index smaller than self: where nothing is scattered, self stays (the aggregate was padded with 0: Max(x, 0))
    Case("scatter_reduce_amax_index_smaller", lambda x, i, s: x.scatter_reduce(1, i, s, "amax"),
         (r(3, 4), torch.randint(0, 4, (2, 3)), r(2, 3)), opsets=(9, 13, 17)),
    Case("scatter_reduce_prod_index_smaller", lambda x, i, s: x.scatter_reduce(1, i, s, "prod"),
         (r(3, 4), torch.randint(0, 4, (2, 3)), r(2, 3)), opsets=(13, 17)),
    Case("scatter_reduce_amin_excl", lambda x, i, s: x.scatter_reduce(-2, i, s, "amin", include_self=False),
         (x, sc_idx, r(3, 6, 5)), opsets=(9, 16)),
    Case("scatter_reduce_amax_int", lambda x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False),
         (ri(3, 4), torch.randint(0, 3, (5, 4)), ri(5, 4)), opsets=(9, 16)),
    # an index as large as self in the example, smaller at run time: the one-hot lowering pads its result to
    # self's sizes by the run's difference (issue 43: by the example's); opsets 9-10 (Pad's pads an
    # attribute) need those sizes static
    Case("scatter_add_dynamic_smaller", lambda x, i, s: x.scatter_add(0, i, s),
         (r(3, 4), torch.randint(0, 3, (3, 4)), r(3, 4)), opsets=(11, 13, 17), error_below={9: "is dynamic"},
         extra=axes({"i": [0, 1], "s": [0, 1]}, ["x", "i", "s"]), pt2=False,
         more_args=[(r(3, 4), torch.randint(0, 3, (2, 2)), r(2, 2)), (r(3, 4), torch.randint(0, 3, (3, 4)), r(3, 4))]),
    Case("scatter_reduce_amax_dynamic_smaller", lambda x, i, s: x.scatter_reduce(1, i, s, "amax"),
         (r(3, 4), torch.randint(0, 4, (3, 4)), r(3, 4)), opsets=(13, 17, 18),
         extra=axes({"i": [0, 1], "s": [0, 1]}, ["x", "i", "s"]), pt2=False,
         more_args=[(r(3, 4), torch.randint(0, 4, (2, 3)), r(2, 3))]),
    # ---- take, nonzero
    Case("take", lambda x, i: torch.take(x, i), (x, L(0, 59, -1, 7, 30).reshape(5, 1))),
    Case("take_int", lambda x, i: x.take(i), (ri(2, 3), L(5, 0))),
    Case("nonzero", lambda x: torch.nonzero(x > 0), (x,)),
    Case("nonzero_int", lambda x: x.nonzero(), (ri(4, 5, high=2),)),
    Case("nonzero_as_tuple", lambda x: x.nonzero(as_tuple=True), (x > 0,)),
    Case("argwhere", lambda x: torch.argwhere(x), (ri(6, high=2),)),
    # ---- select_scatter / slice_scatter / diagonal_scatter
    Case("select_scatter", lambda x, s: torch.select_scatter(x, s, 1, -1), (x, r(3, 5))),
    Case("select_scatter_dim0", lambda x, s: x.select_scatter(s, 0, 1), (ri(3, 2), ri(2))),
    Case("slice_scatter", lambda x, s: torch.slice_scatter(x, s, dim=1, start=1, end=3, step=1), (x, r(3, 2, 5))),
    Case("slice_scatter_step", lambda x, s: x.slice_scatter(s, dim=-1, start=0, end=None, step=2), (x, r(3, 4, 3))),
    Case("slice_scatter_run_time_start", lambda x, s, y: torch.slice_scatter(x, s, 1, y.size(0) - 4, None, 1),
         (x, r(3, 2, 5), r(6))),
    Case("select_scatter_run_time_index", lambda x, s, y: torch.select_scatter(x, s, 0, y.size(0) - 4), (x, r(4, 5), r(2))),
    Case("scatter_positions_run_time", ScatterAtRunTime(), (x, r(3, 2, 5), r(3, 4), L(-3, -2)), script=True),
    Case("slice_scatter_defaults", lambda x, s: torch.slice_scatter(x, s, step=1), (r(3, 2), r(3, 2))),
    Case("diagonal_scatter", lambda x, s: torch.diagonal_scatter(x, s), (r(3, 4), r(3))),
    Case("diagonal_scatter_offset_dims", lambda x, s: torch.diagonal_scatter(x, s, -1, 2, 0), (x, r(4, 3))),
    # index_add / index_copy / index_fill on 0-d tensors (one element along dim 0 or -1)
    Case("index_add_0d", lambda a, i, v: a.index_add(0, i, v, alpha=2), (torch.tensor(1.5), torch.tensor([0]), torch.tensor(2.0)),
         pt2=True),
    Case("index_add_0d_index", lambda a, i, v: a.index_add(-1, i, v), (torch.tensor(1.5), torch.tensor(0), torch.tensor(2.0)),
         pt2=True),
    Case("index_copy_0d", lambda a, i, v: a.index_copy(0, i, v), (torch.tensor(1.0), torch.tensor([0]), torch.tensor(-2.0)),
         pt2=True),
    Case("index_fill_0d", lambda a, i: a.index_fill(0, i, 3.0), (torch.tensor(1.0), torch.tensor([0])), pt2=True),
    Case("index_fill_0d_int", lambda a, i, v: a.index_fill(-1, i, v), (torch.tensor(4), torch.tensor(0), torch.tensor(9)),
         pt2=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
