"""`torch2onnx verify MODEL OUT.onnx` and `export --verify` (src/verify/:
LibTorch against ONNX Runtime's C API library, opened at run time): the
example and random inputs along every dynamic axis, a table per run, exit 1
on a mismatch."""
import os
import subprocess
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402


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


class Ignores(nn.Module):
    def forward(self, x, unused):
        return x.sin()


def cli(*args, env=None):
    return subprocess.run([harness.CLI, *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def save(tmp_path, module, args, name="model"):
    torch.manual_seed(0)
    path, args_path = str(tmp_path / f"{name}.pt"), str(tmp_path / f"{name}_args.pt")
    torch.jit.trace(module.eval(), args).save(path)
    torch.save(args, args_path)
    return path, args_path


DYNAMIC = ["--input-names", "tokens,scale", "--dynamic-axes",
           '{"tokens":{"0":"batch","1":"seq"},"scale":{"0":"batch","1":"seq"}}']


def test_export_verify_runs_every_dynamic_axis(tmp_path):
    torch.manual_seed(0)
    pt, args = save(tmp_path, Net(), (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1)))
    out = str(tmp_path / "net.onnx")
    r = cli("export", pt, "--args", args, "-o", out, *DYNAMIC, "--verify")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for label in ("example:", "batch=5, seq=8:", "batch=1, seq=1:"):
        assert label in text, text
    assert "| 0 | 5×8×3 | float32 | " in text and "| 1 | 5×8 | int64 | " in text, text
    assert "NO:" not in text
    # the standalone command on the written model says the same
    r2 = cli("verify", pt, out, "--args", args)
    assert r2.returncode == 0 and r2.stdout == text, r2.stderr


def test_a_size_baked_into_the_trace_fails(tmp_path):
    # The trace keeps 2.0 for x.shape[0], in its TorchScript and its ONNX alike;
    # the scripted module computes it: verified against the traced export, it
    # matches on the example and not at other batch sizes.
    pt, args = save(tmp_path, BakesTheBatch(), (torch.randn(2, 3),))
    out = str(tmp_path / "baked.onnx")
    r = cli("export", pt, "--args", args, "-o", out, "--dynamic-axes", '{"x":{"0":"n"}}', "--verify")
    assert r.returncode == 0, r.stderr  # (LibTorch runs the same trace)
    scripted = str(tmp_path / "scripted.pt")
    torch.jit.script(BakesTheBatch()).save(scripted)
    r = cli("verify", scripted, out, "--args", args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "example:" in r.stdout and "| 0 | 2×3 | float32 |" in r.stdout
    assert "n=5:" in r.stdout and "NO: max \\|onnxruntime - pytorch\\|" in r.stdout, r.stdout
    assert "verification failed: n=5: output 0: max |onnxruntime - pytorch|" in r.stderr, r.stderr
    # export --verify --report: the report gets the tables and the failure
    report = str(tmp_path / "scripted.md")
    r = cli("export", scripted, "--args", args, "-o", str(tmp_path / "s.onnx"), "--dynamic-axes", '{"x":{"0":"n"}}',
            "--verify", "--report", report)
    assert r.returncode == 0, r.stderr  # (the scripted module's own export computes the size)
    text = open(report).read()
    assert "## Verification" in text and "ONNX Runtime against LibTorch" in text and "n=5:" in text, text
    assert "| 0 | 5×3 | float32 |" in text and "Verification failed" not in text, text


def test_another_models_onnx_fails(tmp_path):
    torch.manual_seed(0)
    x = (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1))
    pt_a, args = save(tmp_path, Net(), x, "a")
    torch.manual_seed(1)
    pt_b, _ = save(tmp_path, Net(), x, "b")
    out = str(tmp_path / "a.onnx")
    assert cli("export", pt_a, "--args", args, "-o", out).returncode == 0
    r = cli("verify", pt_b, out, "--args", args)
    assert r.returncode == 1 and "NO: " in r.stdout and "verification failed: example: output 0" in r.stderr


def test_tolerances_and_unread_inputs(tmp_path):
    pt, args = save(tmp_path, Ignores(), (torch.randn(3), torch.randn(2)))
    out = str(tmp_path / "ignores.onnx")
    r = cli("export", pt, "--args", args, "-o", out, "--verify", "--rtol", "1e-6", "--atol", "1e-7")
    assert r.returncode == 0, r.stderr
    assert "does not read input" in r.stderr and "| 0 | 3 | float32 |" in r.stdout
    # standalone, the args hold a tensor the graph does not take: a clear refusal
    r2 = cli("verify", pt, out, "--args", args)
    assert r2.returncode == 2 and "the ONNX model has 1 inputs, the example args hold 2 tensors" in r2.stderr


def test_errors_are_clear(tmp_path):
    pt, args = save(tmp_path, BakesTheBatch(), (torch.randn(2, 3),))
    out = str(tmp_path / "m.onnx")
    assert cli("export", pt, "--args", args, "-o", out).returncode == 0
    r = cli("verify", pt, out, "--args", args, env={"T2O_ONNXRUNTIME_LIB": "/nonexistent/libonnxruntime.so"})
    assert r.returncode == 1 and "cannot load ONNX Runtime (/nonexistent/libonnxruntime.so)" in r.stderr, r.stderr
    r = cli("verify", pt, str(tmp_path / "missing.onnx"), "--args", args)
    assert r.returncode == 1 and "missing.onnx" in r.stderr, r.stderr
    r = cli("verify", pt, "--args", args)
    assert r.returncode == 2 and "verify needs a model and its ONNX model" in r.stderr
    r = cli("verify", str(tmp_path / "missing.pt2"), out)
    assert r.returncode == 1 and "missing.pt2" in r.stderr, r.stderr
    r = cli("export", pt, "--args", args, "-o", out, "--rtol", "x")
    assert r.returncode == 2 and "--rtol needs a non-negative number" in r.stderr


class Noisy(nn.Module):
    """Six operators, one of them random: only it differs between LibTorch and ONNX Runtime."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x).relu()
        return (h * 2 + torch.rand_like(h)).sum(-1)


def test_find_mismatch(tmp_path):
    torch.manual_seed(0)
    pt, args = save(tmp_path, Net(), (torch.randint(0, 10, (2, 5)), torch.rand(2, 5, 1)))
    r = cli("find-mismatch", pt, "--args", args, "--opset", "13")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("No mismatch found.\nTree:\n\u2713 id: (all)"), r.stdout
    pt, args = save(tmp_path, Noisy(), (torch.randn(3, 4),), "noisy")
    r = cli("find-mismatch", pt, "--args", args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("Mismatch found.\nTree:\nX id: (all)"), r.stdout
    assert "Mismatch node kinds: {'aten::rand_like': 1}" in r.stdout, r.stdout
    assert "aten::rand_like in" in r.stdout and "test_verify.py" in r.stdout, r.stdout
    r = cli("find-mismatch", str(tmp_path / "missing.pt2"), "--input", "3")
    assert r.returncode == 1 and "missing.pt2" in r.stderr, r.stderr
