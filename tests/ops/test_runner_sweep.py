"""Every operator case torch.export captures, exported from its .pt2 program
with --verify: torch2onnx's own .pt2 runner (LibTorch, no Python) and ONNX
Runtime must agree on the program's stored sample inputs (runner_sweep.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
import runner_sweep  # noqa: E402

pytestmark = pytest.mark.skipif(not optest.pt2_available(), reason="this torch has no torch.export")


@pytest.mark.parametrize("family", runner_sweep.families())
def test_runner_sweep(family, tmp_path):
    verdicts = runner_sweep.sweep(family, str(tmp_path))
    bad = [f"{name}: {detail}" for name, verdict, detail in verdicts if verdict == "BAD"]
    assert not bad, f"{len(bad)} programs where the runner and ONNX Runtime disagree:\n" + "\n".join(bad)
