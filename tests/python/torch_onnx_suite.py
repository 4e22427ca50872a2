"""The harness of torch.onnx's own ONNX Runtime tests mirrored by the project (issue 43).

Suite.run_test does what the suite's run_test (PyTorch's test/onnx/test_pytorch_onnx_onnxruntime.py, late 2022)
and torch.onnx's verification.verify do, with the export routed to torch2onnx.export: the classes are opset 17 x
{traced, scripted} x keep_initializers_as_inputs; the export gets the suite's arguments (a trailing dict of keyword
args, do_constant_folding, keep_initializers_as_inputs, dynamic_axes, input_names, output_names,
fixed_batch_size, training=EVAL, verbose); ONNX Runtime is fed as the suite feeds it (traced: the args
flattened by torch.jit._flatten; scripted: tuples flattened, keyword args by name; only the indices
remained_onnx_input_idx names); outputs are compared with torch.testing.assert_close at the case's
rtol/atol, shapes and dtypes exact (traced: PyTorch's None outputs dropped; scripted: kept), on the example
and on every additional_test_inputs set.
"""
import copy
import inspect
import io
import os

import numpy as np
import pytest
import torch

import torch2onnx
from torch2onnx import verification

OPSET = 17
EVAL = torch.onnx.TrainingMode.EVAL
# T2O_SUITE_REFERENCE=1 exports with torch.onnx's TorchScript exporter instead: checks the mirror itself.
REFERENCE = os.environ.get("T2O_SUITE_REFERENCE") == "1"


def export(model, args, f, **kwargs):
    if not REFERENCE:
        return torch2onnx.export(model, args, f, **kwargs)
    kwargs.pop("fixed_batch_size", None)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    return torch.onnx.export(model, args, f, **kwargs)


def classes(trace=True, script=True):
    """The suite's test classes a method runs in (skipScriptTest / skipTraceTest)."""
    kinds = [k for k, on in (("trace", trace), ("script", script)) if on]
    return pytest.mark.parametrize("kind,keep", [pytest.param(k, keep, id=f"{k}-keep_init_{keep}")
                                                 for k in kinds for keep in (True, False)])


class Suite:
    """One of the suite's classes: run_test as it is, the export done by torch2onnx."""

    def __init__(self, kind, keep):
        self.is_script, self.keep = kind == "script", keep

    def run_test(self, model, input_args, input_kwargs=None, rtol=1e-3, atol=1e-7, do_constant_folding=True,
                 dynamic_axes=None, additional_test_inputs=None, input_names=None, output_names=None,
                 fixed_batch_size=False, training=EVAL, remained_onnx_input_idx=None):
        if isinstance(remained_onnx_input_idx, dict):
            remained_onnx_input_idx = remained_onnx_input_idx["scripting" if self.is_script else "tracing"]
        is_model_script = isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction))
        if self.is_script:
            model, flatten, ignore_none = (model if is_model_script else torch.jit.script(model)), False, False
        elif is_model_script:
            pytest.skip("the suite does not run an already scripted model in its tracing classes")
        else:
            flatten, ignore_none = True, True
        if training == torch.onnx.TrainingMode.TRAINING:
            model.train()
        elif training == EVAL:
            model.eval()
        with torch.no_grad():
            f = io.BytesIO()
            reference = _clone_model(model)
            export(model, _for_export(input_args, input_kwargs), f, opset_version=OPSET,
                    do_constant_folding=do_constant_folding, keep_initializers_as_inputs=self.keep,
                    dynamic_axes=dynamic_axes, input_names=input_names, output_names=output_names,
                    fixed_batch_size=fixed_batch_size, training=training, verbose=False)
            session = verification.ort_session(f.getvalue())
            runs = [(input_args, input_kwargs)] + [(a, {}) for a in additional_test_inputs or ()]
            for args, kwargs in runs:
                pt_args, pt_kwargs = _for_pytorch(args, kwargs)
                expected = _clone_model(reference)(*pt_args, **pt_kwargs)
                actual = _run_ort(session, _for_ort(args, kwargs, remained_onnx_input_idx, flatten))
                self.compare(actual, expected, rtol, atol, ignore_none)

    def compare(self, actual, expected, rtol, atol, ignore_none):
        expected = torch.jit._flatten(expected)[0] if ignore_none else _flat([expected])
        expected, actual = [_to_numpy(e) for e in expected], _flat(actual)
        assert len(actual) == len(expected), \
            f"Number of outputs differ ONNX runtime: ({len(actual)}) PyTorch: ({len(expected)})"
        for a, e in zip(actual, expected):
            if a is None or e is None:
                assert a is None and e is None, f"{'None' if a is None else 'a value'} from ONNX Runtime, " \
                                                f"{'None' if e is None else 'a value'} from PyTorch"
                continue
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, check_dtype=True, equal_nan=True)


def _clone_model(model):
    try:
        return copy.deepcopy(model)
    except Exception:
        return model


def _for_pytorch(args, kwargs):
    if isinstance(args, (torch.Tensor, dict)):
        args = (args,)
    return copy.deepcopy(args), (copy.deepcopy(kwargs) if kwargs else {})


def _for_export(args, kwargs):
    args, kwargs = _for_pytorch(args, kwargs)
    if not kwargs and isinstance(args[-1], dict):
        return args + ({},)
    return args + (kwargs,) if kwargs else args


def _for_ort(args, kwargs, remained, flatten):
    inputs = _for_export(args, kwargs)
    if flatten:
        inputs = torch.jit._flatten(inputs)[0]
    elif inputs and isinstance(inputs[-1], dict) and not inputs[-1]:
        inputs = inputs[:-1]
    return list(inputs) if remained is None else [inputs[i] for i in remained]


def _flat(values, kinds=(list, tuple)):
    out = []
    for v in values:
        out.extend(_flat(v, kinds) if isinstance(v, kinds) else [v])
    return out


def _to_numpy(v):
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().numpy()
    if isinstance(v, (list, tuple)):
        return [_to_numpy(e) for e in v]
    if isinstance(v, (bool, int, float)):
        return np.array(v)
    return v


def _run_ort(session, inputs):
    """The suite's _run_ort: positional inputs in order, a trailing dict fed by name."""
    named = {}
    if inputs and isinstance(inputs[-1], dict):
        named, inputs = {k: _to_numpy(v) for k, v in inputs[-1].items()}, inputs[:-1]
    declared = session.get_inputs()
    feeds = dict(named)
    for i, value in enumerate(_flat(inputs, tuple)):
        if i == len(declared) or declared[i].name in named:
            raise ValueError(f"got too many positional inputs ({len(declared)} graph inputs "
                             f"{[d.name for d in declared]}); kw_inputs: {list(named)}")
        feeds[declared[i].name] = _to_numpy(value)
    return session.run(None, feeds)
