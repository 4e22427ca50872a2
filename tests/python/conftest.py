"""Python package tests: run with Debian's /usr/bin/python3 and the package
from the build tree (PYTHONPATH=build/python, set by CTest)."""
import os
import sys

import numpy as np
import onnx
import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
if not any(os.path.exists(os.path.join(p, "torch2onnx", "__init__.py")) for p in sys.path if p):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "python"))

import harness  # noqa: E402
import torch2onnx  # noqa: E402
from torch2onnx import verification  # noqa: E402


def run_ort(model, inputs):
    """Outputs of ONNX Runtime on `inputs` (tensors/arrays in graph input order)."""
    return verification.run_onnx_runtime(model, inputs)


def check_onnx(model):
    """Full ONNX check (with shape inference) of a path or bytes; returns the ModelProto."""
    proto = onnx.load_from_string(model) if isinstance(model, (bytes, bytearray)) else onnx.load(model)
    onnx.checker.check_model(proto, full_check=True)
    return proto


def assert_matches(expected, actual):
    """PyTorch's outputs (a tensor or nested tuple) against ONNX Runtime's arrays."""
    harness.compare(harness.flatten(expected), actual)


def export_and_run(model, args, tmp_path, run_inputs=None, name="model.onnx", **kw):
    """Exports with torch2onnx.export, checks the model and runs it in ONNX
    Runtime on `run_inputs` (default: the tensors of args). Returns
    (ModelProto, ORT outputs)."""
    path = str(tmp_path / name)
    torch2onnx.export(model, args, path, **kw)
    proto = check_onnx(path)
    if run_inputs is None:
        run_inputs = harness.flatten(args if isinstance(args, tuple) else (args,))
    return proto, run_ort(path, run_inputs)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    np.random.seed(0)
