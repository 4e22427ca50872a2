"""Runs exported models in ONNX Runtime and compares them with PyTorch.

ONNX Runtime is reached through onnxruntime-node (the npm package) and a small
Node script (run.js), found in this order: $TORCH2ONNX_ORT (a directory with
run.js and node_modules/onnxruntime-node), the source tree's tools/ort when
torch2onnx runs from its build tree, the copy installed with the package
(onnxruntime-node resolved through NODE_PATH).
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import torch

from . import errors

__all__ = ["VerificationError", "run_onnx_runtime", "verify", "ort_runner"]


class VerificationError(errors.OnnxExporterError, AssertionError):
    """ONNX Runtime's outputs differ from PyTorch's (or it could not run the model)."""


def ort_runner():
    """The path of run.js, or raises with how to install ONNX Runtime."""
    candidates = []
    if os.environ.get("TORCH2ONNX_ORT"):
        candidates.append(os.path.join(os.environ["TORCH2ONNX_ORT"], "run.js"))
    try:
        from . import _build_info

        candidates.append(os.path.join(_build_info.SOURCE_DIR, "tools", "ort", "run.js"))
    except ImportError:
        pass
    candidates.append(os.path.join(os.path.dirname(__file__), "ort", "run.js"))
    for c in candidates:
        if os.path.exists(c):
            return c
    raise VerificationError(
        "verify needs ONNX Runtime: install it with `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node` "
        "in a directory holding torch2onnx's tools/ort/run.js and set TORCH2ONNX_ORT to that directory")


def _npy_array(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().contiguous().numpy()
    if isinstance(value, bool):
        return np.array(value, dtype=np.bool_)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)
    if isinstance(value, float):
        return np.array(value, dtype=np.float64)
    return np.asarray(value)


def run_onnx_runtime(model, inputs):
    """Runs the ONNX model (a path or serialized bytes) on `inputs` (tensors,
    numbers or arrays, in graph input order); returns the outputs as numpy arrays."""
    if shutil.which("node") is None:
        raise VerificationError("verify needs Node.js (`node`) to run ONNX Runtime (onnxruntime-node)")
    runner = ort_runner()
    with tempfile.TemporaryDirectory(prefix="torch2onnx-verify-") as tmp:
        if isinstance(model, (bytes, bytearray)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as fh:
                fh.write(model)
        else:
            path = os.fspath(model)
        cmd = ["node", runner, path]
        for i, value in enumerate(inputs):
            p = os.path.join(tmp, f"in{i}.npy")
            np.save(p, _npy_array(value))
            cmd += ["--in", p]
        out_dir = os.path.join(tmp, "out")
        os.makedirs(out_dir)
        cmd += ["--out", out_dir]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise VerificationError(f"ONNX Runtime could not run the model:\n{proc.stderr.strip()}")
        summary = json.loads(proc.stdout)
        return [np.load(os.path.join(out_dir, f"{i}.npy")) for i in range(len(summary["outputs"]))]


def _flatten(value, numbers):
    if isinstance(value, torch.Tensor):
        return [value]
    if numbers and isinstance(value, (bool, int, float)):
        return [value]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v, numbers)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v, numbers)]
    return []


def compare(expected, actual, rtol=1e-4):
    """Raises VerificationError unless each output matches: integers and bools
    exactly, floats within rtol * (1 + max |expected|)."""
    if len(expected) != len(actual):
        raise VerificationError(f"ONNX Runtime gave {len(actual)} outputs, PyTorch {len(expected)}")
    for k, (e, a) in enumerate(zip(expected, actual)):
        e = _npy_array(e)
        if e.shape != a.shape:
            raise VerificationError(f"output {k}: shape {list(a.shape)} in ONNX Runtime, {list(e.shape)} in PyTorch")
        if e.dtype.kind in "biu" or e.dtype == np.bool_:
            if not np.array_equal(e, a):
                raise VerificationError(f"output {k}: integer values differ ({int((e != a).sum())} elements)")
            continue
        if e.size == 0:
            continue
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        finite = np.isfinite(e64)
        if not np.array_equal(finite, np.isfinite(a64)) or not np.array_equal(e64[~finite], a64[~finite]):
            raise VerificationError(f"output {k}: inf/nan positions differ")
        diff = float(np.abs(e64[finite] - a64[finite]).max()) if finite.any() else 0.0
        bound = rtol * (1.0 + (float(np.abs(e64[finite]).max()) if finite.any() else 0.0))
        if diff > bound:
            raise VerificationError(f"output {k}: max |onnxruntime - pytorch| = {diff:.3g} > {bound:.3g}")


def verify(model, args, kwargs, onnx_model, values, scripted, rtol=1e-4):
    """Runs `model` in PyTorch and the exported `onnx_model` (path or bytes) in
    ONNX Runtime on the same example args and compares the outputs. `values`
    are what the core was given (scripted models take numbers as inputs too)."""
    from ._args import clone_tensors

    with torch.no_grad():  # on copies: forward() may write into its inputs
        expected = model(*clone_tensors(tuple(args)), **clone_tensors(dict(kwargs or {})))
    actual = run_onnx_runtime(onnx_model, _flatten(list(values), numbers=scripted))
    compare(_flatten(expected, numbers=True), actual, rtol)
