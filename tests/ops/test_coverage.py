"""Every registered operator has a test, every family file has a test file,
and docs/supported_ops.md is what the registry says."""
import glob
import importlib
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402
import optest  # noqa: E402


def registered():
    """The registry's operators (alias lines, "alias  9-28  (operator)", left out: aliases())."""
    out = subprocess.run([harness.CLI, "ops"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip() and not line.rstrip().endswith(")")}


def aliases():
    out = subprocess.run([harness.CLI, "ops"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0]: line.split()[2][1:-1] for line in out.splitlines() if line.rstrip().endswith(")")}


def test_aliases_name_registered_operators():
    found = aliases()
    assert {"aten::swapaxes", "aten::special_expit", "aten::special_round", "aten::clip"} <= set(found)
    assert set(found.values()) <= registered()
    assert not set(found) & registered()  # an alias converts through its operator only


def family_modules():
    mods = []
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        name = os.path.basename(path)[:-3]
        if name in ("test_coverage",):
            continue
        mods.append(importlib.import_module(name))
    return mods


def test_every_registered_operator_has_a_test():
    covered = set()
    for mod in family_modules():
        for case in getattr(mod, "CASES", []):
            try:
                if case.torchscript or not optest.pt2_available():
                    covered |= optest.graph_ops(optest.to_torchscript(case))
                else:
                    covered |= optest.program_ops(case)
            except Exception:
                pass  # a case that cannot even be traced is reported by its own test
    # In-place forms count for their operator and the other way round.
    covered |= {k[:-1] for k in covered if k.endswith("_") and not k.endswith("__")}
    # Operators this torch does not have (1.13 has no scaled_dot_product_attention) cannot be recorded.
    known = {op for op in registered() if not op.startswith("aten::") or torch._C._jit_get_schemas_for_operator(op)}
    # (custom ops of a library this environment lacks: transformers' in the 1.13 build)
    known = {op for op in known if not op.startswith("transformers::") or
             hasattr(getattr(torch.ops, "transformers", None), op.split("::")[1])}
    # (torch.onnx.ops: PyTorch 2.8+)
    known = {op for op in known if not op.startswith(("onnx::", "onnx_symbolic::")) or
             hasattr(getattr(torch, "onnx", None), "ops")}
    if not optest.pt2_available():  # (recorded by torch.export only: their cases need it)
        covered |= {"aten::max_unpool2d", "aten::max_unpool3d", "aten::orgqr"}
    if optest.TORCH_VERSION < (2, 0):  # (its cases are 2.x only: 1.13's lstsq differs from run to run)
        covered |= {"aten::linalg_lstsq"}
    missing = sorted(op for op in known if op not in covered)
    assert not missing, f"{len(missing)} registered operators have no test case: {missing}"


def test_every_family_has_a_test_file():
    families = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "src", "symbolics", "*.cpp"))}
    families.discard("all")
    tests = {os.path.basename(p)[5:-3] for p in glob.glob(os.path.join(HERE, "test_*.py"))}
    missing = sorted(families - tests)
    assert not missing, f"families without tests/ops/test_<family>.py: {missing}"


def test_supported_ops_doc_is_current():
    if harness.max_opset() < 28:  # (the document shows the default build's opsets, 9 to 28)
        import pytest
        pytest.skip("this build exports opsets up to %d only" % harness.max_opset())
    expected = subprocess.run([harness.CLI, "ops", "--markdown"], capture_output=True, text=True,
                              check=True).stdout
    path = os.path.join(ROOT, "docs", "supported_ops.md")
    current = open(path).read() if os.path.exists(path) else ""
    assert current == expected, ("docs/supported_ops.md is stale: regenerate it with "
                                 "`build/torch2onnx ops --markdown > docs/supported_ops.md`")
