"""ONNXProgram (what export(..., dynamo=True) returns) has torch.onnx 2.14's API
(issue 41), each method compared with torch.onnx's ONNXProgram on the same model."""
import io
import os
import warnings

import numpy as np
import onnx
import pytest
import torch

import torch2onnx

pytestmark = pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.onnx, "ONNXProgram"),
                                reason="torch.export and torch.onnx's ONNXProgram (torch 2.x)")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("shift", torch.arange(3.0))

    def forward(self, x, y=None):
        h = torch.relu(self.lin(x))
        return h + self.shift, (h * 2 if y is None else h * y)


def programs(dynamic=True):
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(5, 4)
    shapes = ({0: torch.export.Dim("n")},) if dynamic else None
    ours = torch2onnx.export(model, (x,), dynamo=True, dynamic_shapes=shapes)
    theirs = torch.onnx.export(model, (x,), dynamo=True, dynamic_shapes=shapes, verbose=False)
    return model, x, ours, theirs


def same(a, b, tol=1e-5):
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert isinstance(p, torch.Tensor) and p.dtype == q.dtype and p.shape == q.shape
        assert torch.allclose(p, q, atol=tol, rtol=tol)


def test_call_and_call_reference():
    model, x, ours, theirs = programs()
    x7 = torch.randn(7, 4)
    out = ours(x7)
    assert isinstance(out, tuple)
    same(out, theirs(x7))
    with torch.no_grad():
        same(out, model(x7))
    same(ours.call_reference(x7), theirs.call_reference(x7))
    ours.release()
    assert ours._inference_session is None
    same(ours(x7), out)  # (a new session)


def test_model_and_model_proto():
    import onnx_ir

    _, _, ours, theirs = programs()
    assert isinstance(ours.model, onnx_ir.Model)
    assert [v.name for v in ours.model.graph.inputs] == [v.name for v in theirs.model.graph.inputs]
    proto = ours.model_proto
    assert isinstance(proto, onnx.ModelProto)
    onnx.checker.check_model(proto, full_check=True)
    assert ours.exported_program is not None and isinstance(ours.exported_program, torch.export.ExportedProgram)
    text = repr(ours)
    assert text.startswith("ONNXProgram(") and "exported_program=" in text and "model=" in text


@pytest.mark.parametrize("include, as_inputs", [(True, False), (True, True), (False, False), (False, True)])
def test_save_initializer_options(tmp_path, include, as_inputs):
    _, x, ours, theirs = programs()
    saved = {}
    for name, program in (("ours", ours), ("theirs", theirs)):
        path = tmp_path / f"{name}.onnx"
        program.save(str(path), include_initializers=include, keep_initializers_as_inputs=as_inputs)
        saved[name] = onnx.load(str(path))
    for proto in saved.values():
        inits = {t.name for t in proto.graph.initializer}
        inputs = {i.name for i in proto.graph.input}
        assert bool(inits) == include
        names = {"lin.weight", "lin.bias", "shift"}
        assert (names <= inputs) == as_inputs
        if include:
            assert names <= inits


def test_save_external_data_and_streams(tmp_path):
    _, x, ours, _ = programs()
    path = tmp_path / "m.onnx"
    ours.save(str(path), external_data=True)
    assert (tmp_path / "m.onnx.data").exists()
    proto = onnx.load(str(path), load_external_data=False)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in proto.graph.initializer)
    buffer = io.BytesIO()
    ours.save(buffer)
    assert onnx.load_from_string(buffer.getvalue()).graph.node
    with pytest.raises(TypeError):
        ours.save(io.BytesIO(), external_data=True)


def test_serialized_when_first_asked(tmp_path):
    # export(dynamo=True) without f returns the converted model, serialized when first asked (as torch.onnx
    # holds its in-memory model): save(path) writes it from C++ without serializing into memory, and every way
    # gives the bytes an export to a path writes
    model, x, ours, _ = programs()
    assert ours._converted is not None and ours._data is None
    weights = sum(t.numel() * 4 for t in (model.lin.weight, model.lin.bias, model.shift))
    assert weights <= ours._initializer_bytes() <= weights + 16  # (and the constants': `h * 2`'s 2)
    saved = tmp_path / "saved.onnx"
    ours.save(str(saved))
    assert ours._data is None
    direct = tmp_path / "direct.onnx"
    torch2onnx.export(model, (x,), str(direct), dynamo=True, dynamic_shapes=({0: torch.export.Dim("n")},))
    assert saved.read_bytes() == direct.read_bytes()
    buffer = io.BytesIO()
    ours.save(buffer)  # (a file-like object: the bytes, serialized once and kept)
    assert buffer.getvalue() == direct.read_bytes() and ours._converted is None
    same(ours(x), torch2onnx.export(model, (x,), dynamo=True)(x))


def test_apply_weights():
    model, x, ours, theirs = programs()
    new = {"lin.weight": torch.randn(3, 4), "lin.bias": torch.randn(3)}
    ours.apply_weights(new)
    theirs.apply_weights(new)
    model.load_state_dict(new, strict=False)
    with torch.no_grad():
        expected = model(x)
    same(ours(x), expected)
    same(ours(x), theirs(x))
    with pytest.warns(Warning, match="Weight 'nope' not found in the model"):
        ours.apply_weights({"nope": torch.zeros(1)})


def test_initialize_inference_session_with_an_initializer():
    import onnxruntime as ort

    _, x, ours, _ = programs()
    given = []

    def initializer(model):
        given.append(type(model))
        return ort.InferenceSession(model, providers=["CPUExecutionProvider"])

    ours.initialize_inference_session(initializer)
    assert given == [bytes]
    assert len(ours(x)) == 2


def test_optimize_rename_axes_and_compute_values():
    model, x, ours, _ = programs()
    before = ours(x)
    ours.optimize()
    same(ours(x), before)
    (name,) = {str(d) for d in ours.model.graph.inputs[0].shape if not isinstance(d, int)}
    ours.rename_axes({name: "batch"})
    assert str(ours.model.graph.inputs[0].shape[0]) == "batch"
    assert ours.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    relu = next(n for n in ours.model.graph if n.op_type == "Relu").outputs[0].name
    (h,) = ours.compute_values([relu], (x,))
    with torch.no_grad():
        same((h,), (torch.relu(model.lin(x)),))
    same(ours(x), before)  # (the outputs are the model's again)
    with pytest.raises(ValueError, match="not found in the model"):
        ours.compute_values(["no_such_value"], (x,))


def test_dump_exported_program_and_profile(tmp_path):
    """dump_exported_program writes the captured program to artifacts_dir (as torch.onnx does); profile
    profiles the export with pyinstrument, or says that it needs it."""
    torch.manual_seed(0)
    x, model = torch.randn(5, 4), Net().eval()
    torch2onnx.export(model, (x,), dynamo=True, dump_exported_program=True, artifacts_dir=str(tmp_path))
    (dumped,) = [p for p in os.listdir(tmp_path) if p.endswith(".pt2")]
    assert dumped.startswith("onnx_export_")
    program = torch.export.load(str(tmp_path / dumped))
    with torch.no_grad():
        same(program.module()(x), model(x))
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pyinstrument"):
            torch2onnx.export(Net().eval(), (x,), dynamo=True, profile=True)
    else:
        torch2onnx.export(Net().eval(), (x,), dynamo=True, profile=True, report=True, artifacts_dir=str(tmp_path))
        (report,) = [p for p in os.listdir(tmp_path) if p.endswith(".md")]
        assert "## Profile" in open(tmp_path / report).read()


def test_0d_outputs_stay_0d():
    class Scalar(torch.nn.Module):
        def forward(self, x):
            return x[0, 0] * 2

    x = torch.randn(2, 3)
    program = torch2onnx.export(Scalar(), (x,), dynamo=True)
    (out,) = program(x)
    assert out.shape == () and torch.allclose(out, x[0, 0] * 2)
    (ref,) = program.call_reference(x)
    assert ref.shape == ()
