"""Joining and splitting (src/symbolics/join_split.cpp)."""
import os
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402  (puts tests/ on the path)
from optest import Case  # noqa: E402
import harness  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


x = r(2, 3, 4)
y = r(2, 3, 4)
xi = torch.randint(-5, 5, (2, 3, 4))
b = torch.rand(2, 3, 4) > 0.5
v = torch.tensor([2.5, -1.0])
x7 = r(7, 3, 5)

class ScriptChunk(torch.nn.Module):
    """chunk(n) with n known at run time only: a list of run-time length."""

    def forward(self, x, n: int):
        pieces = x.chunk(n, 0)
        return pieces[0] * 2, pieces[-1], len(pieces)


class SplitByShapes(torch.nn.Module):
    """Pieces counted from other inputs' shapes (as torchvision's RPN splits its anchors): run-time sizes."""

    def forward(self, a, b):
        return torch.cat([a.flatten(), b.flatten()]).split([a.shape[0] * a.shape[1], b.shape[0] * b.shape[1]])


CASES = [
    # ---- cat
    Case("cat", lambda a, b: torch.cat([a, b]), (x, y)),
    Case("cat_dim1", lambda a, b: torch.cat([a, b, a], 1), (x, y)),
    Case("cat_neg_dim", lambda a, b: torch.cat((a, b), -1), (x, r(2, 3, 2))),
    Case("cat_one", lambda a: torch.cat([a], 1), (x,)),
    Case("cat_int", lambda a, b: torch.cat([a, b], 2), (xi, xi)),
    Case("cat_bool", lambda a, b: torch.cat([a, b]), (b, b)),
    Case("cat_mixed", lambda a, b: torch.cat([a, b], 0), (x, xi)),
    Case("cat_mixed_int", lambda a, b: torch.cat([a, b], 1), (xi.int(), b)),
    Case("cat_mixed_double", lambda a, b: torch.cat([a, b], 1), (x[0], r(3, 2, dtype=torch.float64))),
    Case("cat_legacy_empty", lambda a: torch.cat([torch.zeros(0), a, torch.zeros(0)], 1), (x,)),
    Case("cat_empty_part", lambda a, b: torch.cat([a[:, :0], b], 1), (x, y)),
    Case("cat_only_empty", lambda a: torch.cat([a[:0], a[:0]]), (v,)),
    # a 1-D piece empty in the example only (a[3:] of a dynamic length): kept, not skipped as a legacy
    # empty tensor (issue 43)
    Case("cat_dynamic_empty_1d", lambda a, b: torch.cat([a[3:], b]), (r(3), r(2)), opsets=(9, 11, 17),
         extra=("--dynamic-axes", '{"a":[0]}', "--input-names", "a,b"), pt2=False,
         more_args=[(r(5), r(2)), (r(4), r(2))]),
    Case("cat_sizes", lambda a: torch.cat([a, a.new_ones(a.size(0), 1, a.size(2))], 1), (x,)),
    # ---- stack
    Case("stack", lambda a, b: torch.stack([a, b]), (x, y)),
    Case("stack_dim", lambda a, b: torch.stack([a, b], 2), (x, y)),
    Case("stack_neg_dim", lambda a, b: torch.stack([a, b, a], -1), (x, y)),
    Case("stack_neg_dim2", lambda a, b: torch.stack([a, b], -2), (x, y)),
    Case("stack_one", lambda a: torch.stack([a], 1), (x,)),
    Case("stack_mixed", lambda a, b: torch.stack([a, b]), (x, xi)),
    Case("stack_0d", lambda a: torch.stack([a[0], a[1], a[0]]), (v,)),
    Case("stack_bool", lambda a, b: torch.stack([a, b], 1), (b, b)),
    # ---- hstack / vstack / dstack / column_stack
    Case("hstack", lambda a, b: torch.hstack([a, b]), (x, y)),
    Case("hstack_1d", lambda a: torch.hstack([a, a, a[:1]]), (v,)),
    Case("hstack_0d", lambda a: torch.hstack([a[0], a]), (v,)),
    Case("vstack", lambda a, b: torch.vstack([a, b]), (x, y)),
    Case("vstack_1d", lambda a: torch.vstack([a, a]), (v,)),
    Case("vstack_mixed", lambda a, b: torch.vstack([a, b]), (v, r(3, 2))),
    Case("row_stack", lambda a, b: torch.row_stack([a, b]), (x[0], xi[0])),
    Case("dstack", lambda a, b: torch.dstack([a, b]), (x, y)),
    Case("dstack_2d", lambda a, b: torch.dstack([a, b]), (x[0], y[0])),
    Case("dstack_1d", lambda a: torch.dstack([a, a]), (v,)),
    Case("column_stack", lambda a, b: torch.column_stack([a, b]), (v, r(2, 3))),
    Case("column_stack_0d", lambda a: torch.column_stack([a[0], a[1]]), (v,)),
    # ---- split / split_with_sizes
    Case("split", lambda a: a.split(1), (x,)),
    Case("split_uneven", lambda a: a.split(2, 1), (x7.transpose(0, 1),)),
    Case("split_uneven_dim0", lambda a: torch.split(a, 3), (x7,)),
    Case("split_neg_dim", lambda a: a.split(2, -1), (x7,)),
    Case("split_bigger", lambda a: a.split(10, 1), (x,)),
    Case("split_list", lambda a: a.split([1, 2], 1), (x,)),
    Case("split_list_zero", lambda a: a.split([0, 3, 0], 1), (x,), min_opset=11),
    Case("split_with_sizes", lambda a: torch.split_with_sizes(a, [3, 1], -1), (x,)),
    Case("split_int", lambda a: a.split(2, 2), (xi,)),
    Case("split_bool", lambda a: a.split([1, 1]), (b,)),
    Case("split_one_used", lambda a: a.split(2, 0)[1], (x7,)),
    Case("split_copy", lambda a: torch.split_copy(a, 2, 1), (x,)),
    Case("split_with_sizes_copy", lambda a: torch.split_with_sizes_copy(a, [1, 3], 2), (x,)),
    Case("unsafe_split", lambda a: torch.unsafe_split(a, 3, 2), (x,)),
    # ---- chunk
    Case("chunk", lambda a: a.chunk(2), (x,)),
    Case("chunk_uneven", lambda a: a.chunk(3, 0), (x7,)),
    Case("chunk_fewer", lambda a: a.chunk(6, 0), (x7,)),  # 7 in chunks of 2: 4 pieces
    Case("chunk_neg_dim", lambda a: a.chunk(2, -1), (x7,)),
    Case("chunk_more_than_size", lambda a: a.chunk(5, 1), (x,)),
    Case("chunk_int", lambda a: a.chunk(3, 1), (xi,)),
    Case("unsafe_chunk", lambda a: torch.unsafe_chunk(a, 2, 2), (x,)),
    # a dynamic axis: the pieces' sizes come from the run-time length from opset 13 (two chunks: two pieces
    # at every length from 2)
    Case("chunk_dynamic", lambda a: a.chunk(2, 1), (r(2, 4),), opsets=(13, 17),
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"),
         more_args=[(r(3, 6),), (r(1, 5),), (r(2, 3),)]),
    Case("chunk_runtime_count", ScriptChunk(), (r(7, 2), 3), script=True, opsets=(11, 13, 17),
         more_args=[(r(7, 2), 2), (r(7, 2), 7), (r(7, 2), 10), (r(7, 2), 4)], error_below={10: "known at export time"}),
    # chunk(3) makes fewer pieces at some lengths (2 of 4): the trace unpacks the example's count, and from
    # opset 13 the graph keeps it, checked at run time (test_piece_count_checked_at_run_time); below 13
    # Split's sizes are constants (issue 43)
    Case("chunk_dynamic_uneven", lambda a: a.chunk(3, 0), (r(7, 2),), opsets=(13, 17, 18),
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"),
         more_args=[(r(8, 2),), (r(9, 2),), (r(5, 2),)], error_below={11: "is dynamic"}),
    # chunk(2) whose example has one piece: the count varies too
    Case("chunk_dynamic_one_piece", lambda a: a.chunk(2, 1), (r(2, 1),), opsets=(13, 17),
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"), more_args=[(r(4, 1),)],
         error_below={11: "is dynamic"}),
    # ---- unbind
    Case("unbind", lambda a: a.unbind(), (x,)),
    Case("unbind_dim", lambda a: torch.unbind(a, 1), (x,)),
    Case("unbind_neg", lambda a: a.unbind(-1), (xi,)),
    Case("unbind_1d", lambda a: a.unbind(), (v,)),
    Case("unbind_copy", lambda a: torch.unbind_copy(a, 2), (x,)),
    Case("unbind_unpack", lambda a: (lambda p, q: p - q)(*a.unbind(0)), (x,)),
    # along a dim known to vary: as many pieces as the run has (a sequence), never the example's count
    # (issue 43; one the run at other sizes could not see past nonzero keeps the example's count, as the
    # trace's unpacking of it does): the trace unpacks them into a fixed tuple here, read where the run has
    # as many (test_piece_count_checked_at_run_time); along a static dim of a tensor with dynamic ones: fine
    Case("unbind_dynamic", lambda a: a.unbind(1), (r(3, 4),), opsets=(11, 17),
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"), more_args=[(r(5, 4),)]),
    Case("unbind_static_dim", lambda a: a.unbind(1), (r(3, 4),), opsets=(11, 17),
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"), more_args=[(r(5, 4),)]),
    # ---- hsplit / vsplit / dsplit
    Case("hsplit", lambda a: torch.hsplit(a, 3), (x,)),
    Case("hsplit_1d", lambda a: torch.hsplit(a, 2), (v,)),
    Case("hsplit_indices", lambda a: torch.hsplit(a, [1, 2]), (x,)),
    Case("vsplit", lambda a: torch.vsplit(a, 2), (x,)),
    Case("vsplit_indices", lambda a: torch.vsplit(a, [2, 5, -1]), (x7,)),
    Case("vsplit_indices_back", lambda a: torch.vsplit(a, [5, 2]), (x7,)),
    Case("dsplit", lambda a: torch.dsplit(a, 2), (x,)),
    Case("dsplit_indices", lambda a: torch.dsplit(a, [3, 10]), (x,)),
    Case("split_runtime_sizes", SplitByShapes(), (torch.randn(2, 3), torch.randn(4, 5)), opsets=(10, 11, 13, 17),
         extra=("--dynamic-axes", '{"a":[0,1],"b":[0]}', "--input-names", "a,b"),
         more_args=[(torch.randn(3, 4), torch.randn(2, 5))], error_below={9: "opset 10"}),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


@pytest.mark.parametrize("opset", [o for o in (13, 17, 18) if o <= harness.max_opset()])
@pytest.mark.parametrize("name,fn,example,fine,other", [
    # chunk(3) of 7 is 3 pieces (3, 3, 1), of 4 two (2, 2): PyTorch's trace fails to unpack three there
    ("chunk", lambda a: a.chunk(3, 0), (7, 2), (5, 2), (4, 2)),
    ("chunk_one_piece", lambda a: a.chunk(2, 1), (2, 1), (4, 1), (2, 5)),
    ("unbind", lambda a: a.unbind(1), (3, 4), (5, 4), (3, 6)),
])
def test_piece_count_checked_at_run_time(name, fn, example, fine, other, opset, tmp_path):
    """A traced model unpacks the example's number of pieces of a dim the
    caller made dynamic; at a size where PyTorch makes another number its
    unpacking fails: ONNX Runtime must fail there too, never return pieces
    PyTorch would not make (issue 43)."""
    import onnxruntime
    import torch2onnx

    module = harness.Lambda(fn).eval()
    path = str(tmp_path / f"{name}.onnx")
    torch2onnx.export(torch.jit.trace(module, (r(*example),)), (r(*example),), path, opset_version=opset,
                      input_names=["x"], dynamic_axes={"x": [0, 1]})
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    for shape in (example, fine):
        x = r(*shape)
        got = session.run(None, {"x": x.numpy()})
        want = fn(x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-4)
    x = r(*other)
    assert len(fn(x)) != len(fn(r(*example)))
    with pytest.raises(Exception):
        session.run(None, {"x": x.numpy()})
