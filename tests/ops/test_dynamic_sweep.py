"""Every operator case of every family, exported with its input dims dynamic
(all of them, then dim 0 only), must be right in ONNX Runtime at other sizes
or refuse the export naming the dynamic dim: no lowering may bake the
example's sizes into a graph that claims to take others (dynamic_sweep.py).
The other sizes: grown, and (for PyTorch's run-time size rules) every dim
shrunk to 1 or every dim of 1 grown.

CTest runs it in slices (T2O_SHARD: tests/conftest.py): `make test` every dim
dynamic at grown sizes and the size-rule families at sizes of 1, `make
test-full` (T2O_FULL=1) dim 0 only, and every family at sizes of 1 and from 1."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dynamic_sweep  # noqa: E402
import harness  # noqa: E402


# The families where PyTorch's run-time size rules live (docs/runtime_rules.md):
# `make test` also runs them at sizes of 1; `make test-full` runs every family so.
SIZE_RULE_FAMILIES = ["test_" + f for f in ("shape", "join_split", "copy", "indexing", "slicing", "rearrange",
                                            "control_flow")]


def runs():
    if harness.FULL:
        return ([("first", "grow", f) for f in dynamic_sweep.families()] +
                [("all", sizes, f) for sizes in ("one", "from_one") for f in dynamic_sweep.families()
                 if sizes == "from_one" or f not in SIZE_RULE_FAMILIES])
    return [("all", "grow", f) for f in dynamic_sweep.families()] + [("all", "one", f) for f in SIZE_RULE_FAMILIES]


@pytest.mark.parametrize("mode,sizes,family", runs())
def test_dynamic_sweep(mode, sizes, family, tmp_path, monkeypatch):
    monkeypatch.setattr(dynamic_sweep, "MODE", mode)
    monkeypatch.setattr(dynamic_sweep, "SIZES", sizes)
    verdicts = dynamic_sweep.sweep(family, str(tmp_path))
    bad = [f"{name}: {detail}" for name, verdict, detail in verdicts if verdict == "BAD"]
    assert not bad, f"{len(bad)} silently wrong at other sizes ({mode} dims dynamic, sizes {sizes}):\n" + "\n".join(bad)
    # (a refusal must say why the dynamic dims matter: an export error that does not is a failure too)
    errors = [f"{name}: {detail}" for name, verdict, detail in verdicts if verdict == "error"]
    assert not errors, f"{len(errors)} refused without naming the dynamic dims:\n" + "\n".join(errors)
