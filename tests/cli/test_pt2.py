"""torch.export programs (.pt2) at the command line, read and converted in
C++ (no Python, no example inputs: shapes come from the program): `export`
makes an ONNX model whose symbolic dims are named dynamic dims, `check`
reports the program's interface and which operators have no symbolic;
broken or unknown archives get clear errors."""
import io
import json
import os
import subprocess
import sys
import zipfile

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"),
                                reason="this torch has no torch.export")


class Inverse(nn.Module):
    def forward(self, x):
        return torch.nn.functional.fractional_max_pool2d(  # INVERSE_LINE
            (x @ x.transpose(-1, -2))[None], 2, output_size=2, _random_samples=torch.full((1, 1, 2), 0.5))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc(y) * x.shape[0]


class WithInverse(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Inverse()

    def forward(self, x):
        return self.head(x) + 1


def save_program(module, args, path, dynamic_shapes=None):
    ep = torch.export.export(module.eval(), args, dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, str(path))
    return str(path)


def run(*argv):
    return subprocess.run([harness.CLI, *argv], capture_output=True, text=True)


def rewrite(src, dst, change):
    """A copy of zip `src` with change(name, bytes) -> bytes or None (entry dropped)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            data = change(name, zin.read(name))
            if data is not None:
                zout.writestr(name, data)
    return str(dst)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    batch = torch.export.Dim("batch", min=1, max=64)
    return save_program(Net(), (torch.randn(2, 3, 16, 16),), tmp_path_factory.mktemp("pt2") / "net.pt2",
                        dynamic_shapes={"x": {0: batch}})


def test_check_reads_the_program(net):
    r = run("check", net)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"{net}: torch.export program 'model', export schema 8.")
    assert f"torch {torch.__version__}" in lines[0]
    sym = next(line for line in lines if line.strip().startswith("input x:")).split("[")[1].split(",")[0]
    assert "  input x: float32[%s, 3, 16, 16]" % sym in lines
    assert f"  {sym} in [1, 64]" in lines
    assert any(line.startswith("  output ") and line.endswith(f"float32[{sym}, 4]") for line in lines)
    assert "  6 parameters, 3 buffers, 0 constants" in lines


def test_check_names_operators_without_a_symbolic(tmp_path):
    path = save_program(WithInverse(), (torch.randn(3, 3),), tmp_path / "inv.pt2")
    r = run("check", path, "--opset", "13")
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1) if "# INVERSE_LINE" in text)
    assert "cannot be converted at opset 13" in r.stdout
    assert "  aten::fractional_max_pool2d x1" in r.stdout
    assert f"      head ({os.path.abspath(__file__)}:{line})" in r.stdout


def ort_matches(program, onnx_path, inputs):
    """ONNX Runtime against the program's own module on each input tuple."""
    import numpy as np
    import onnxruntime

    ep = torch.export.load(program)
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    for args in inputs:
        with torch.no_grad():
            expected = harness.flatten(ep.module()(*args))
        actual = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
        harness.compare(expected, actual)
        assert all(isinstance(a, np.ndarray) for a in actual)


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def test_export_with_a_dynamic_batch(net, tmp_path):
    """Symbolic batch -> a named dynamic dim, run at other batch sizes, 1 included;
    Conv+BatchNorm folded, the global mean one ReduceMean."""
    out = tmp_path / "net.onnx"
    r = run("export", net, "-o", str(out))
    assert r.returncode == 0, r.stderr
    model = harness.full_check(str(out))
    assert [i.name for i in model.graph.input] == ["x"]
    assert dims(model.graph.input[0]) == ["x_dim_0", 3, 16, 16]
    assert dims(model.graph.output[0]) == ["x_dim_0", 4]
    ops = [n.op_type for n in model.graph.node]
    assert "BatchNormalization" not in ops and ops.count("ReduceMean") == 1
    # the dim's range (what ONNX cannot check) is noted in the model's metadata
    assert {p.key: p.value for p in model.metadata_props}["torch2onnx.dynamic_dim_ranges"] == "x_dim_0 in [1, 64]"
    ort_matches(net, out, [(torch.randn(b, 3, 16, 16),) for b in (2, 1, 5, 64)])
    # run to run, the same bytes
    again = tmp_path / "again.onnx"
    assert run("export", net, "-o", str(again)).returncode == 0
    assert out.read_bytes() == again.read_bytes()


def test_export_names_dims_and_io(net, tmp_path):
    out = tmp_path / "named.onnx"
    r = run("export", net, "-o", str(out), "--input-names", "image", "--output-names", "logits",
            "--dynamic-axes", '{"image": {"0": "batch"}}', "--opset", "13")
    assert r.returncode == 0, r.stderr
    model = harness.full_check(str(out))
    assert dims(model.graph.input[0]) == ["batch", 3, 16, 16] and model.graph.input[0].name == "image"
    assert dims(model.graph.output[0]) == ["batch", 4] and model.graph.output[0].name == "logits"
    ort_matches(net, out, [(torch.randn(3, 3, 16, 16),)])


class Sizes(nn.Module):
    """Size arithmetic (SymInts), views, split, an in-place op, two outputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        b = x.shape[0]
        y = x.view(b, -1)
        z = self.fc(y).reshape(b, 5, 1) + x.size(1)
        z.relu_()
        return z * (b // 2 + 1), torch.cat([y, y], 1).split(6, 1)[1]


class Aliases(nn.Module):
    """Operator aliases programs keep (swapaxes, clip, multiply) and an in-place
    dropout on a view, which changes nothing in eval mode."""

    def forward(self, x):
        y = torch.nn.functional.dropout(x.flatten(1), 0.5, training=False, inplace=True)
        return torch.clip(torch.swapaxes(x, 1, 2), -0.5, 0.5), torch.multiply(y, 2)


class WritesIntoAView(nn.Module):
    def forward(self, x):
        mask = x.new_zeros(4, 4)
        mask[:2].fill_(1.0)
        return x + mask


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)

    def forward(self, x):
        return self.layer(x)


@pytest.mark.parametrize("name", ["sizes", "aliases", "encoder_layer", "resnet18"])
def test_export_models(name, tmp_path):
    torch.manual_seed(0)
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=64)
    if name == "sizes":
        module, example, shapes = Sizes(), torch.randn(4, 3, 4), {0: batch}
        more = [torch.randn(1, 3, 4), torch.randn(7, 3, 4)]
    elif name == "aliases":
        module, example, shapes = Aliases(), torch.randn(4, 3, 5), {0: batch}
        more = [torch.randn(1, 3, 5)]
    elif name == "encoder_layer":
        module, example, shapes = Encoder(), torch.randn(2, 10, 32), {0: batch, 1: seq}
        more = [torch.randn(1, 1, 32), torch.randn(3, 17, 32)]
    else:
        torchvision = pytest.importorskip("torchvision")
        module, example, shapes = torchvision.models.resnet18(), torch.randn(2, 3, 64, 64), {0: batch}
        more = [torch.randn(1, 3, 64, 64)]
    program = save_program(module, (example,), tmp_path / f"{name}.pt2", dynamic_shapes={"x": shapes})
    out = tmp_path / f"{name}.onnx"
    r = run("export", program, "-o", str(out))
    assert r.returncode == 0, r.stderr
    harness.full_check(str(out))
    ort_matches(program, out, [(example,)] + [(m,) for m in more])


def test_export_lists_every_unsupported_operator(tmp_path):
    path = save_program(WithInverse(), (torch.randn(3, 3),), tmp_path / "inv.pt2")
    out = tmp_path / "inv.onnx"
    r = run("export", path, "-o", str(out))
    assert r.returncode == 1
    assert f"Unsupported operator aten::fractional_max_pool2d at opset {min(20, harness.max_opset())}, in head (" in r.stderr
    assert not out.exists()


def test_operator_export_types_and_training(tmp_path):
    """--operator-export-type works on programs as on TorchScript archives (one conversion core); a program's
    training mode was fixed when it was captured, so --training train is a usage error."""
    import onnx

    path = save_program(WithInverse(), (torch.randn(3, 3),), tmp_path / "inv.pt2")
    out = tmp_path / "inv.onnx"
    r = run("export", path, "-o", str(out), "--operator-export-type", "onnx_aten_fallback")
    assert r.returncode == 0, r.stderr
    proto = onnx.load(str(out))
    onnx.checker.check_model(proto, full_check=True)
    aten = [n for n in proto.graph.node if n.op_type == "ATen"]
    assert len(aten) == 1 and aten[0].domain == "org.pytorch.aten"
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in aten[0].attribute}
    assert attrs["operator"] == b"fractional_max_pool2d" and attrs["overload_name"] == b""
    r = run("export", path, "-o", str(out), "--operator-export-type", "onnx_fallthrough")
    assert r.returncode == 0, r.stderr
    assert {(n.domain, n.op_type) for n in onnx.load(str(out)).graph.node if n.domain not in ("", "ai.onnx")} == {
        ("aten", "fractional_max_pool2d")}
    r = run("export", path, "-o", str(out), "--operator-export-type", "onnx_aten")
    assert r.returncode == 0, r.stderr
    kept = {onnx.helper.get_attribute_value(a) for n in onnx.load(str(out)).graph.node if n.op_type == "ATen"
            for a in n.attribute if a.name == "operator"}
    assert {b"fractional_max_pool2d", b"add", b"matmul"} <= kept
    r = run("export", path, "-o", str(tmp_path / "t.onnx"), "--training", "train")
    assert r.returncode == 2 and "training mode was fixed" in r.stderr
    assert not (tmp_path / "t.onnx").exists()


class Specialized(nn.Module):
    """Number arguments torch.export specializes (constant_input specs, no graph input), numbers returned as
    outputs (constant user outputs), a value read with item() (a SymFloat), and a mask whose selection has a
    data-dependent size (index_put with values of that size)."""

    def forward(self, x, n: int, f: float, flag: bool):
        y = x * n + f if flag else x
        z = y.clone()
        z[z > 0] = z[z > 0] * 2
        return z + x.max().item(), len([x, y]), 0.5


def test_specialized_numbers_constant_outputs_and_item(tmp_path):
    path = save_program(Specialized(), (torch.randn(3, 4), 3, 0.5, True), tmp_path / "s.pt2")
    out = tmp_path / "s.onnx"
    r = run("export", path, "-o", str(out), "--verify")
    assert r.returncode == 0, r.stderr
    import onnx

    proto = onnx.load(str(out))
    onnx.checker.check_model(proto, full_check=True)
    assert [i.name for i in proto.graph.input] == ["x"]  # the specialized numbers are no inputs
    assert len(proto.graph.output) == 3
    x = torch.randn(3, 4)
    expected = Specialized()(x, 3, 0.5, True)
    got = harness.run_ort(str(out), [x.numpy()])[0]
    harness.compare([expected[0], torch.tensor(2), torch.tensor(0.5, dtype=torch.float64)], got)


class ViewChains(nn.Module):
    """Writes through views of views (slice, select, transpose, permute,
    view), into a tensor that has views, and reads of views made before."""

    def forward(self, x):
        y = x.clone()
        before = y[1]  # a view made before the writes: it sees them
        y[:, 1:3][0].mul_(2)
        t = y.t()
        t[0].add_(1)
        y.view(-1)[::5].fill_(-1.0)
        z = x.clone().permute(1, 0)
        z[2:].sub_(3)
        w = x.clone()
        v = w[0]
        w.mul_(10)  # a write into a tensor with views: v sees it
        return y, before * 1, z, v + 0


class WritesIntoASplit(nn.Module):
    """Writes into elements of split / split_with_sizes / unbind results, and a
    split element read after a write into its root."""

    def forward(self, x):
        y = x.clone()
        a, b = y.split(2)
        a.zero_()
        c, d, e = y.split([1, 2, 1], dim=1)
        d.mul_(3)
        rows = y.unbind(0)
        rows[3].add_(5)
        f, g = y.split(2)
        y.mul_(-1)  # f and g see it
        return y, g + 0, b * 1


class WritesIntoAStridedView(nn.Module):
    def forward(self, x):
        y = x.clone()
        z = y.as_strided((2, 2), (1, 4))
        z.fill_(0)
        return y


def test_writes_into_views_are_functionalized(tmp_path):
    """torch.export keeps in-place ops; one that writes into a view also changes
    the viewed tensor: the new value is written back through the views (the
    inverse of each view op), and views read after see it."""
    for name, module, example in [("view", WritesIntoAView(), torch.randn(4, 4)),
                                  ("chains", ViewChains(), torch.randn(4, 4)),
                                  ("split", WritesIntoASplit(), torch.randn(4, 4))]:
        program = save_program(module, (example,), tmp_path / f"{name}.pt2")
        out = tmp_path / f"{name}.onnx"
        r = run("export", program, "-o", str(out))
        assert r.returncode == 0, r.stderr
        harness.full_check(str(out))
        ort_matches(program, out, [(example,), (torch.randn(4, 4),)])
    # a write into a view whose op has no inverse here (as_strided): a clear error (and the way out)
    program = save_program(WritesIntoAStridedView(), (torch.randn(4, 4),), tmp_path / "strided.pt2")
    r = run("export", program, "-o", str(tmp_path / "strided.onnx"))
    assert r.returncode == 1 and "view made by aten::as_strided" in r.stderr and "run_decompositions" in r.stderr
    assert not (tmp_path / "strided.onnx").exists()


class SharedStorage(nn.Module):
    """Buffers that are views of one storage (a transpose, an offset slice): the
    archive stores the storage once, each tensor with its strides and offset."""

    def __init__(self):
        super().__init__()
        base = torch.arange(24.0).reshape(4, 6)
        self.register_buffer("t", base.t())
        self.register_buffer("s", base[1:3, 2:5])

    def forward(self, x):
        return x @ self.t + self.s.sum(), self.s * 2


def test_weights_sharing_a_storage(tmp_path):
    path = save_program(SharedStorage(), (torch.randn(2, 6),), tmp_path / "shared.pt2")
    out = tmp_path / "shared.onnx"
    r = run("export", path, "-o", str(out))
    assert r.returncode == 0, r.stderr
    ort_matches(path, out, [(torch.randn(2, 6),)])


def test_program_takes_no_inputs(net, tmp_path):
    r = run("export", net, "-o", str(tmp_path / "x.onnx"), "--input", "2x3x16x16")
    assert r.returncode == 2 and "takes no example inputs" in r.stderr


def edit_json(name_part, fn):
    def change(name, data):
        if name.endswith(name_part):
            return fn(data)
        return data
    return change


@pytest.mark.parametrize("case, change, message", [
    ("schema_7", edit_json("models/model.json", lambda d: json.dumps(
        dict(json.loads(d), schema_version={"major": 7, "minor": 3})).encode()),
     "is in export schema 7.3 (written by torch "),
    ("bad_json", edit_json("models/model.json", lambda d: d[: len(d) // 2]), "it is not valid JSON"),
    ("field_type", edit_json("models/model.json", lambda d: d.replace(b'"nodes": [', b'"nodes": 7, "x": [', 1)),
     "field 'graph.nodes' is not a list"),
    ("no_weight", lambda name, d: None if name.endswith("weights/weight_0") else d, "is missing"),
    ("no_program", lambda name, d: None if "/models/" in name else d, "it holds no program"),
    ("big_endian", edit_json("byteorder", lambda d: b"big"), "stored big-endian"),
])
def test_broken_programs_are_clear_errors(net, tmp_path, case, change, message):
    path = rewrite(net, tmp_path / f"{case}.pt2", change)
    r = run("check", path)
    assert r.returncode == 1, r.stdout
    assert message in r.stderr, r.stderr
    assert "internal error" not in r.stderr


def test_schema_major_message_names_the_supported_versions(net, tmp_path):
    path = rewrite(net, tmp_path / "s9.pt2", edit_json("models/model.json", lambda d: json.dumps(
        dict(json.loads(d), schema_version={"major": 9, "minor": 0})).encode()))
    r = run("check", path)
    assert "torch2onnx reads schema 8.x, which torch 2.9 to 2.15 write" in r.stderr


def test_old_layout_and_non_archives(tmp_path):
    old = tmp_path / "old.pt2"
    with zipfile.ZipFile(old, "w") as z:
        z.writestr("old/serialized_exported_program.json", "{}")
        z.writestr("old/serialized_state_dict.pt", b"")
    r = run("check", str(old))
    assert r.returncode == 1 and "layout torch 2.5 and older wrote" in r.stderr
    junk = tmp_path / "junk.pt2"
    junk.write_bytes(b"not a zip at all" * 10)
    r = run("check", str(junk))
    assert r.returncode == 1 and "it is not a zip archive" in r.stderr
    r = run("check", str(tmp_path / "missing.pt2"))
    assert r.returncode == 1 and "cannot be opened" in r.stderr
