"""Archives other torch versions wrote (tests/cli/data/pt2, made by its
make_archives.py under each torch): the CLI exports each one (C++ only: no
torch.export needed here) and ONNX Runtime reproduces the outputs that torch
computed when it wrote the archive, at several batch sizes."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pt2")
ARCHIVES = sorted(glob.glob(os.path.join(DATA, "*.pt2")))


def test_every_version_has_archives():
    versions = {os.path.basename(a).split("_torch")[1][: -len(".pt2")] for a in ARCHIVES}
    assert {"2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"} <= versions, versions


@pytest.mark.parametrize("archive", ARCHIVES, ids=os.path.basename)
def test_archive_exports_and_matches(archive, tmp_path):
    import onnxruntime

    out = tmp_path / "model.onnx"
    r = subprocess.run([harness.CLI, "export", archive, "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    harness.full_check(str(out))
    data = np.load(archive[: -len(".pt2")] + ".npz")
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    cases = sorted({k.split("_")[1] for k in data.files})
    assert len(cases) >= 3
    for case in cases:
        feeds = {i.name: data[f"in{k}_{case}"] for k, i in enumerate(session.get_inputs())}
        expected = [data[f"out{k}_{case}"] for k in range(len(session.get_outputs()))]
        harness.compare(expected, session.run(None, feeds))
