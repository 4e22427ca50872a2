"""`torch2onnx verify MODEL.pt2 OUT.onnx` and `export MODEL.pt2 --verify`: the
program runs in LibTorch by torch2onnx's own runner (src/verify/program_runner.cpp,
no Python), on the sample inputs torch.export.save stored or on given ones, and
along every dynamic axis; runs outside the program's ranges are skipped with the
reason. ONNX Runtime's outputs are also checked against the program run by
PyTorch itself (ep.module()), so a runner agreeing with ONNX Runtime agrees with
PyTorch."""
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import onnxruntime as ort
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(torch, "cond") or not hasattr(torch.export, "save"),
                                reason="this torch has no torch.cond / torch.export")

from test_pt2_control_flow import Cond, NestedCond, NoGrad, ShapeCond, WhileLoop  # noqa: E402


class Tagger(nn.Module):
    """Integer tokens through an embedding, sizes used as numbers, two outputs (one integer)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, tokens, mask):
        h = self.fc(self.emb(tokens)) * mask
        h = h / tokens.shape[1] + h.reshape(-1, 3)[: tokens.shape[0]].sum() * 0.01
        return h, h.argmax(-1)


class Counter(nn.Module):
    """Writes into a buffer (a BufferMutation output): each run must start from the stored value."""

    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(3))

    def forward(self, x):
        self.seen.add_(x.sum(0))
        return x * self.seen


def cli(*args):
    return subprocess.run([harness.CLI, *args], capture_output=True, text=True)


def save_program(module, args, path, dynamic_shapes=None):
    torch.manual_seed(0)
    ep = torch.export.export(module.eval(), args, dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, str(path))
    return str(path), ep


def runs(stdout):
    """{run label: [match column of each output]} of the tables."""
    out, label = {}, None
    for line in stdout.splitlines():
        if re.match(r"^[^|].*:$", line):
            label = line[:-1]
            out[label] = []
        elif label and line.startswith("| ") and not line.startswith("| output"):
            out[label].append(re.split(r"(?<!\\)\|", line)[-2].strip())
        elif ": skipped: " in line:
            out[line.split(": skipped: ")[0]] = ["skipped: " + line.split(": skipped: ")[1]]
    return out


def ort_matches_pytorch(onnx_path, ep, args):
    """ONNX Runtime against the program run by PyTorch (ep.module())."""
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
    with torch.no_grad():
        expected = ep.module()(*args)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    for got, want in zip(sess.run(None, feeds), expected):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4 * (1 + float(want.abs().max())))


def test_export_verify_on_the_stored_sample_inputs(tmp_path):
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=64)
    args = (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    program, ep = save_program(Tagger(), args, tmp_path / "tagger.pt2",
                               {"tokens": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}})
    out = str(tmp_path / "tagger.onnx")
    r = cli("export", program, "-o", out, "--verify")
    assert r.returncode == 0, r.stderr + r.stdout
    tables = runs(r.stdout)
    # (the ONNX dims are named after the inputs, as for TorchScript exports)
    assert list(tables) == ["example", "tokens_dim_0=5, tokens_dim_1=8", "tokens_dim_0=1, tokens_dim_1=1"], r.stdout
    assert all(m == ["yes", "yes"] for m in tables.values()), r.stdout
    assert "| 0 | 2×5×3 | float32 |" in r.stdout and "| 1 | 5×8 | int64 |" in r.stdout
    ort_matches_pytorch(out, ep, args)
    report = str(tmp_path / "tagger.md")  # the report gets the tables
    r = cli("export", program, "-o", out, "--verify", "--report", report)
    assert r.returncode == 0, r.stderr
    text = open(report).read()
    assert "## Verification" in text and "the program run in LibTorch (torch2onnx's runner)" in text, text
    assert "tokens_dim_0=5, tokens_dim_1=8:" in text and "| 1 | 5×8 | int64 |" in text, text
    torch.manual_seed(1)
    ort_matches_pytorch(out, ep, (torch.randint(0, 10, (5, 8)), torch.rand(5, 8, 1)))
    # given inputs instead of the stored ones
    r = cli("verify", program, out, "--input", "3x4:int64", "--input", "3x4x1")
    assert r.returncode == 0, r.stderr
    assert list(runs(r.stdout)) == ["example", "tokens_dim_0=6, tokens_dim_1=7", "tokens_dim_0=1, tokens_dim_1=1"]


@pytest.mark.parametrize("name", ["cond", "nested_cond", "shape_cond", "while_loop", "no_grad"])
def test_higher_order_operators_run(tmp_path, name):
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    module, args, dyn = {
        "cond": (Cond(), (torch.randn(3, 4),), {"x": {0: batch}}),
        "nested_cond": (NestedCond(), (torch.rand(3, 4), torch.randn(3, 4)), None),
        "shape_cond": (ShapeCond(), (torch.randn(6, 4),), {"x": {0: batch}}),
        "while_loop": (WhileLoop(), (torch.randn(2, 4), torch.tensor([1, 2])), None),
        "no_grad": (NoGrad(), (torch.randn(3, 4),), {"x": {0: batch}}),
    }[name]
    program, ep = save_program(module, args, tmp_path / f"{name}.pt2", dyn)
    out = str(tmp_path / f"{name}.onnx")
    r = cli("export", program, "-o", out, "--verify")
    assert r.returncode == 0, r.stderr + r.stdout
    tables = runs(r.stdout)
    assert tables and all(set(m) == {"yes"} for m in tables.values()), r.stdout
    assert len(tables) == (3 if dyn else 1)
    ort_matches_pytorch(out, ep, args)


def test_a_wrong_model_fails_and_the_runs_outside_the_range_are_skipped(tmp_path):
    batch = torch.export.Dim("batch", min=2, max=6)
    x = torch.randn(3, 4)
    torch.manual_seed(1)
    program, _ = save_program(Cond(), (x,), tmp_path / "cond.pt2", {"x": {0: batch}})
    torch.manual_seed(2)
    other, _ = save_program(Cond(), (x,), tmp_path / "other.pt2", {"x": {0: batch}})
    out = str(tmp_path / "other.onnx")
    assert cli("export", other, "-o", out).returncode == 0
    r = cli("verify", program, out)  # the same program with other weights
    assert r.returncode == 1, r.stdout
    assert "NO: max \\|onnxruntime - pytorch\\|" in r.stdout and "verification failed: example: output 0" in r.stderr
    tables = runs(r.stdout)
    assert re.fullmatch(r"skipped: input 0 \(x\) dim 0 \(s\d+ = 1\) is outside the program's range \[2, 6\]",
                        tables["x_dim_0=1"][0]), tables
    assert tables["x_dim_0=6"][0].startswith("NO: ")  # (3 + 3 is within the range)


def test_buffers_written_by_the_program_start_fresh_each_run(tmp_path):
    program, ep = save_program(Counter(), (torch.randn(4, 3),), tmp_path / "counter.pt2")
    out = str(tmp_path / "counter.onnx")
    r = cli("export", program, "-o", out, "--verify")
    assert r.returncode == 0, r.stderr + r.stdout
    assert runs(r.stdout) == {"example": ["yes"]}
    r = cli("verify", program, out)  # twice in one process would add twice without fresh copies
    assert r.returncode == 0, r.stdout


def test_errors_are_clear(tmp_path):
    program, _ = save_program(NoGrad(), (torch.randn(3, 4),), tmp_path / "nograd.pt2")
    out = str(tmp_path / "nograd.onnx")
    assert cli("export", program, "-o", out).returncode == 0
    r = cli("verify", program, out, "--input", "3x4:int64")
    assert r.returncode == 2 and "the example inputs do not fit the program: input 0 (x) is Long, the program takes float32" in r.stderr, r.stderr
    r = cli("verify", program, out, "--input", "5x4")
    assert r.returncode == 2 and "input 0 (x) dim 0 is 5, the program fixes it at 3" in r.stderr, r.stderr
    # an archive without its sample inputs: they must be given
    bare = str(tmp_path / "bare.pt2")
    with zipfile.ZipFile(program) as zin, zipfile.ZipFile(bare, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            if "sample_inputs" not in name:
                zout.writestr(name, zin.read(name))
    r = cli("verify", bare, out)
    assert r.returncode == 2 and "holds no sample inputs" in r.stderr and "--input" in r.stderr, r.stderr
    assert cli("verify", bare, out, "--input", "3x4").returncode == 0
    fresh = str(tmp_path / "fresh.onnx")  # export --verify refuses before it exports: no file
    r = cli("export", bare, "-o", fresh, "--verify")
    assert r.returncode == 2 and "holds no sample inputs" in r.stderr and not os.path.exists(fresh), r.stderr
    r = cli("export", program, "-o", fresh, "--verify", "--input", "3x5")
    assert r.returncode == 2 and "dim 1 is 5, the program fixes it at 4" in r.stderr and not os.path.exists(fresh)
    r = cli("export", program, "-o", out, "--input", "3x4")
    assert r.returncode == 2 and "with --verify, inputs are what it verifies on" in r.stderr


class NoisyTagger(Tagger):
    """Tagger, then sizes read again and one random operator: only it differs."""

    def forward(self, tokens, mask):
        h, _ = super().forward(tokens, mask)
        flat = h.reshape(tokens.shape[0], tokens.shape[1] * 3)
        return flat.relu() * 2 + torch.rand_like(flat) / tokens.shape[1]


def test_find_mismatch_bisects_the_program(tmp_path):
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=1, max=64)
    args = (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    dyn = {"tokens": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}}
    noisy, _ = save_program(NoisyTagger(), args, tmp_path / "noisy.pt2", dyn)
    r = cli("find-mismatch", noisy)
    assert r.returncode == 1, r.stderr + r.stdout
    assert "Mismatch found." in r.stdout and "Mismatch node kinds: {'aten::rand_like': 1}" in r.stdout, r.stdout
    assert re.search(r"X id: \d+  aten::rand_like in <top module> \(.*test_verify_pt2.py:\d+\)", r.stdout), r.stdout
    # the parts that read sizes the run computed before them match (they are numbers there)
    assert r.stdout.count("\u2713 id:") >= 2 and "could not be checked" not in r.stdout, r.stdout
    # the same with inputs given, and a clean program
    r = cli("find-mismatch", noisy, "--input", "3x4:int64", "--input", "3x4x1")
    assert r.returncode == 1 and "aten::rand_like" in r.stdout
    clean, _ = save_program(Tagger(), args, tmp_path / "tagger.pt2", dyn)
    r = cli("find-mismatch", clean, "--opset", "13")
    assert r.returncode == 0 and "No mismatch found." in r.stdout, r.stdout + r.stderr
