"""torch2onnx.export and torch.onnx.export on the documented models: both
models, run in ONNX Runtime on the same inputs, compute the same outputs (and
match PyTorch)."""
import inspect
import os
import sys
import warnings

import pytest
import torch

import torch2onnx
from conftest import assert_matches, check_onnx, harness, run_ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models"))
import zoo  # noqa: E402

# torch.onnx's TorchScript exporter: torch 2.x defaults to its dynamo exporter.
TORCHSCRIPT_EXPORTER = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}

# vgg16 is left to the model tests (tests/models): it is the slowest for torch.onnx and adds nothing here.
MODELS = [m for m in zoo.MODELS if m != "vgg16"]


@pytest.mark.parametrize("name", MODELS)
def test_same_outputs_as_torch_onnx(tmp_path, name):
    model, args = zoo.MODELS[name]()
    model.eval()
    ours, theirs = str(tmp_path / "torch2onnx.onnx"), str(tmp_path / "torch_onnx.onnx")
    torch2onnx.export(model, args, ours, opset_version=17)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, theirs, opset_version=17, **TORCHSCRIPT_EXPORTER)
    ours_proto, theirs_proto = check_onnx(ours), check_onnx(theirs)
    inputs = harness.flatten(args)
    # Both drop inputs the graph does not read: in torch 2.x, word_lm_transformer's
    # causal mask (TransformerEncoder detects it and calls attention with
    # is_causal=True instead). The graph interface must be torch.onnx's.
    assert len(ours_proto.graph.input) == len(theirs_proto.graph.input)
    unused = len(inputs) - len(theirs_proto.graph.input)
    assert unused == (1 if name == "word_lm_transformer" and torch.__version__ >= "2" else 0)
    inputs = inputs[:len(theirs_proto.graph.input)]
    ours_out, theirs_out = run_ort(ours, inputs), run_ort(theirs, inputs)
    harness.compare([torch.from_numpy(o) for o in theirs_out], ours_out, model=True)
    with torch.no_grad():
        harness.compare(harness.flatten(model(*args)), ours_out, model=True)
