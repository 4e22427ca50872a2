"""Every operator case of every family, exported with its input dims dynamic
(all of them, then dim 0 only), must be right in ONNX Runtime at other sizes
or refuse the export naming the dynamic dim: no lowering may bake the
example's sizes into a graph that claims to take others (dynamic_sweep.py).

CTest runs it in slices (T2O_SHARD: tests/conftest.py): `make test` every dim
dynamic, `make test-full` (T2O_FULL=1) dim 0 only."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dynamic_sweep  # noqa: E402
import harness  # noqa: E402


@pytest.mark.parametrize("mode", ["first"] if harness.FULL else ["all"])
@pytest.mark.parametrize("family", dynamic_sweep.families())
def test_dynamic_sweep(family, mode, tmp_path, monkeypatch):
    monkeypatch.setattr(dynamic_sweep, "MODE", mode)
    verdicts = dynamic_sweep.sweep(family, str(tmp_path))
    bad = [f"{name}: {detail}" for name, verdict, detail in verdicts if verdict == "BAD"]
    assert not bad, f"{len(bad)} silently wrong at other sizes ({mode} dims dynamic):\n" + "\n".join(bad)
