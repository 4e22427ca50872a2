"""torch2onnx.export takes torch 2.x's torch.onnx.export keywords and behaves
as its TorchScript exporter (dynamo=False) does; our own use of torch.jit
leaks no deprecation warning to the user."""
import io
import warnings

import pytest
import torch

import torch2onnx
from conftest import assert_matches, check_onnx, run_ort


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x, *, scale=1.0):
        return self.lin(x) * scale


def test_torch2_keywords_are_accepted_quietly(tmp_path):
    x = torch.randn(2, 4)
    model = Scaled().eval()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        buf = io.BytesIO()
        # torch 2.x's defaults and what the TorchScript exporter ignores.
        torch2onnx.export(model, (x,), buf, kwargs={"scale": 2.0}, dynamo=False, external_data=True,
                          dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
                          verify=True, profile=False, dump_exported_program=False, artifacts_dir=str(tmp_path))
    torch_warnings = [w for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning, UserWarning))]
    assert not torch_warnings, [str(w.message) for w in torch_warnings]
    proto = check_onnx(buf.getvalue())
    embedded = {i.name for i in proto.graph.initializer if i.raw_data}  # into a stream, the weights are embedded
    assert {"lin.weight", "lin.bias"} <= embedded, embedded
    # the keyword-only number is a 0-d double input (torch.onnx's TorchScript exporter refuses the call)
    assert_matches(model(x, scale=2.0), run_ort(buf.getvalue(), [x, torch.tensor(2.0, dtype=torch.float64)]))


def test_external_data_to_a_path_writes_the_weights_apart(tmp_path):
    path = tmp_path / "m.onnx"
    torch2onnx.export(Scaled().eval(), (torch.randn(2, 4),), str(path), external_data=True)
    assert len(list(tmp_path.iterdir())) > 1
    check_onnx(str(path))


def test_dynamic_shapes_is_refused_as_torch_onnx_does():
    with pytest.raises(ValueError, match="dynamic_axes when dynamo=False"):
        torch2onnx.export(Scaled().eval(), (torch.randn(2, 4),), io.BytesIO(), dynamic_shapes={"x": {0: "batch"}})


def test_dynamo_true_takes_the_torch_export_path():
    """(the path itself: test_dynamo.py)"""
    buf = io.BytesIO()
    if not hasattr(torch, "export"):
        with pytest.raises(torch2onnx.errors.ExportUsageError, match="torch.export"):
            torch2onnx.export(Scaled().eval(), (torch.randn(2, 4),), buf, dynamo=True)
        return
    program = torch2onnx.export(Scaled().eval(), (torch.randn(2, 4),), buf, dynamo=True)
    assert isinstance(program, torch2onnx.ONNXProgram) and buf.getvalue()


def test_scripting_and_tracing_warn_nothing_of_torch_jit():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch2onnx.export(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval(),
                          (torch.randn(1, 3, 8, 8),), io.BytesIO())
    jit = [str(w.message) for w in caught if "torch.jit" in str(w.message)]
    assert not jit, jit


def test_private_export_helper_as_torch_onnx_calls_it():
    """torch.onnx.utils._export's keywords (its own verification code passes
    fixed_batch_size, add_node_names, onnx_shape_inference ...): accepted
    quietly; like torch.onnx's, it returns the model's outputs."""
    import inspect

    import torch2onnx.utils

    try:
        from torch.onnx._internal.torchscript_exporter.utils import _export as theirs
    except ImportError:  # torch 1.13
        from torch.onnx.utils import _export as theirs
    ours, names = list(inspect.signature(torch2onnx.utils._export).parameters), list(inspect.signature(theirs).parameters)
    assert [p for p in ours if p in names] == names  # every keyword of this torch's, in its order (2.x added some)
    x = torch.randn(2, 4)
    model = Scaled().eval()
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch2onnx.utils._export(model, (x,), buf, opset_version=13, input_names=["x"],
                                       dynamic_axes={"x": [0]}, fixed_batch_size=True, add_node_names=True,
                                       onnx_shape_inference=True, export_type=None)
    assert not [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert torch.equal(out, model(x))
    x5 = torch.randn(5, 4)
    assert_matches(model(x5), run_ort(buf.getvalue(), [x5]))
