"""In-place writes (src/torch_passes/functionalize.cpp and src/symbolics/copy.cpp):
copy_ into views, in-place ops on views, and reads of the base afterwards."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def add_into_slice(x, y):
    x = x.clone()
    x[:, 1:3] += y
    return x


def assign_row(x, v):
    x = x.clone()
    x[0] = v
    return x


def fill_block(x):
    x = x.clone()
    x[1:3, 2] = 5.0
    return x


def transpose_view(x):
    x = x.clone()
    x.t().mul_(2)
    return x


def flat_view(x):
    x = x.clone()
    x.view(-1)[3] = 7.0
    return x


def chunk_piece(x):
    x = x.clone()
    a, b = x.chunk(2, dim=1)
    a.mul_(3)
    return x


def old_view_read_later(x):
    x = x.clone()
    v = x[0]
    x[0] += 1
    return v * 2, x


def broadcast_and_cast(x, y):
    x = x.clone()
    x[:, 0] = y  # int -> float, broadcast over rows
    return x


def nested_views(x, y):
    x = x.clone()
    x[1][:, 2:] = y
    return x


def index_put_tensor(data, index, new_data):
    data = data.clone()
    data[index] = new_data
    return data


def assign_twice(x):
    x = x.clone()
    x[0, 0] = 1.0
    x[:, -1] = x[:, 0] * 2
    return x


class InPlaceIndexedAssignmentONNX(torch.nn.Module):
    """The documented example (seeds/002, Limitations)."""

    def forward(self, data, index, new_data):
        new_data = new_data.unsqueeze(0)
        index = index.expand(1, new_data.size(1))
        data.scatter_(0, index, new_data)
        return data


def relu_inplace(x):
    y = x * 2
    y.relu_()
    return y


def write_into_contiguous_copy(x):
    # contiguous() of a transposed tensor is a copy: the write stays in it
    y = x.t().contiguous()
    y[0] += 1
    return y, x * 1


def write_into_contiguous_alias(x):
    # contiguous() of a contiguous tensor is the tensor itself: the write reaches x
    x = x.clone()
    y = x.contiguous()
    y[0] += 1
    return x


def write_into_reshape_copy(x):
    y = x.t().reshape(-1)  # a copy (x.t() cannot be viewed flat)
    y[2] = 5.0
    return y, x * 1


def relative_position_index(x):
    """BEiT's relative position index, from sizes known at run time: writes
    into a copy made by contiguous() of a permute."""
    wh, ww = x.shape[-2], x.shape[-1]
    coords = torch.stack(torch.meshgrid(torch.arange(wh), torch.arange(ww), indexing="ij")).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += wh - 1
    rel[:, :, 1] += ww - 1
    rel[:, :, 0] *= 2 * ww - 1
    return rel.sum(-1)


HW = ("--dynamic-axes", '{"x":{"2":"h","3":"w"}}', "--input-names", "x")


x = torch.randn(4, 5)
CASES = [
    Case("write_into_contiguous_copy", write_into_contiguous_copy, (x,), opsets=(11, 13, 17)),
    Case("write_into_contiguous_alias", write_into_contiguous_alias, (x,), opsets=(11, 13, 17)),
    Case("write_into_reshape_copy", write_into_reshape_copy, (x,), opsets=(11, 13, 17)),
    Case("relative_position_index", relative_position_index, (torch.randn(1, 2, 3, 4),), opsets=(13, 17),
         extra=HW, more_args=[(torch.randn(1, 2, 5, 2),), (torch.randn(1, 2, 2, 6),)]),
    Case("add_into_slice", add_into_slice, (x, torch.randn(4, 2)), opsets=(11, 13, 17)),
    Case("assign_row", assign_row, (x, torch.randn(5)), opsets=(11, 13, 17)),
    Case("fill_block", fill_block, (x,), opsets=(11, 13, 17)),
    Case("transpose_view", transpose_view, (x,)),
    Case("flat_view", flat_view, (x,), opsets=(11, 13, 17)),
    Case("chunk_piece", chunk_piece, (torch.randn(3, 6),), opsets=(11, 13, 17)),
    Case("old_view_read_later", old_view_read_later, (x,), opsets=(11, 13, 17)),
    Case("broadcast_and_cast", broadcast_and_cast, (x, torch.tensor([1, 2, 3, 4]).view(4)), opsets=(11, 13, 17)),
    Case("nested_views", nested_views, (torch.randn(3, 4, 5), torch.randn(4, 3)), opsets=(11, 13, 17)),
    Case("index_put_tensor", index_put_tensor, (torch.zeros(3, 4), torch.tensor(1), torch.arange(4.0)),
         opsets=(11, 13, 17)),
    Case("assign_twice", assign_twice, (x,), opsets=(11, 13, 17)),
    Case("inplace_indexed_assignment", InPlaceIndexedAssignmentONNX(),
         (torch.zeros(3, 4), torch.tensor(1), torch.arange(4).to(torch.float32))),
    Case("relu_inplace", relu_inplace, (x,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


def test_view_or_copy_warned(tmp_path):
    """contiguous() of x.t() copies at the example's sizes and is a view where
    a dim is 1: with dynamic axes, a write into it whose input is read later
    keeps the example's answer and says so (docs/runtime_rules.md); a write
    whose answer cannot show (BEiT's index, a copy nobody reads) says nothing,
    nor does an export without dynamic axes."""
    import harness

    class Wrap(torch.nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)

    dyn = ("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x")
    for fn, x, extra, warned in [(write_into_contiguous_copy, torch.randn(4, 5), dyn, True),
                                 (write_into_contiguous_copy, torch.randn(4, 5), (), False),
                                 (write_into_contiguous_alias, torch.randn(4, 5), dyn, False),
                                 (relative_position_index, torch.randn(1, 2, 3, 4),
                                  ("--dynamic-axes", '{"x":[2,3]}', "--input-names", "x"), False)]:
        pt, args, out = str(tmp_path / "m.pt"), str(tmp_path / "a.pt"), str(tmp_path / "m.onnx")
        harness.trace(Wrap(fn), (x,), pt)
        torch.save((x,), args)
        proc = harness.export(pt, out, args_path=args, extra=extra)
        assert ("whether aten::contiguous copies depends on the sizes" in proc.stderr) == warned, (fn.__name__, proc.stderr)
