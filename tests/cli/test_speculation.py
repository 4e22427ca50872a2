"""Scripted branches that the example does not take.

The example run also runs the untaken branch of every `prim::If` (on meta
copies of its inputs) to learn its values' types. Issue 23: a scripted ViT
crashed there about one run in five, because `aten::format` (a vararg
operator) was called without the input count TorchScript's interpreter
pushes, so it read stack slots that did not exist. These models take that
path; each is exported many times and must give the same clean result every
time. That fault was a read past a vector inside LibTorch, which
AddressSanitizer cannot see (LibTorch is not instrumented) and which crashed
only now and then: the first export of each model runs under valgrind, which
reports it on every run.
"""
import os
import shutil
import subprocess
import sys
from typing import Optional

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

RUNS = int(os.environ.get("T2O_SPECULATION_RUNS", "12"))
# T2O_SPECULATION_VALGRIND=0: no valgrind run (the 1.13 build: the stack
# handling valgrind checks is our code, the same in both builds, and the
# main build's runs check it; valgrind over LibTorch is most of this file's time).
VALGRIND = shutil.which("valgrind") if os.environ.get("T2O_SPECULATION_VALGRIND", "1") != "0" else None
SUPPRESSIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "valgrind", "libtorch.supp")
VALGRIND_ERROR = 97


class WhyNotFast(nn.Module):
    """nn.MultiheadAttention's fast-path check in small: a reason string
    built by f-strings in branches that the example does not take."""

    def forward(self, x):
        why = ""
        if x.dim() != 2:
            why = f"expected 2 dims, got {x.dim()}"
        elif x.size(0) > 1000:
            why = f"too many rows: {x.size(0)} of {x.size(1)}"
        if not why:
            return x * 2
        return x * 3


class DataDependentWhy(nn.Module):
    """The same, on a condition only the data decides: the untaken branch
    (with its f-string) stays and is speculated."""

    def forward(self, x):
        why = ""
        if bool(x.sum() > 1000.0):
            why = f"sum too large for {x.size(0)} rows"
        if not why:
            return x * 2
        return x * 3


class Attention(nn.Module):
    def __init__(self, need_weights=True, cross=False):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.need_weights = need_weights
        self.cross = cross

    def forward(self, x):
        kv = x.flip(1) if self.cross else x
        return self.attn(x, kv, kv, need_weights=self.need_weights)[0]


class Encoder(nn.Module):
    """nn.TransformerEncoder: its own fast-path checks around the layers'."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


def _export_repeatedly(tmp_path, module, x, runs=RUNS, valgrind=False):
    pt, args = tmp_path / "m.pt", tmp_path / "args.pt"
    torch.jit.save(torch.jit.script(module.eval()), str(pt))
    torch.save((x,), str(args))
    results = set()
    for i in range(runs):
        out = tmp_path / f"m{i}.onnx"
        cmd = [harness.CLI, "export", str(pt), "-o", str(out), "--args", str(args)]
        if i == 0 and valgrind and VALGRIND and "asan" not in harness.CLI:
            cmd = [VALGRIND, "-q", f"--error-exitcode={VALGRIND_ERROR}", f"--suppressions={SUPPRESSIONS}", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode != VALGRIND_ERROR, proc.stderr[-6000:]
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
        assert "Internal" not in proc.stderr, proc.stderr
        if proc.returncode == 1:
            assert "cannot convert" in proc.stderr, proc.stderr
            assert not out.exists()
        results.add((proc.returncode, proc.stderr, out.read_bytes() if out.exists() else b""))
    assert len(results) == 1, f"{len(results)} different results in {runs} runs"
    code, stderr, model = results.pop()
    if code == 0:
        with torch.no_grad():
            expected = module(x)
        harness.full_check(str(tmp_path / "m0.onnx"))
        got, _ = harness.run_ort(str(tmp_path / "m0.onnx"), [x.numpy()], str(tmp_path))
        harness.compare([expected], got)
    return code, stderr


def test_format_in_untaken_branches(tmp_path):
    # x.dim() and x.size(0) are static: the checks fold and the model exports.
    code, stderr = _export_repeatedly(tmp_path, WhyNotFast(), torch.randn(3, 4), valgrind=True)
    assert code == 0, stderr


def test_format_in_data_dependent_branches(tmp_path):
    # The branch stays (the data decides it) and is speculated; a string
    # carried out of a branch cannot be exported, and is named, every time.
    code, stderr = _export_repeatedly(tmp_path, DataDependentWhy(), torch.randn(3, 4), valgrind=True)
    assert code == 1 and "aten::format" in stderr, stderr


@pytest.mark.parametrize("need_weights,cross", [(True, False), (False, False), (False, True), (True, True)])
def test_scripted_multihead_attention(tmp_path, need_weights, cross):
    # The fast-path checks (device, grad mode, autocast, `query is key`,
    # reason strings) fold: the branch that runs is exported.
    torch.manual_seed(0)
    code, stderr = _export_repeatedly(tmp_path, Attention(need_weights, cross), torch.randn(2, 5, 16),
                                      valgrind=need_weights and not cross)
    assert code == 0, stderr


def test_scripted_transformer_encoder(tmp_path):
    torch.manual_seed(0)
    code, stderr = _export_repeatedly(tmp_path, Encoder(), torch.randn(2, 5, 16), runs=3)
    assert code == 0, stderr


@pytest.mark.parametrize("rows", [1, 3])
def test_optional_tensor_branches(tmp_path, rows):
    # The untaken branch reads an Optional[Tensor] that is None in the
    # example: speculation must not hand None to a kernel taking a Tensor.
    class Masked(nn.Module):
        def forward(self, x):
            mask: Optional[torch.Tensor] = None
            if x.size(0) > 2:
                mask = x > 0
            if mask is None:
                return x + 1
            return x.masked_fill(mask, 0.0) + x.sum(0)

    _export_repeatedly(tmp_path, Masked(), torch.randn(rows, 4), runs=4)
