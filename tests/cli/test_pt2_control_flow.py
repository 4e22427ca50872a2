"""Higher-order operators in .pt2 programs: torch.cond becomes an ONNX If,
while_loop an ONNX Loop, no_grad regions are inlined. Each program is saved
with torch.export.save, exported by the CLI, checked, and run in ONNX
Runtime against the program's module on inputs that take every path."""
import os
import sys

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from test_pt2 import ort_matches, run, save_program  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(torch, "cond") or not hasattr(torch.export, "save"),
                                reason="this torch has no torch.cond / torch.export")


class Cond(nn.Module):
    """A data-dependent branch, each side with its own weights."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 3)

    def forward(self, x):
        def positive(x):
            return self.a(x).relu() + 1

        def negative(x):
            return self.b(x.sin()) * 2

        return torch.cond(x.sum() > 0, positive, negative, (x,))


class NestedCond(nn.Module):
    """Two outputs, a cond inside a branch, an extra operand."""

    def forward(self, x, y):
        def inner_t(x, y):
            return x + y, x * y

        def inner_f(x, y):
            return x - y, x / (y.abs() + 1)

        def outer_t(x, y):
            return torch.cond(y.mean() > 0, inner_t, inner_f, (x, y))

        def outer_f(x, y):
            return x.cos(), y.exp()

        a, b = torch.cond(x.max() > 0.5, outer_t, outer_f, (x, y))
        return a + 1, b


class ShapeCond(nn.Module):
    """A branch on the dynamic batch size (a SymBool predicate)."""

    def forward(self, x):
        return torch.cond(x.shape[0] > 4, lambda x: x.sum(0, keepdim=True).expand_as(x).clone(),
                          lambda x: x * 3, (x,))


class WhileLoop(nn.Module):
    """A counter and a tensor carried, a weight as an extra input."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4) * 0.3)

    def forward(self, x, n):
        def cond_fn(i, x):
            return i < n.sum()

        def body_fn(i, x):
            return i + 1, torch.tanh(x @ self.w) + x

        from torch._higher_order_ops import while_loop
        i, y = while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))
        return y, i


class NoGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            y = self.fc(x) * 2
        return y + x


def export(module, args, path, dynamic_shapes=None):
    program = save_program(module, args, path.with_suffix(".pt2"), dynamic_shapes=dynamic_shapes)
    out = path.with_suffix(".onnx")
    r = run("export", program, "-o", str(out))
    assert r.returncode == 0, r.stderr
    return program, out, harness.full_check(str(out))


def op_types(graph):
    ops = []
    for n in graph.node:
        ops.append(n.op_type)
        for a in n.attribute:
            if a.g.node:
                ops += op_types(a.g)
    return ops


def test_cond_is_an_if(tmp_path):
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    program, out, model = export(Cond(), (torch.randn(3, 4),), tmp_path / "cond", {"x": {0: batch}})
    assert [n.op_type for n in model.graph.node].count("If") == 1
    ort_matches(program, out, [(torch.randn(3, 4).abs(),), (-torch.randn(3, 4).abs(),),
                               (torch.randn(1, 4).abs(),), (-torch.randn(7, 4).abs(),)])


def test_nested_cond_with_two_outputs(tmp_path):
    torch.manual_seed(0)
    program, out, model = export(NestedCond(), (torch.randn(2, 3), torch.randn(2, 3)), tmp_path / "nested")
    assert op_types(model.graph).count("If") == 2
    cases = []
    for x_big in (True, False):
        for y_pos in (True, False):
            x = torch.rand(2, 3) + (1.0 if x_big else -2.0)
            y = torch.rand(2, 3) * (1 if y_pos else -1)
            cases.append((x, y))
    ort_matches(program, out, cases)


def test_cond_on_the_batch_size(tmp_path):
    batch = torch.export.Dim("batch", min=1, max=64)
    program, out, _ = export(ShapeCond(), (torch.randn(6, 3),), tmp_path / "shape", {"x": {0: batch}})
    ort_matches(program, out, [(torch.randn(b, 3),) for b in (6, 4, 1, 9)])


def test_while_loop_is_a_loop(tmp_path):
    torch.manual_seed(0)
    program, out, model = export(WhileLoop(), (torch.randn(2, 4), torch.tensor(3)), tmp_path / "while")
    assert "Loop" in [n.op_type for n in model.graph.node]
    ort_matches(program, out, [(torch.randn(2, 4), torch.tensor(k)) for k in (3, 0, 1, 6)])


def test_no_grad_region_is_inlined(tmp_path):
    torch.manual_seed(0)
    program, out, model = export(NoGrad(), (torch.randn(2, 4),), tmp_path / "nograd")
    assert "If" not in [n.op_type for n in model.graph.node]
    ort_matches(program, out, [(torch.randn(2, 4),), (torch.randn(2, 4),)])
