"""Drop-in parity: one call exported by torch2onnx.export and by torch.onnx's
TorchScript exporter (dynamo=False). Both graphs must take the same inputs
(count, order, names) and give the same outputs, and torch2onnx's must match
PyTorch in ONNX Runtime, on the example args and on further argument sets.

Inputs are identified by giving every flat input a name ("i0", "i1", ...,
or the test's input_names: torch.onnx names the flattened args in order, then
drops those the graph does not read), so the comparison checks *which*
arguments each graph takes. (Default names differ on purpose: torch.onnx's
TorchScript exporter calls inputs "onnx::Mul_0", torch2onnx uses the
argument names, as torch.onnx's dynamo exporter does.)
"""
import copy
import inspect
import io
import warnings

import numpy as np
import onnx
import onnxruntime
import torch

import torch2onnx
from conftest import check_onnx, harness

TORCHSCRIPT_EXPORTER = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


def flat_inputs(args, script):
    """The example args as graph inputs, in torch.onnx's order: tensors,
    numbers (0-d), tuples and lists flattened, a dict's tensor keys and values;
    None and strings make none; a quantized tensor makes three. A trailing dict
    holds keyword args."""
    out = []

    def walk(v):
        if isinstance(v, torch.Tensor) and v.is_quantized:  # integers, scale (float64), zero point (int64)
            out.extend([v.int_repr(), torch.tensor(v.q_scale(), dtype=torch.float64),
                        torch.tensor(v.q_zero_point(), dtype=torch.int64)])
        elif isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, bool):
            out.append(torch.tensor(v))
        elif isinstance(v, int):
            out.append(torch.tensor(v, dtype=torch.int64))
        elif isinstance(v, float):
            out.append(torch.tensor(v, dtype=torch.float64))
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, torch.Tensor):
                    out.append(k)
                walk(x)

    walk(args)
    return out


def _call(model, args):
    args = copy.deepcopy(args)
    kwargs = {}
    if args and isinstance(args[-1], dict):
        kwargs, args = args[-1], args[:-1]
    with torch.no_grad():
        return model(*args, **kwargs)


def _outputs(value, proto):
    """PyTorch's outputs as the graph `proto` returns them (numbers as 0-d
    arrays; None where it has an optional output, dropped elsewhere)."""
    flat = harness.align_optional(harness.flatten(value, numbers=True, none=True), harness.optional_outputs(proto))
    return [None if v is None else np.asarray(v.numpy() if isinstance(v, torch.Tensor) else v) for v in flat]


def _run(data, flat, names):
    """Runs the model, feeding each graph input the flat arg of its name
    (names[k] names flat[k])."""
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in session.get_inputs():
        assert i.name in names, f"unexpected input {i.name}"
        feeds[i.name] = flat[names.index(i.name)].numpy()
    return session.run(None, feeds)


class Exports:
    """Both exports of one call; `ours`/`theirs` are ModelProtos (theirs: None
    when torch.onnx refused, with the exception in `theirs_error`)."""

    def __init__(self, model, args, opset, kwargs):
        self.ours_bytes = _export(torch2onnx.export, model, args, opset, kwargs)
        self.ours = check_onnx(self.ours_bytes)
        self.theirs_bytes, self.theirs, self.theirs_error = None, None, None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.theirs_bytes = _export(torch.onnx.export, model, args, opset, dict(kwargs, **TORCHSCRIPT_EXPORTER))
            self.theirs = onnx.load_from_string(self.theirs_bytes)
        except Exception as e:  # torch.onnx refuses: recorded, the test says whether that is expected
            self.theirs_error = e


def _export(fn, model, args, opset, kwargs):
    buf = io.BytesIO()
    fn(model, copy.deepcopy(args), buf, opset_version=opset, **kwargs)
    return buf.getvalue()


def _user_inputs(proto):
    inits = {i.name for i in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in inits]


def check(model, args, *, script=False, opset=17, more=(), theirs="same", quantization_step=None, **kwargs):
    """Exports `model` (scripted with script=True) on `args` with both
    exporters and compares them. theirs: "same" (torch.onnx exports the same
    interface and values), "wrong" (its values are wrong or ONNX Runtime
    cannot run its model; ours right), "fails" (it refuses or crashes),
    "other outputs" (its outputs differ on purpose: e.g. it makes an ONNX
    sequence of a list whose length is static; only ours is run), "not
    compared" (only ours is checked). `more`: further argument tuples, run on
    the same exported graphs. quantization_step: a quantized model's output step (harness.compare).
    Returns the Exports."""
    model = torch.jit.script(model) if script else model
    args = args if isinstance(args, tuple) else (args,)
    flat = flat_inputs(args, script)
    kwargs.setdefault("input_names", [f"i{k}" for k in range(len(flat))])
    names = kwargs["input_names"]
    e = Exports(model, args, opset, kwargs)
    if theirs == "fails":
        assert e.theirs is None, "torch.onnx exports this now: compare with it (theirs='same')"
    elif theirs == "not compared":  # (the reference is another torch.onnx: see the caller)
        pass
    else:
        assert e.theirs is not None, f"torch.onnx failed: {e.theirs_error}"
        assert _user_inputs(e.ours) == _user_inputs(e.theirs), "graph inputs differ from torch.onnx's"
        if theirs != "other outputs":
            assert len(e.ours.graph.output) == len(e.theirs.graph.output), "output count differs from torch.onnx's"
    theirs_right = []
    for run_args in (args,) + tuple(more):
        run_args = run_args if isinstance(run_args, tuple) else (run_args,)
        result = _call(model, run_args)
        expected = [None if x is None else torch.from_numpy(x) for x in _outputs(result, e.ours)]
        run_flat = flat_inputs(run_args, script)
        step = {"quantization_step": quantization_step and harness.quantization_steps(result, quantization_step)}
        harness.compare(expected, _run(e.ours_bytes, run_flat, names), **step)
        if theirs == "same":
            harness.compare(expected, _run(e.theirs_bytes, run_flat, names), **step)
        elif theirs == "wrong":
            try:
                harness.compare(expected, _run(e.theirs_bytes, run_flat, names), **step)
                theirs_right.append(True)
            except Exception:  # wrong values, or a model ONNX Runtime cannot run
                theirs_right.append(False)
    if theirs == "wrong":
        assert not all(theirs_right), "torch.onnx gets this right now: theirs='same'"
    return e
