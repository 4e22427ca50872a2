"""The torch2onnx command line tool: options and failure behaviour.

Run with /usr/bin/python3 -m pytest tests/cli.
"""
import os
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.flatten(1))


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x, y):
        return self.fc(x) + y, x.sum()


class Unsupported(nn.Module):
    """Two operators torch2onnx has no symbolic for, in two submodules."""

    class Spectral(nn.Module):
        def forward(self, x):
            return torch.nn.functional.fractional_max_pool2d((torch.outer(x, x) + 8 * torch.eye(x.shape[0]))[None], 2, output_size=3,
                                                         _random_samples=torch.full((1, 1, 2), 0.5))

    class Bessel(nn.Module):
        def forward(self, x):
            return torch.poisson(x.abs())

    def __init__(self):
        super().__init__()
        self.spectral = Unsupported.Spectral()
        self.bessel = Unsupported.Bessel()

    def forward(self, x):
        return self.spectral(x).sum() + self.bessel(x).sum() + self.bessel(x * 2).sum()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    torch.manual_seed(0)
    m = Small().eval()
    x = torch.randn(2, 3, 8, 8)
    harness.trace(m, (x,), str(d / "small.pt"))
    torch.save((x,), str(d / "args.pt"))
    with torch.no_grad():
        expected = m(x)
    return d, m, x, expected


def run(*args):
    return subprocess.run([harness.CLI, *args], capture_output=True, text=True)


def test_export_matches_pytorch(small, tmp_path):
    d, _, x, expected = small
    out = str(tmp_path / "m.onnx")
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"))
    harness.full_check(out)
    actual, _ = harness.run_ort(out, [x.numpy()], str(tmp_path))
    harness.compare([expected], actual)


def test_model_header(small, tmp_path):
    d = small[0]
    for opset, ir in [(9, 4), (11, 6), (13, 7), (17, 8), (18, 8), (19, 9), (20, 9), (21, 10), (22, 10), (23, 11)]:
        if opset > harness.max_opset():
            continue
        out = str(tmp_path / f"m{opset}.onnx")
        harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"), extra=["--opset", str(opset)])
        m = onnx.load(out)
        assert m.ir_version == ir
        assert [(o.domain, o.version) for o in m.opset_import] == [("", opset)]
        assert m.producer_name == "torch2onnx" and m.producer_version
        names = {i.name for i in m.graph.initializer}
        assert {"conv.weight", "conv.bias", "fc.weight", "fc.bias"} <= names or "fc.weight" in names
        # graph inputs/outputs carry dtype and full shape; intermediate values have value_info
        inp = m.graph.input[0]
        assert inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
        assert [dd.dim_value for dd in inp.type.tensor_type.shape.dim] == [2, 3, 8, 8]
        outp = m.graph.output[0]
        assert [dd.dim_value for dd in outp.type.tensor_type.shape.dim] == [2, 5]
        assert len(m.graph.value_info) >= 3


def test_parameter_names_and_no_export_params(small, tmp_path):
    d, m, x, expected = small
    out = str(tmp_path / "noparams.onnx")
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"),
                   extra=["--no-export-params", "--no-constant-folding"])
    model = harness.full_check(out)
    assert len(model.graph.initializer) == 0
    names = [i.name for i in model.graph.input]
    # the user input, then the weights in state_dict order (unused buffers like num_batches_tracked dropped)
    sd = [k for k in m.state_dict() if not k.endswith("num_batches_tracked")]
    assert names == ["x"] + sd
    feeds = [x.numpy()] + [m.state_dict()[k].numpy() for k in sd]
    actual, _ = harness.run_ort(out, feeds, str(tmp_path))
    harness.compare([expected], actual)


def test_keep_initializers_as_inputs(small, tmp_path):
    d = small[0]
    out = str(tmp_path / "keep.onnx")
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"), extra=["--keep-initializers-as-inputs"])
    model = harness.full_check(out)
    inputs = {i.name for i in model.graph.input}
    inits = {i.name for i in model.graph.initializer}
    assert inits and inits <= inputs
    assert "x" in inputs


def test_input_and_output_names(tmp_path):
    torch.manual_seed(0)
    m = TwoInputs().eval()
    x, y = torch.randn(4, 6), torch.randn(4, 3)
    pt = str(tmp_path / "two.pt")
    harness.trace(m, (x, y), pt)
    torch.save((x, y), str(tmp_path / "args.pt"))
    out = str(tmp_path / "two.onnx")
    harness.export(pt, out, args_path=str(tmp_path / "args.pt"),
                   extra=["--input-names", "first,second", "--output-names", "main"])
    model = harness.full_check(out)
    assert [i.name for i in model.graph.input] == ["first", "second"]
    assert [o.name for o in model.graph.output][0] == "main"
    assert len(model.graph.output) == 2
    # a shorter list names a prefix
    harness.export(pt, out, args_path=str(tmp_path / "args.pt"), extra=["--input-names", "only"])
    model = onnx.load(out)
    assert [i.name for i in model.graph.input][0] == "only"
    with torch.no_grad():
        expected = harness.flatten(m(x, y))
    actual, _ = harness.run_ort(out, [x.numpy(), y.numpy()], str(tmp_path))
    harness.compare(expected, actual)
    # too many names is a usage error
    proc = run("export", pt, "-o", out + "2", "--args", str(tmp_path / "args.pt"), "--input-names", "a,b,c,d,e")
    assert proc.returncode != 0 and "input_names" in proc.stderr


def test_verbose_prints_types_attributes_and_scopes(small, tmp_path):
    d = small[0]
    proc = run("export", str(d / "small.pt"), "-o", str(tmp_path / "v.onnx"), "--args", str(d / "args.pt"),
               "--verbose", "--no-constant-folding")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("graph(%x : Float(2, 3, 8, 8)")
    assert "%conv.weight : Float(4, 3, 3, 3)" in text
    assert "onnx::Conv[dilations=[1, 1], group=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]]" in text
    assert "scope: Small/Conv2d[conv]" in text
    assert "scope: Small/BatchNorm2d[bn]" in text
    assert "Float(2, 4, 8, 8)" in text
    assert "return (%output)" in text


def test_keep_doc_strings(small, tmp_path):
    d = small[0]
    out = str(tmp_path / "doc.onnx")
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"))
    assert all(not n.doc_string for n in onnx.load(out).graph.node)
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"), extra=["--keep-doc-strings"])
    docs = [n.doc_string for n in onnx.load(out).graph.node]
    assert all(docs)
    assert any("test_cli.py" in doc for doc in docs)  # the user's line (forward of Small)
    assert any("conv.py" in doc for doc in docs)


def test_random_inputs_from_shapes(small, tmp_path):
    d, m, _, _ = small
    out = str(tmp_path / "r.onnx")
    harness.export(str(d / "small.pt"), out, inputs=["2x3x8x8:float32"])
    harness.full_check(out)
    x = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    actual, _ = harness.run_ort(out, [x], str(tmp_path))
    with torch.no_grad():
        harness.compare([m(torch.from_numpy(x))], actual)


def test_npy_inputs(small, tmp_path):
    d, _, x, _ = small
    np.save(str(tmp_path / "x.npy"), x.numpy())
    out = str(tmp_path / "n.onnx")
    harness.export(str(d / "small.pt"), out, inputs=[str(tmp_path / "x.npy")])
    harness.full_check(out)


def test_deterministic_output(small, tmp_path):
    d = small[0]
    a, b = str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx")
    harness.export(str(d / "small.pt"), a, args_path=str(d / "args.pt"))
    harness.export(str(d / "small.pt"), b, args_path=str(d / "args.pt"))
    assert open(a, "rb").read() == open(b, "rb").read()


def test_ops_lists_operators_with_opset_ranges():
    proc = run("ops")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    top = harness.max_opset()
    assert f"aten::relu  9-{top}" in lines
    assert any(l.startswith(f"aten::layer_norm  9-{top}") for l in lines)


# ------------------------------------------------------------------ errors

def assert_clean_failure(proc, out_path, code, *fragments):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("torch2onnx: error: "), proc.stderr
    for f in fragments:
        assert f in proc.stderr, (f, proc.stderr)
    assert "Traceback" not in proc.stderr and "Segmentation" not in proc.stderr
    if out_path:
        assert not os.path.exists(out_path)
        leftovers = [f for f in os.listdir(os.path.dirname(out_path)) if ".tmp-" in f]
        assert not leftovers, leftovers


def test_missing_archive(tmp_path):
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(tmp_path / "nope.pt"), "-o", out, "--input", "1x3")
    assert_clean_failure(proc, out, 1, "cannot open model", "No such file")


def test_not_a_zip(tmp_path):
    p = tmp_path / "text.pt"
    p.write_text("hello, this is not a model")
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--input", "1x3")
    assert_clean_failure(proc, out, 1, "not a TorchScript archive", "not a zip")


def test_truncated_archive(small, tmp_path):
    d = small[0]
    data = open(d / "small.pt", "rb").read()
    p = tmp_path / "truncated.pt"
    p.write_bytes(data[: len(data) // 2])
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, "truncated.pt", "is corrupt", "truncated")


def test_damaged_code_fails_its_crc(small, tmp_path):
    d = small[0]
    data = bytearray(open(d / "small.pt", "rb").read())
    with zipfile.ZipFile(d / "small.pt") as z:
        info = next(i for i in z.infolist() if i.filename.endswith(".py"))
    lh = info.header_offset
    start = lh + 30 + int.from_bytes(data[lh + 26:lh + 28], "little") + int.from_bytes(data[lh + 28:lh + 30], "little")
    data[start + 10] ^= 0x20  # one flipped bit in the code, as a bad disk or download would
    p = tmp_path / "bitflip.pt"
    p.write_bytes(bytes(data))
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, "bitflip.pt", "is corrupt", "__torch__")


def _rewrite_entry(src_path, dst_path, suffix, change):
    """A copy of the archive with one entry changed (and a valid CRC: the zip is rewritten)."""
    src = zipfile.ZipFile(src_path)
    with zipfile.ZipFile(dst_path, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, change(data) if name.endswith(suffix) else data)


def _code_calling(src, dst, op, records=()):
    """A copy of the archive whose code calls `op` instead of torch.relu, plus extra records."""
    _rewrite_entry(src, dst, ".py", lambda b: b.replace(b"torch.relu(", op.encode() + b"(", 1))
    assert op.encode() in b"".join(zipfile.ZipFile(dst).read(n) for n in zipfile.ZipFile(dst).namelist())
    if records:
        prefix = zipfile.ZipFile(dst).namelist()[0].split("/")[0]
        with zipfile.ZipFile(dst, "a") as z:
            for name, data in records:
                z.writestr(f"{prefix}/{name}", data)


# LibTorch refuses these archives; the message says why and what to do, and
# never calls the file corrupt. A torch 2.x archive calls operators an older
# LibTorch lacks (aten::scaled_dot_product_attention for LibTorch 1.13): the
# operator, the code line, this build's LibTorch and the archive's producer
# (its byteorder record: PyTorch 2.1+) are named.
_REFUSED = {
    "newer": (lambda src, dst: _code_calling(src, dst, "torch.t2o_future_op", [("byteorder", b"little")]),
              ["its code calls aten::t2o_future_op (code/", "line ", "this torch2onnx's LibTorch ", "does not have",
               "PyTorch 2.1 or newer"]),
    "custom": (lambda src, dst: _code_calling(src, dst, "ops.my_ops.fancy_relu"),
               ["its code calls my_ops::fancy_relu", "custom operator", "TORCH_LIBRARY"]),
    "v99": (lambda src, dst: _rewrite_entry(src, dst, "/version", lambda b: b"99\n"),
            ["archive format version 99", "reads versions up to", "saved by a newer PyTorch"]),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_archives_libtorch_refuses(small, tmp_path, case):
    d = small[0]
    make, fragments = _REFUSED[case]
    p = tmp_path / f"{case}.pt"
    make(d / "small.pt", p)
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, f"{case}.pt", *fragments)
    assert "corrupt" not in proc.stderr and "()" not in proc.stderr


def _libtorch_version():
    out = subprocess.run([harness.CLI, "--version"], capture_output=True, text=True, check=True).stdout
    return tuple(int(v) for v in out.split("(LibTorch ")[1].split(")")[0].split(".")[:2])


def test_archive_saved_by_torch_2(tmp_path):
    # data/sdpa_torch2_13.pt: torch 2.13.0's torch.jit.save of
    # torch.jit.trace(lambda q: F.scaled_dot_product_attention(q, q, q)) on a
    # (2, 5, 16) input. LibTorch 1.13 has no such operator.
    pt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sdpa_torch2_13.pt")
    out = str(tmp_path / "o.onnx")
    proc = run("export", pt, "-o", out, "--input", "2x5x16")
    if _libtorch_version() < (2, 0):
        assert_clean_failure(proc, out, 1, "its code calls aten::scaled_dot_product_attention (code/__torch__.py, line 8)",
                             "LibTorch 1.13", "does not have", "PyTorch 2.1 or newer (it has a byteorder record")
    else:
        assert "cannot load" not in proc.stderr, proc.stderr


def test_loader_refusals_keep_libtorchs_reason(small, tmp_path):
    # Whatever else LibTorch's loader refuses, its reason reaches the user.
    d = small[0]
    src = zipfile.ZipFile(d / "small.pt")
    p = tmp_path / "noversion.pt"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as dst:
        for name in src.namelist():
            if not name.endswith("/version"):
                dst.writestr(name, src.read(name))
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, "noversion.pt", "loader refused it: ", "version")
    assert "()" not in proc.stderr and "Could this error message be improved" not in proc.stderr


def test_tensor_without_its_data(small, tmp_path):
    d = small[0]
    p = tmp_path / "nodata.pt"
    _rewrite_entry(d / "small.pt", p, "/data/2", lambda b: b"")
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, "nodata.pt", "is corrupt: tensor", "data holds 0")


def _shorten_record(src_path, dst_path, name_suffix, new_length):
    """A copy of a PyTorch archive whose record `name_suffix` claims fewer
    bytes (central directory sizes and CRC rewritten in place: every record
    keeps its offset and 64-byte alignment)."""
    import struct
    import zlib

    data = bytearray(open(src_path, "rb").read())
    info = next(i for i in zipfile.ZipFile(src_path).infolist() if i.filename.endswith(name_suffix))
    at = struct.unpack("<L", data[data.rfind(b"PK\x05\x06") + 16:][:4])[0]
    while True:
        assert data[at:at + 4] == b"PK\x01\x02"
        nlen, elen, clen = struct.unpack("<3H", data[at + 28:at + 34])
        if data[at + 46:at + 46 + nlen].decode() == info.filename:
            break
        at += 46 + nlen + elen + clen
    lho = struct.unpack("<L", data[at + 42:at + 46])[0]
    start = lho + 30 + sum(struct.unpack("<2H", data[lho + 26:lho + 30]))
    crc = zlib.crc32(bytes(data[start:start + new_length]))
    data[at + 16:at + 28] = struct.pack("<3L", crc, new_length, new_length)
    open(dst_path, "wb").write(bytes(data))


@pytest.mark.parametrize("mapped", [True, False])
def test_large_record_shorter_than_its_tensor(tmp_path, mapped):
    # A weight of 256 KiB (mapped from the file, not read) whose record holds
    # less than its tensor needs: reported, never read past.
    pt, args = tmp_path / "big.pt", tmp_path / "args.pt"
    torch.manual_seed(0)
    harness.trace(nn.Linear(256, 256), (torch.randn(2, 256),), str(pt))
    torch.save((torch.randn(2, 256),), str(args))
    weight = max((i for i in zipfile.ZipFile(pt).infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    assert weight.file_size == 256 * 256 * 4
    bad = tmp_path / "short.pt"
    _shorten_record(pt, bad, weight.filename, 100 * 1024)
    out = str(tmp_path / "o.onnx")
    env = dict(os.environ)
    env.pop("T2O_NO_MMAP", None)
    if not mapped:
        env["T2O_NO_MMAP"] = "1"
    proc = subprocess.run([harness.CLI, "export", str(bad), "-o", out, "--args", str(args)], capture_output=True,
                          text=True, env=env)
    assert_clean_failure(proc, out, 1, "short.pt", "is corrupt")
    assert ("holds 102400" in proc.stderr) == mapped, proc.stderr
    # The unmodified archive exports the same either way.
    outs = []
    for flag in ("mapped", "read"):
        env.pop("T2O_NO_MMAP", None)
        if flag == "read":
            env["T2O_NO_MMAP"] = "1"
        o = tmp_path / f"{flag}.onnx"
        subprocess.run([harness.CLI, "export", str(pt), "-o", str(o), "--args", str(args)], check=True, env=env)
        outs.append(o.read_bytes())
    assert outs[0] == outs[1]


def _damage_record(src_path, dst_path, pick):
    """A copy of a PyTorch archive with 4 bytes changed inside one tensor
    record chosen by `pick` (the zip is untouched: the record fails its CRC)."""
    import struct

    data = bytearray(open(src_path, "rb").read())
    records = [i for i in zipfile.ZipFile(src_path).infolist()
               if "/data/" in i.filename and not i.filename.endswith(".pkl")]
    info = pick(records)
    lh = info.header_offset
    start = lh + 30 + sum(struct.unpack("<2H", data[lh + 26:lh + 30]))
    for k in range(4):
        data[start + info.file_size // 2 + k] ^= 0x55
    open(dst_path, "wb").write(bytes(data))
    assert zipfile.ZipFile(dst_path).testzip() == info.filename
    return info.filename


@pytest.mark.parametrize("record", ["large", "small"])
@pytest.mark.parametrize("mapped", [True, False])
def test_damaged_weights_are_refused(tmp_path, record, mapped):
    # LibTorch's loader does not check the CRC of tensor records: torch2onnx
    # does, for the records it maps (64 KiB+) and those LibTorch reads alike.
    pt, args = tmp_path / "lin.pt", tmp_path / "args.pt"
    torch.manual_seed(0)
    harness.trace(nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4)), (torch.randn(2, 256),), str(pt))
    torch.save((torch.randn(2, 256),), str(args))
    bad = tmp_path / "damaged.pt"
    largest = record == "large"
    name = _damage_record(pt, bad, lambda rs: (max if largest else min)(rs, key=lambda i: i.file_size))
    env = dict(os.environ)
    env.pop("T2O_NO_MMAP", None)
    if not mapped:
        env["T2O_NO_MMAP"] = "1"
    out = str(tmp_path / "o.onnx")
    for cmd in (["export", str(bad), "-o", out, "--args", str(args)],
                ["export", str(bad), "-o", out, "--args", str(args), "--external-data"],
                ["check", str(bad), "--args", str(args)]):
        proc = subprocess.run([harness.CLI, *cmd], capture_output=True, text=True, env=env)
        assert_clean_failure(proc, out, 1, "damaged.pt", "is corrupt", f"record '{name}' fails its CRC check")
        assert not os.path.exists(out + ".data")
    proc = subprocess.run([harness.CLI, "export", str(pt), "-o", out, "--args", str(args)], env=env)
    assert proc.returncode == 0


def test_zip64_archives_are_checked_too(tmp_path):
    # Archives past 4 GiB are zip64: their records are CRC-checked the same.
    pt, args = tmp_path / "lin.pt", tmp_path / "args.pt"
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4)).eval()
    x = torch.randn(2, 256)
    harness.trace(module, (x,), str(pt))
    torch.save((x,), str(args))
    z64 = tmp_path / "z64.pt"
    harness.as_zip64(pt, z64)
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(z64), "-o", out, "--args", str(args))
    assert proc.returncode == 0, proc.stderr
    with torch.no_grad():
        expected = module(x)
    got, _ = harness.run_ort(out, [x.numpy()], str(tmp_path))
    harness.compare([expected], got)
    os.remove(out)
    bad = tmp_path / "damaged.pt"
    name = _damage_record(pt, tmp_path / "d.pt", lambda rs: max(rs, key=lambda i: i.file_size))
    harness.as_zip64(tmp_path / "d.pt", bad, intact=False)
    proc = run("export", str(bad), "-o", out, "--args", str(args))
    assert_clean_failure(proc, out, 1, "damaged.pt", "is corrupt", f"record '{name}' fails its CRC check")


def test_damaged_example_args_are_refused(small, tmp_path):
    d = small[0]
    bad = tmp_path / "args.pt"
    name = _damage_record(d / "args.pt", bad, lambda rs: rs[0])
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(d / "small.pt"), "-o", out, "--args", str(bad))
    assert_clean_failure(proc, out, 1, "args.pt", "is corrupt", f"record '{name}' fails its CRC check")


def test_damaged_pickle_with_valid_crc(small, tmp_path):
    # LibTorch's unpickler sizes its memo table from LONG_BINPUT's index and
    # allocates a string's claimed length: a huge one is reported, not allocated.
    d = small[0]
    out = str(tmp_path / "o.onnx")
    for label, change in [
        ("memo", lambda b: b.replace(b"q\x00", b"r\xff\xff\xff\x7f", 1)),
        ("string", lambda b: b.replace(b"X\x08\x00\x00\x00training", b"X\xff\xff\xff\x7ftraining", 1)),
    ]:
        p = tmp_path / f"{label}.pt"
        _rewrite_entry(d / "small.pt", p, "/data.pkl", change)
        assert open(p, "rb").read() != open(d / "small.pt", "rb").read()
        proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
        assert_clean_failure(proc, out, 1, f"{label}.pt", "is corrupt", "data.pkl", "pickle")


def test_untyped_class_attribute_in_code(small, tmp_path):
    # LibTorch 1.13's importer dereferences the missing type of `name = value`
    # in a module class body (a crash): reported as a corrupt archive instead.
    d = small[0]
    p = tmp_path / "untyped.pt"
    _rewrite_entry(d / "small.pt", p, ".py", lambda b: b.replace(b"__buffers__", b"aten", 1))
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--args", str(d / "args.pt"))
    assert_clean_failure(proc, out, 1, "untyped.pt", "is corrupt", "class attribute 'aten' is assigned without a type")


def test_zip_that_is_not_torchscript(tmp_path):
    p = tmp_path / "plain.pt"
    torch.save(nn.Linear(2, 2), str(p))  # a pickled module, not TorchScript
    out = str(tmp_path / "o.onnx")
    proc = run("export", str(p), "-o", out, "--input", "1x2")
    assert_clean_failure(proc, out, 1, "not a TorchScript archive")
    q = tmp_path / "other.zip"
    with zipfile.ZipFile(q, "w") as z:
        z.writestr("readme.txt", "just a zip")
    proc = run("export", str(q), "-o", out, "--input", "1x2")
    assert_clean_failure(proc, out, 1, "other.zip")


def test_wrong_example_args(small, tmp_path):
    d = small[0]
    out = str(tmp_path / "o.onnx")
    # wrong count
    proc = run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--input", "2x3")
    assert_clean_failure(proc, out, 1, "forward() takes 1 input", "2 example args")
    # wrong rank
    proc = run("export", str(d / "small.pt"), "-o", out, "--input", "3x8x8x2x2")
    assert_clean_failure(proc, out, 1, "example inputs do not fit the model", "conv")
    # wrong dtype
    proc = run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8:int64")
    assert_clean_failure(proc, out, 1, "example inputs do not fit the model")
    # wrong channel count
    proc = run("export", str(d / "small.pt"), "-o", out, "--input", "2x5x8x8")
    assert_clean_failure(proc, out, 1, "example inputs do not fit the model")


def test_unsupported_operators_are_all_listed(tmp_path):
    m = Unsupported().eval()
    pt = str(tmp_path / "u.pt")
    harness.trace(m, (torch.randn(8),), pt)
    out = str(tmp_path / "o.onnx")
    proc = run("export", pt, "-o", out, "--input", "8")
    assert_clean_failure(proc, out, 1, "aten::fractional_max_pool2d", "aten::poisson", "spectral", "bessel",
                         "test_cli.py")
    assert "x2" in proc.stderr  # poisson occurs twice


def test_usage_errors(small, tmp_path):
    d = small[0]
    out = str(tmp_path / "o.onnx")
    assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2xAx8"), out, 2, "--input")
    assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--opset", "8"),
                         out, 2, "opset 8")
    above = str(harness.max_opset() + 1)
    assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--opset", above),
                         out, 2, "opset " + above)
    assert_clean_failure(run("export", str(d / "small.pt")), None, 2, "-o")
    assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--dynamic-axes",
                             '{"nope": [0]}'), out, 2, "dynamic_axes names 'nope'")
    assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--dynamic-axes",
                             '{"x": [0'), out, 2, "--dynamic-axes")
    for axis in ('{"x": {"4": "n"}}', '{"x": [-5]}'):
        assert_clean_failure(run("export", str(d / "small.pt"), "-o", out, "--input", "2x3x8x8", "--input-names", "x",
                                 "--dynamic-axes", axis), out, 2, "is out of range: it has 4 dimensions")
    assert_clean_failure(run("frobnicate"), None, 2, "unknown command")


def test_output_path_problems(small, tmp_path):
    d = small[0]
    proc = run("export", str(d / "small.pt"), "-o", str(tmp_path / "missing" / "o.onnx"), "--args", str(d / "args.pt"))
    assert_clean_failure(proc, None, 1, "cannot write", "missing")
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user that can write anywhere")
        proc = run("export", str(d / "small.pt"), "-o", str(ro / "o.onnx"), "--args", str(d / "args.pt"))
        assert_clean_failure(proc, None, 1, "cannot write")
    finally:
        os.chmod(ro, 0o700)


def test_failed_export_keeps_existing_file(small, tmp_path):
    """A failing export must not destroy or half-overwrite an existing output."""
    d = small[0]
    out = tmp_path / "o.onnx"
    out.write_bytes(b"previous")
    proc = run("export", str(d / "small.pt"), "-o", str(out), "--input", "2x5x8x8")
    assert proc.returncode == 1
    assert out.read_bytes() == b"previous"


def test_external_data(small, tmp_path):
    d, _, x, expected = small
    out = str(tmp_path / "ext.onnx")
    harness.export(str(d / "small.pt"), out, args_path=str(d / "args.pt"), extra=["--external-data"])
    assert os.path.exists(out + ".data")
    model = onnx.load(out, load_external_data=False)
    external = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert external, "no initializer went to the data file"
    for t in external:
        info = {kv.key: kv.value for kv in t.external_data}
        assert info["location"] == "ext.onnx.data"
        assert int(info["offset"]) % 4096 == 0
    onnx.checker.check_model(out, full_check=True)
    actual, _ = harness.run_ort(out, [x.numpy()], str(tmp_path))
    harness.compare([expected], actual)


def test_modules_as_functions(small, tmp_path):
    d, _, x, expected = small
    out = str(tmp_path / "m.onnx")
    proc = run("export", str(d / "small.pt"), "--args", str(d / "args.pt"), "-o", out, "--opset", "15",
               "--modules-as-functions", "Linear,torch.nn.modules.conv.Conv2d")
    assert proc.returncode == 0, proc.stderr
    harness.full_check(out)
    proto = onnx.load(out)
    assert sorted(f.name for f in proto.functions) == ["Conv2d", "Linear"]
    assert {"Conv2d", "Linear"} <= {n.op_type for n in proto.graph.node}
    actual, _ = harness.run_ort(out, [x.numpy()], str(tmp_path))
    harness.compare([expected], actual)
    proc = run("export", str(d / "small.pt"), "--args", str(d / "args.pt"), "-o", out, "--opset", "14",
               "--modules-as-functions", "all")
    assert proc.returncode == 2 and "opset 15" in proc.stderr


class NeedsNewerOpset(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 0) + torch.poisson(x.abs())


def test_check_lists_every_unconvertible_operator(small, tmp_path):
    d = small[0]
    proc = run("check", str(d / "small.pt"), "--args", str(d / "args.pt"))
    assert proc.returncode == 0 and "converts at opset 17" in proc.stdout
    pt = str(tmp_path / "u.pt")
    harness.trace(Unsupported().eval(), (torch.randn(8),), pt)
    proc = run("check", pt, "--input", "8")
    assert proc.returncode == 1, proc.stderr
    assert "2 operators (3 occurrences)" in proc.stdout
    for fragment in ("aten::fractional_max_pool2d x1", "aten::poisson x2", "spectral", "bessel", "test_cli.py"):
        assert fragment in proc.stdout
    pt = str(tmp_path / "n.pt")
    harness.trace(NeedsNewerOpset().eval(), (torch.randn(8),), pt)
    proc = run("check", pt, "--input", "8", "--opset", "9")
    assert "aten::cumsum x1 (supported from opset 11)" in proc.stdout
    assert run("check", pt, "--input", "8", "--opset", "30").returncode == 2
    assert run("check", pt).returncode == 2  # no example inputs


def _ops(path):
    return [(n.domain, n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
            for n in onnx.load(path).graph.node]


def test_operator_export_types(small, tmp_path):
    pt = str(tmp_path / "u.pt")
    harness.trace(Unsupported().eval(), (torch.randn(8),), pt)
    out = str(tmp_path / "fallback.onnx")
    proc = run("export", pt, "--input", "8", "-o", out, "--operator-export-type", "onnx_aten_fallback")
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(onnx.load(out), full_check=True)
    aten = [(op[2]["operator"], op[2]["overload_name"]) for op in _ops(out) if op[1] == "ATen"]
    assert sorted(aten) == [(b"fractional_max_pool2d", b""), (b"poisson", b""), (b"poisson", b"")]
    assert all(op[0] == "org.pytorch.aten" for op in _ops(out) if op[1] == "ATen")
    assert {"ReduceSum", "Mul", "Add"} <= {op[1] for op in _ops(out)}  # the rest converts as usual
    out = str(tmp_path / "fallthrough.onnx")
    proc = run("export", pt, "--input", "8", "-o", out, "--operator-export-type", "onnx_fallthrough")
    assert proc.returncode == 0, proc.stderr
    kept = {(op[0], op[1]) for op in _ops(out) if op[0] not in ("", "ai.onnx")}
    assert kept == {("aten", "fractional_max_pool2d"), ("aten", "poisson")}
    fmp = next(op for op in _ops(out) if op[1] == "fractional_max_pool2d")
    assert fmp[2].get("kernel_size") == [2, 2]  # the operator's constant arguments as attributes
    # onnx_aten: every aten operator as an ATen node
    d = small[0]
    out = str(tmp_path / "aten.onnx")
    proc = run("export", str(d / "small.pt"), "--args", str(d / "args.pt"), "-o", out, "--operator-export-type", "onnx_aten")
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(onnx.load(out), full_check=True)
    assert {op[2]["operator"] for op in _ops(out) if op[1] == "ATen"} >= {b"_convolution", b"batch_norm", b"relu",
                                                                            b"linear"}
    assert run("export", pt, "--input", "8", "-o", out, "--operator-export-type", "caffe2").returncode == 2


def test_no_optimize(small, tmp_path):
    """--no-optimize leaves out the ONNX-side optimizations (here the Conv+BatchNorm fusion); the model still
    matches PyTorch."""
    d, m, x, expected = small
    ops = {}
    for flag in ([], ["--no-optimize"]):
        out = str(tmp_path / f"o{len(flag)}.onnx")
        proc = run("export", str(d / "small.pt"), "--args", str(d / "args.pt"), "-o", out, *flag)
        assert proc.returncode == 0, proc.stderr
        onnx.checker.check_model(onnx.load(out), full_check=True)
        harness.compare([expected], harness.run_ort(out, [x.numpy()])[0])
        ops[bool(flag)] = [op[1] for op in _ops(out)]
    assert "BatchNormalization" not in ops[False] and "BatchNormalization" in ops[True]


def test_example_args_file_that_is_not_a_saved_value(small, tmp_path):
    # LibTorch's pickle reader runs past the end of bytes that are not a
    # pickle (the fuzzer found it with --args pointing at an ONNX file).
    d = small[0]
    out = str(tmp_path / "o.onnx")
    for label, content in [("onnx", b"\x08\x08\x12\x07pytorch"),
                           ("badop", b"\x80\x02\xff\xff"), ("short", b"\x80\x02X\xff\xff\xff\x7fab")]:
        p = tmp_path / f"{label}.pt"
        p.write_bytes(content)
        proc = run("export", str(d / "small.pt"), "-o", out, "--args", str(p))
        assert_clean_failure(proc, out, 1, f"{label}.pt", "expected a value saved with torch.save")


class NestedCat(nn.Module):
    """Inception's blocks: branches that are concatenations, concatenated."""

    def forward(self, x):
        inner = torch.cat([x, x * 2], 1)
        shared = torch.cat([x + 1, x], 1)
        return torch.cat([x, inner, torch.cat([x - 1, x * 3], -2), shared], 1), shared


def test_nested_concats_are_one_concat(tmp_path):
    """fuse_concats: a Concat of Concats along the same axis is one Concat;
    an inner one that is also read elsewhere (or a graph output) stays."""
    model, _ = harness.check_module(NestedCat(), (torch.randn(2, 3, 4),), workdir=str(tmp_path))
    concats = [n for n in model.graph.node if n.op_type == "Concat"]
    assert len(concats) == 2, [len(n.input) for n in concats]
    assert sorted(len(n.input) for n in concats) == [2, 6]
