"""torch2onnx.verification.verify (python/torch2onnx/verification.py): PyTorch
against ONNX Runtime on the example and on random inputs along the model's
dynamic axes, every output compared, a table per run."""
import pytest
import torch
import torch.nn as nn

torch2onnx = pytest.importorskip("torch2onnx")
pytest.importorskip("onnxruntime")
from torch2onnx import verification  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, tokens, scale):
        h = self.fc(self.emb(tokens)) * scale
        return h, h.argmax(-1)


class BakesTheBatch(nn.Module):
    def forward(self, x):
        return x * float(x.shape[0])  # the trace keeps the example's batch size as a constant


def test_dynamic_axes_are_varied(tmp_path, capsys):
    torch.manual_seed(0)
    model, path = Net().eval(), str(tmp_path / "net.onnx")
    args = (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    torch2onnx.export(model, args, path, input_names=["tokens", "scale"],
                      dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "scale": {0: "batch", 1: "seq"}})
    runs = verification.verify(model, args, path)
    assert [label for label, _ in runs] == ["example", "batch=5, seq=8", "batch=1, seq=1"]
    for _, rows in runs:
        assert [r["ok"] for r in rows] == [True, True]
    assert runs[1][1][0]["shape"] == [5, 8, 3] and runs[1][1][1]["dtype"] == "int64"
    out = capsys.readouterr().out
    assert "| output | shape | dtype | max abs error |" in out and "| 1 | 1×1 | int64 |" in out, out


def test_a_size_baked_into_the_trace_is_found(tmp_path):
    path = str(tmp_path / "b.onnx")
    x = torch.randn(2, 3)
    torch2onnx.export(BakesTheBatch(), (x,), path, input_names=["x"], dynamic_axes={"x": [0]})
    verification.verify(BakesTheBatch(), (x,), path, sizes=(2,), quiet=True)  # the example's size: fine
    with pytest.raises(verification.VerificationError, match="x_dynamic_axes_1=5: output 0: max"):
        verification.verify(BakesTheBatch(), (x,), path, quiet=True)


def test_static_model_runs_once(tmp_path):
    path = str(tmp_path / "s.onnx")
    x = torch.randn(2, 3)
    lin = nn.Linear(3, 2).eval()
    torch2onnx.export(lin, (x,), path)
    runs = verification.verify(lin, (x,), path, quiet=True)
    assert len(runs) == 1 and runs[0][0] == "example"
    other = nn.Linear(3, 2).eval()  # other weights: differs beyond rtol, within a large atol
    with pytest.raises(verification.VerificationError):
        verification.verify(other, (x,), path, quiet=True)
    verification.verify(other, (x,), path, quiet=True, atol=100.0)


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


# Lowerings whose loops or tables follow a size (issue 20's): with that size
# dynamic the export is refused, naming the dim; with the other sizes dynamic
# it exports and verify() finds it right at other sizes.
SIZED = [
    ("inv", torch.linalg.inv, (3, 4, 4), {1: "n", 2: "n"}, {0: "batch"}),
    ("pdist", torch.pdist, (5, 3), {0: "rows"}, {1: "features"}),
    ("diag_embed", torch.diag_embed, (2, 4), {1: "n"}, {0: "batch"}),
    ("rfft", lambda x: torch.fft.rfft(x).abs(), (2, 16), {1: "length"}, {0: "batch"}),
    ("cholesky", lambda x: torch.linalg.cholesky(x @ x.mT + torch.eye(x.shape[-1])), (2, 3, 3), {1: "n", 2: "n"},
     {0: "batch"}),
]


@pytest.mark.parametrize("name,fn,shape,refused,accepted", SIZED, ids=[s[0] for s in SIZED])
def test_sized_lowerings_refuse_or_hold_at_other_sizes(tmp_path, name, fn, shape, refused, accepted):
    torch.manual_seed(0)
    model, x = Fn(fn).eval(), torch.randn(*shape)
    path = str(tmp_path / f"{name}.onnx")
    with pytest.raises(Exception, match=r"is dynamic \(it varies with the export's dynamic axes\)"):
        torch2onnx.export(model, (x,), path, input_names=["x"], dynamic_axes={"x": refused})
    torch2onnx.export(model, (x,), path, input_names=["x"], dynamic_axes={"x": accepted})
    runs = verification.verify(model, (x,), path, quiet=True)
    assert len(runs) == 3 and all(r["ok"] for _, rows in runs for r in rows)


def test_export_verify_true_runs_the_dynamic_axes(tmp_path):
    # export(verify=True) checks the example, then verify() along the dynamic axes
    x = torch.randn(2, 3)
    path = str(tmp_path / "baked.onnx")
    with pytest.raises(verification.VerificationError, match="n=5"):
        torch2onnx.export(BakesTheBatch(), (x,), path, input_names=["x"], dynamic_axes={"x": {0: "n"}}, verify=True)
    torch.manual_seed(0)
    model, args = Net().eval(), (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    report = str(tmp_path / "net.md")
    torch2onnx.export(model, args, str(tmp_path / "net.onnx"), input_names=["tokens", "scale"],
                      dynamic_axes={"tokens": {0: "batch"}, "scale": {0: "batch"}}, verify=True, report=report)
    text = open(report).read()
    assert "Random inputs, batch=5:" in text and "Random inputs, batch=1:" in text, text


@pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"), reason="no torch.export")
def test_programs_verify_from_the_exported_program_or_its_file(tmp_path):
    # an ExportedProgram (run as ep.module()) or a .pt2 path, with its own example inputs when args is None
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=32)
    args = (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    ep = torch.export.export(Net().eval(), args, dynamic_shapes=({0: batch}, {0: batch}))
    program, out = str(tmp_path / "net.pt2"), str(tmp_path / "net.onnx")
    torch.export.save(ep, program)
    torch2onnx.export(ep, args, out, dynamo=True)
    for model, given in ((ep, args), (ep, None), (program, None)):
        runs = verification.verify(model, given, out, quiet=True)
        assert [label for label, _ in runs][0] == "example" and len(runs) == 3, runs
        assert all(r["ok"] for _, rows in runs for r in rows)
