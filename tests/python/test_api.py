"""The rest of the torch.onnx API: file-like targets, options, modes,
export_to_pretty_string, unconvertible_ops, operators, logging, errors."""
import io
import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn

import torch2onnx
from torch2onnx import errors, operators, utils
from conftest import assert_matches, check_onnx, export_and_run, run_ort


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.5)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.drop(self.fc(x))).relu()


def test_file_like_target():
    m = Small().eval()
    x = torch.randn(5, 4)
    buf = io.BytesIO()
    torch2onnx.export(m, (x,), buf)
    data = buf.getvalue()
    check_onnx(data)
    assert_matches(m(x), run_ort(data, [x]))


def test_path_like_target(tmp_path):
    torch2onnx.export(Small(), (torch.randn(5, 4),), tmp_path / "m.onnx")
    check_onnx(str(tmp_path / "m.onnx"))


def test_verify_runs_onnx_runtime(tmp_path):
    torch2onnx.export(Small(), (torch.randn(5, 4),), str(tmp_path / "m.onnx"), verify=True)
    torch2onnx.export(Small(), (torch.randn(5, 4),), io.BytesIO(), verify=True)


def test_verify_reports_a_mismatch(tmp_path):
    def wrong(g, self):
        return self  # not a relu

    torch2onnx.register_custom_op_symbolic("aten::relu", wrong, 9)
    try:
        with pytest.raises(AssertionError, match="max \\|onnxruntime - pytorch\\|"):
            torch2onnx.export(nn.ReLU(), (torch.randn(50),), str(tmp_path / "m.onnx"), verify=True)
    finally:
        torch2onnx.unregister_custom_op_symbolic("aten::relu", 9)


def test_export_params_and_initializers_as_inputs(tmp_path):
    m = Small().eval()
    x = torch.randn(5, 4)
    proto, _ = export_and_run(m, (x,), tmp_path, name="a.onnx", do_constant_folding=False)
    assert {i.name for i in proto.graph.initializer} >= {"fc.weight", "fc.bias"}
    assert [i.name for i in proto.graph.input] == ["x"]
    proto, _ = export_and_run(m, (x,), tmp_path, name="b.onnx", keep_initializers_as_inputs=True,
                              do_constant_folding=False, run_inputs=[x])
    assert {"fc.weight", "fc.bias"} <= {i.name for i in proto.graph.input}
    path = str(tmp_path / "c.onnx")
    torch2onnx.export(m, (x,), path, export_params=False, do_constant_folding=False)
    proto = onnx.load(path)
    assert not proto.graph.initializer
    names = [i.name for i in proto.graph.input]
    assert names[:3] == ["x", "fc.weight", "fc.bias"]
    params = dict(m.state_dict())
    out = run_ort(path, [x] + [params[n] for n in names[1:]])
    assert_matches(m(x), out)


def test_training_modes(tmp_path):
    m = Small()
    m.train()
    x = torch.randn(5, 4)
    proto, _ = export_and_run(m, (x,), tmp_path, name="eval.onnx")
    assert "Dropout" not in {n.op_type for n in proto.graph.node}
    assert m.training  # restored
    path = str(tmp_path / "train.onnx")
    torch2onnx.export(m, (x,), path, training=torch2onnx.TrainingMode.TRAINING, do_constant_folding=False)
    assert "Dropout" in {n.op_type for n in onnx.load(path).graph.node}
    # torch.onnx's enum and a bool are accepted too.
    torch2onnx.export(m, (x,), io.BytesIO(), training=torch.onnx.TrainingMode.EVAL)
    torch2onnx.export(m, (x,), io.BytesIO(), training=False)
    m.eval()
    proto, _ = export_and_run(m, (x,), tmp_path, name="preserve.onnx", training=torch2onnx.TrainingMode.PRESERVE)
    assert "Dropout" not in {n.op_type for n in proto.graph.node}


def test_select_model_mode_for_export():
    m = Small()
    m.train()
    with torch2onnx.select_model_mode_for_export(m, torch2onnx.TrainingMode.EVAL):
        assert not m.training and not m.fc.training
    assert m.training and m.fc.training
    m.eval()
    with torch2onnx.select_model_mode_for_export(m, torch2onnx.TrainingMode.TRAINING):
        assert m.training
    assert not m.training
    with torch2onnx.select_model_mode_for_export(m, torch2onnx.TrainingMode.PRESERVE):
        assert not m.training


class RecordsExport(nn.Module):
    seen = []

    def forward(self, x):
        RecordsExport.seen.append(torch2onnx.is_in_onnx_export())
        return x * 2


def test_is_in_onnx_export():
    assert not torch2onnx.is_in_onnx_export()
    RecordsExport.seen.clear()
    RecordsExport()(torch.ones(1))
    torch2onnx.export(RecordsExport(), (torch.ones(2),), io.BytesIO())
    assert RecordsExport.seen[0] is False and True in RecordsExport.seen[1:]
    assert not torch2onnx.is_in_onnx_export()


def test_export_to_pretty_string():
    m = Small().eval()
    text = torch2onnx.export_to_pretty_string(m, (torch.randn(5, 4),), input_names=["input"])
    assert text.startswith("graph(%input : Float(5, 4)")
    assert "onnx::Gemm" in text
    proto_text = torch2onnx.export_to_pretty_string(m, (torch.randn(5, 4),), google_printer=True)
    assert 'op_type: "Gemm"' in proto_text and "ir_version" in proto_text


class Unsupported(nn.Module):
    def forward(self, x):
        y = torch.nn.functional.fractional_max_pool2d((torch.outer(x, x) + 8 * torch.eye(x.shape[0]))[None], 2, output_size=3,
                                                         _random_samples=torch.full((1, 1, 2), 0.5))
        return torch.linalg.det(y[0, :2, :2]) + torch.poisson(x.abs()).sum()


def test_unconvertible_ops_lists_every_one():
    graph, ops = torch2onnx.unconvertible_ops(Unsupported(), (torch.randn(8),), opset_version=17)
    # the LDL factorization and poisson cannot be converted (det can)
    assert set(ops) == {"aten::fractional_max_pool2d", "aten::poisson"}
    assert "aten::fractional_max_pool2d" in str(graph)
    graph, ops = utils.unconvertible_ops(Small(), (torch.randn(5, 4),))
    assert ops == []


def test_unsupported_operator_error(tmp_path):
    path = tmp_path / "m.onnx"
    with pytest.raises(torch2onnx.UnsupportedOperatorError) as info:
        torch2onnx.export(Unsupported(), (torch.randn(8),), str(path))
    message = str(info.value)
    for op in ("aten::fractional_max_pool2d", "aten::poisson"):
        assert op in message and op in info.value.operators
    assert "test_api.py" in message  # where in the model: the source line
    assert not path.exists()


def test_example_input_errors(tmp_path):
    with pytest.raises(errors.ExampleInputError, match="mat1 and mat2 shapes cannot be multiplied"):
        torch2onnx.export(Small(), (torch.randn(5, 7),), str(tmp_path / "m.onnx"))
    with pytest.raises(errors.ExampleInputError):
        torch2onnx.export(Small(), (torch.randn(5, 4), torch.randn(2)), str(tmp_path / "m.onnx"))
    assert not (tmp_path / "m.onnx").exists()


def test_usage_errors(tmp_path):
    with pytest.raises(errors.ExportUsageError, match="opset"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), str(tmp_path / "m.onnx"), opset_version=8)
    with pytest.raises(errors.ExportUsageError, match="f must be"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), 42)
    with pytest.raises(errors.ExportUsageError, match="input_names"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), io.BytesIO(), input_names="x")
    # (a dynamic_axes key that names no input or output: a warning, as torch.onnx gives)
    with pytest.raises(errors.ExportUsageError, match="axis 2 of 'x' is out of range"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), io.BytesIO(), input_names=["x"], dynamic_axes={"x": [0, 2]})
    with pytest.raises(TypeError, match="unexpected keyword"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), io.BytesIO(), not_an_option=1)
    with pytest.raises(errors.ExportUsageError):
        torch2onnx.export(lambda x: x, (torch.randn(1),), io.BytesIO())
    # Every torch2onnx error is an OnnxExporterError and keeps the C++ message.
    assert issubclass(errors.ExampleInputError, torch2onnx.OnnxExporterError)


def test_unwritable_path(tmp_path):
    with pytest.raises(errors.ExportIOError):
        torch2onnx.export(Small(), (torch.randn(5, 4),), str(tmp_path / "no" / "such" / "dir" / "m.onnx"))


def test_legacy_positional_options(tmp_path):
    # torch 1.13's order: export(model, args, f, export_params, verbose, training, input_names, output_names, ...)
    path = str(tmp_path / "m.onnx")
    torch2onnx.export(Small().eval(), (torch.randn(5, 4),), path, True, False, torch2onnx.TrainingMode.EVAL,
                      ["input"], ["output"])
    proto = onnx.load(path)
    assert proto.graph.input[0].name == "input" and proto.graph.output[0].name == "output"


@torch.jit.script
def scripted_fn(x, y: float):
    return x * y + 1


class Scripted(nn.Module):
    def forward(self, x, n: int):
        for _ in range(n):
            x = x * 2
        return x


def test_script_function_and_script_module(tmp_path):
    x = torch.randn(3)
    proto, out = export_and_run(scripted_fn, (x, 2.5), tmp_path, name="f.onnx", run_inputs=[x, 2.5])
    assert_matches(scripted_fn(x, 2.5), out)
    m = torch.jit.script(Scripted())
    proto, out = export_and_run(m, (x, 3), tmp_path, name="m.onnx", run_inputs=[x, 3])
    assert_matches(m(x, 3), out)
    assert_matches(m(x, 5), run_ort(str(tmp_path / "m.onnx"), [x, 5]))


class Shapes(nn.Module):
    def forward(self, x):
        shape = operators.shape_as_tensor(x)
        return operators.reshape_from_tensor_shape(x.flatten(), shape[[1, 0]]), shape


def test_shape_as_tensor(tmp_path):
    x = torch.randn(3, 4)
    proto, out = export_and_run(Shapes(), (x,), tmp_path, input_names=["x"], dynamic_axes={"x": [0, 1]})
    assert "Shape" in {n.op_type for n in proto.graph.node}
    assert_matches(Shapes()(x), out)
    y = torch.randn(5, 2)
    assert_matches(Shapes()(y), run_ort(str(tmp_path / "model.onnx"), [y]))


def test_enable_log(tmp_path, capfd):
    torch2onnx.enable_log()
    try:
        assert torch2onnx.is_onnx_log_enabled()
        torch2onnx.export(Small(), (torch.randn(5, 4),), str(tmp_path / "m.onnx"))
    finally:
        torch2onnx.disable_log()
    err = capfd.readouterr().err
    assert "torch2onnx: exported Small (opset 17)" in err
    assert "[t2o] convert:" in err
    torch2onnx.export(Small(), (torch.randn(5, 4),), str(tmp_path / "m.onnx"))
    assert "torch2onnx:" not in capfd.readouterr().err


def test_opset_range_and_dtypes(tmp_path):
    for opset in (9, 13, 17):
        proto, out = export_and_run(Small().eval(), (torch.randn(5, 4),), tmp_path, name=f"m{opset}.onnx",
                                    opset_version=opset)
        assert proto.opset_import[0].version == opset
    x = torch.randn(5, 4, dtype=torch.float64)
    m = Small().double().eval()
    proto, out = export_and_run(m, (x,), tmp_path, name="double.onnx")
    assert out[0].dtype == np.float64
    assert_matches(m(x), out)


def test_operator_export_types(tmp_path):
    m = Small().eval()
    torch2onnx.export(m, (torch.randn(5, 4),), io.BytesIO(), operator_export_type=torch2onnx.OperatorExportTypes.ONNX)
    torch2onnx.export(m, (torch.randn(5, 4),), io.BytesIO(), operator_export_type=torch.onnx.OperatorExportTypes.ONNX)
    # ATen nodes where nothing converts; the weights are also listed as inputs then, as torch.onnx does.
    buf = io.BytesIO()
    torch2onnx.export(Unsupported(), (torch.randn(8),), buf,
                      operator_export_type=torch2onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK)
    proto = check_onnx(buf.getvalue())
    aten = sorted(onnx.helper.get_attribute_value(n.attribute[0]) for n in proto.graph.node if n.op_type == "ATen")
    assert aten == [b"fractional_max_pool2d", b"poisson"]
    buf = io.BytesIO()
    torch2onnx.export(Unsupported(), (torch.randn(8),), buf,
                      operator_export_type=torch2onnx.OperatorExportTypes.ONNX_FALLTHROUGH)
    proto = check_onnx(buf.getvalue())
    assert {(n.domain, n.op_type) for n in proto.graph.node if n.domain == "aten"} == {
        ("aten", "fractional_max_pool2d"), ("aten", "poisson")}


def test_dynamic_axes_key_naming_nothing(capfd):
    """As torch.onnx: a warning names the key and the model's inputs and outputs; the export goes on.
    The warning is a Python UserWarning, not a line on stderr."""
    f = io.BytesIO()
    with pytest.warns(UserWarning, match="dynamic_axes names 'nope', which is neither an input nor an output"):
        torch2onnx.export(Small(), (torch.randn(5, 4),), f, input_names=["x"], dynamic_axes={"nope": {0: "batch"}})
    assert "dynamic_axes names" not in capfd.readouterr().err
    assert onnx.load_from_string(f.getvalue()).graph.input[0].type.tensor_type.shape.dim[0].dim_value == 5


def test_one_dim_name_for_two_sizes_is_split():
    # dynamic_axes gives "seq" to dims the example makes 5 and 7 long: one name is one size in ONNX (and
    # the ONNX passes read a size where the graph takes it in by its name), so the second gets its own
    class M(nn.Module):
        def forward(self, a, b):
            return a.sum(1, keepdim=True) * b.size(1) + a.size(1)

    a, b = torch.randn(2, 5), torch.randn(2, 7)
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match="different sizes .7 and 5.*named 'seq_1'"):
        torch2onnx.export(M(), (a, b), buf, input_names=["a", "b"],
                          dynamic_axes={"a": {0: "n", 1: "seq"}, "b": {0: "n", 1: "seq"}})
    model = check_onnx(buf.getvalue())
    dims = {i.name: [d.dim_param for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    assert dims == {"a": ["n", "seq"], "b": ["n", "seq_1"]}
    for a2, b2 in ((a, b), (torch.randn(3, 4), torch.randn(3, 9))):
        assert_matches(M()(a2, b2), run_ort(buf.getvalue(), [a2, b2]))


def test_export_warnings_are_python_warnings():
    """Every warning of an export (here a write into contiguous() whose copying depends on the sizes) reaches
    Python's warnings machinery: a filter turns it into an error."""
    def write(x):
        y = x.t().contiguous()
        y[0] += 1
        return y, x * 1

    class Write(torch.nn.Module):
        def forward(self, x):
            return write(x)

    with pytest.warns(UserWarning, match="whether aten::contiguous copies depends on the sizes"):
        torch2onnx.export(Write(), (torch.randn(4, 5),), io.BytesIO(), input_names=["x"], dynamic_axes={"x": [0, 1]})
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="contiguous"):
            torch2onnx.export(Write(), (torch.randn(4, 5),), io.BytesIO(), input_names=["x"],
                              dynamic_axes={"x": [0, 1]})


class StoresWhileTracing(torch.nn.Module):
    """forward() assigns attributes while traced, as transformers' Swin does (its window size becomes a traced
    tensor when torch.jit.is_tracing()), adds one, and replaces a buffer."""

    def __init__(self):
        super().__init__()
        self.window = 4
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x):
        if torch.jit.is_tracing():
            self.window = torch.tensor(min(x.shape[-1], self.window))
            self.scale = self.scale * 2
            self.cache = x
        return x[..., : int(self.window)] * self.scale[0]


def test_export_leaves_the_module_as_it_was(tmp_path):
    """The trace's attribute writes do not outlive the export: the module is as before, and a dynamo export
    of it in the same process (torch.export fails on Swin's traced window size left behind) still works."""
    model = StoresWhileTracing().eval()
    scale = model.scale
    torch2onnx.export(model, (torch.randn(2, 6),), str(tmp_path / "m.onnx"), input_names=["x"],
                      dynamic_axes={"x": {0: "batch"}})
    assert model.window == 4 and type(model.window) is int and model.scale is scale and not hasattr(model, "cache")
    if hasattr(torch, "export"):  # (PyTorch 2.x)
        program = torch2onnx.export(model, (torch.randn(2, 6),), dynamo=True)
        assert program.model_proto.graph.node


def test_unknown_core_option_is_an_error():
    """Options cross into the C++ core by name: a name it does not know is an error naming it, never ignored."""
    from torch2onnx.utils import _C, _options

    module = torch.jit.trace(Small(), (torch.randn(5, 4),))
    options = _options(17, True, False, torch2onnx.TrainingMode.EVAL, None, None, torch2onnx.OperatorExportTypes.ONNX,
                       True, None, None, None, False, None)
    assert _C().export(module._c, (torch.randn(5, 4),), None, options)[0]
    with pytest.raises(ValueError, match="unknown export option 'opset_versoin'"):
        _C().export(module._c, (torch.randn(5, 4),), None, {**options, "opset_versoin": 18})


class _Returns(nn.Module):
    def __init__(self, fn, sub=None):
        super().__init__()
        self.fn, self.sub = fn, sub  # (the submodule fn calls, registered: its weights are parameters)

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("dynamo", [False, pytest.param(True, marks=pytest.mark.skipif(
    not hasattr(torch, "export"), reason="this torch has no torch.export"))])
@pytest.mark.parametrize("case", ["conv_bn", "constant", "two_constants", "input", "same_twice", "merged"])
def test_output_names_survive_the_passes(case, dynamo):
    """output_names name the outputs whatever the ONNX passes did to the values behind them (a model ending in
    Conv -> BatchNorm lost its name to the fused Conv; a folded constant output lost it on the dynamo path)."""
    conv_bn = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).eval()
    fns = {"conv_bn": lambda x: (conv_bn(x), x.mean()),
           "constant": lambda x: (torch.ones(3) * 2, x + 1),
           "two_constants": lambda x: (torch.ones(3) * 2, torch.ones(3) * 2),
           "input": lambda x: (x.t().t() if x.dim() == 2 else x, x * 2),
           "same_twice": lambda x: (x + 1, x + 1),
           "merged": lambda x: (x * 1, x.clone())}
    x = torch.randn(1, 3, 6, 6) if case == "conv_bn" else torch.randn(3, 3)
    model = _Returns(fns[case], conv_bn).eval()
    buf = io.BytesIO()
    torch2onnx.export(model, (x,), buf, input_names=["x"], output_names=["first", "second"], dynamo=dynamo)
    proto = check_onnx(buf.getvalue())
    assert [o.name for o in proto.graph.output] == ["first", "second"]
    inputs = [x] if proto.graph.input else []
    with torch.no_grad():
        assert_matches(model(x), run_ort(buf.getvalue(), inputs))
