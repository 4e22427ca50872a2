"""dynamo=True captures as torch.onnx does (issue 38): a Dim the model bounds is refined from torch.export's
suggested fixes (the range in the model's metadata), sizes 0 and 1 are not specialized, and the arithmetic on
sizes torch.export records (_operator.*, torch.sym_*, math.trunc) converts."""
import io
import math

import onnx
import pytest
import torch

import torch2onnx
from torch2onnx import verification

pytestmark = pytest.mark.skipif(not hasattr(torch, "export"), reason="torch.export")
Dim = getattr(getattr(torch, "export", None), "Dim", None)


def run(data, *inputs):
    session = verification.ort_session(data)
    return session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), inputs)})


class Positions(torch.nn.Module):
    """A branch on the sequence's length: torch.export takes the example's side (seq <= 16) as a guard, which
    fails the capture of an unbounded Dim until dynamic_shapes is refined to the range the branch holds in."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(16, 4))

    def forward(self, x):
        if x.shape[1] <= 16:
            return x + self.table[: x.shape[1]]
        return x


def test_bounded_dim_refined():
    model, x = Positions().eval(), torch.randn(2, 10, 4)
    f = io.BytesIO()
    torch2onnx.export(model, (x,), f, dynamo=True, dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    meta = {p.key: p.value for p in onnx.load_from_string(f.getvalue()).metadata_props}
    assert "seq in [" in meta["torch2onnx.dynamic_dim_ranges"] and "16]" in meta["torch2onnx.dynamic_dim_ranges"]
    for shape in ((2, 10, 4), (3, 16, 4), (1, 3, 4)):
        y = torch.randn(shape)
        torch.testing.assert_close(torch.from_numpy(run(f.getvalue(), y)[0]), model(y), rtol=1e-5, atol=1e-5)


def test_size_one_example_not_specialized():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * x.shape[0] + x.mean(0, keepdim=True)
    f = io.BytesIO()
    torch2onnx.export(Scale(), (torch.randn(1, 3),), f, dynamo=True, dynamic_shapes=({0: Dim("batch")},))
    for n in (1, 4):
        y = torch.randn(n, 3)
        torch.testing.assert_close(torch.from_numpy(run(f.getvalue(), y)[0]), Scale()(y))


class SymOps(torch.nn.Module):
    def forward(self, x, y):
        n, m = x.shape[0], y.shape[0]
        sizes = [torch.sym_max(n, m), torch.sym_min(n, m), torch.sym_ite(n > m, n, m + 1), n ** 2, n << 1, m >> 1,
                 math.trunc(n / 3), torch.sym_int(torch.sym_float(m) * 1.5), n & m, n | m,
                 torch.sym_ite(torch.sym_not(n == m), 7, 9), torch.sym_ite((n != m) | (n < 2), 5, 6),
                 torch.sym_ite((n >= m) & (m > 1), 3, 4), +n]
        return torch.stack([torch.full((), s) for s in sizes]) + x.sum() * 0


def test_size_arithmetic():
    f = io.BytesIO()
    shapes = ({0: Dim("n")}, {0: Dim("m")})
    torch2onnx.export(SymOps(), (torch.randn(5, 2), torch.randn(3, 2)), f, dynamo=True, dynamic_shapes=shapes,
                      opset_version=18)
    ops = {str(n.target) for n in torch.export.export(SymOps(), (torch.randn(5, 2), torch.randn(3, 2)),
                                                      dynamic_shapes=shapes).graph.nodes}
    assert any("sym_max" in o for o in ops) and any("or_" in o for o in ops)  # (what the test means to cover)
    for a, b in ((5, 3), (2, 2), (7, 9), (1, 4)):
        x, y = torch.randn(a, 2), torch.randn(b, 2)
        torch.testing.assert_close(torch.from_numpy(run(f.getvalue(), x, y)[0]), SymOps()(x, y))


def test_program_json_is_torch_export_serializers():
    """The program JSON handed to the C++ core (_dynamo._program_json: torch's
    serializer without the canonical copy it builds and throws away) is byte for
    byte what torch._export.serde.serialize writes, on a program with parameters,
    buffers, a constant and a dynamic dim."""
    from torch._export.serde.serialize import serialize
    from torch2onnx import _dynamo

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)
            self.register_buffer("shift", torch.arange(3.0))
            self.scale = torch.tensor(2.0)

        def forward(self, x):
            return torch.relu(self.lin(x)) * self.scale + self.shift + x.shape[0]

    ep = torch.export.export(M(), (torch.randn(5, 4),), dynamic_shapes=({0: torch.export.Dim("n")},))
    ours = _dynamo._program_json(ep)
    assert ours is not None
    assert ours == serialize(ep, serialize_state_dict=False, serialize_constants=False,
                             serialize_example_inputs=False).exported_program
