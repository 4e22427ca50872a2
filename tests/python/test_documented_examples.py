"""The Python examples of torch.onnx's documentation (seeds/001, seeds/002),
run through torch2onnx.export and checked in ONNX Runtime."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torchvision

import torch2onnx
from conftest import assert_matches, check_onnx, export_and_run, run_ort


def test_alexnet_with_named_inputs(tmp_path, capsys):
    dummy_input = torch.randn(2, 3, 224, 224)
    model = torchvision.models.alexnet().eval()
    input_names = ["actual_input_1"] + ["learned_%d" % i for i in range(16)]
    output_names = ["output1"]
    proto, out = export_and_run(model, dummy_input, tmp_path, verbose=True, input_names=input_names,
                                output_names=output_names)
    assert [i.name for i in proto.graph.input] == ["actual_input_1"]
    # The other names go to the parameters, in state_dict order.
    assert sorted(i.name for i in proto.graph.initializer) == sorted(input_names[1:])
    assert [o.name for o in proto.graph.output] == ["output1"]
    printed = capsys.readouterr().out
    assert "%actual_input_1 : Float(2, 3, 224, 224)" in printed and "onnx::Conv" in printed
    with torch.no_grad():
        assert_matches(model(dummy_input), out)


class LoopModel(nn.Module):
    def forward(self, x, y):
        for i in range(y):
            x = x + i
        return x


def test_loop_model_traced_is_unrolled(tmp_path):
    dummy_input = torch.ones(2, 3, dtype=torch.long)
    loop_count = torch.tensor(5, dtype=torch.long)
    proto, out = export_and_run(LoopModel(), (dummy_input, loop_count), tmp_path, run_inputs=[dummy_input])
    assert "Loop" not in {n.op_type for n in proto.graph.node}
    assert len(proto.graph.input) == 1  # the count is baked in by tracing: not an input (as torch.onnx)
    np.testing.assert_array_equal(out[0], LoopModel()(dummy_input, loop_count).numpy())


@torch.jit.script
def loop(x, y):
    for i in range(int(y)):
        x = x + i
    return x


class LoopModel2(nn.Module):
    def forward(self, x, y):
        return loop(x, y)


def test_loop_model2_mixed_scripting_keeps_the_loop(tmp_path, capsys):
    dummy_input = torch.ones(2, 3, dtype=torch.long)
    loop_count = torch.tensor(5, dtype=torch.long)
    proto, out = export_and_run(LoopModel2(), (dummy_input, loop_count), tmp_path, verbose=True,
                                input_names=["input_data", "loop_range"])
    assert [i.name for i in proto.graph.input] == ["input_data", "loop_range"]
    assert "Loop" in {n.op_type for n in proto.graph.node}
    assert "onnx::Loop" in capsys.readouterr().out
    np.testing.assert_array_equal(out[0], np.full((2, 3), 11))
    # The documented check: another trip count gives [[37, 37, 37], [37, 37, 37]].
    out9 = run_ort(str(tmp_path / "model.onnx"), [dummy_input, np.array(9, dtype=np.int64)])
    np.testing.assert_array_equal(out9[0], np.full((2, 3), 37))


class InPlaceIndexedAssignmentONNX(nn.Module):
    def forward(self, data, index, new_data):
        new_data = new_data.unsqueeze(0)
        index = index.expand(1, new_data.size(1))
        data.scatter_(0, index, new_data)
        return data


class InPlaceIndexedAssignment(nn.Module):
    def forward(self, data, index, new_data):
        data[index] = new_data
        return data


@pytest.mark.parametrize("cls", [InPlaceIndexedAssignmentONNX, InPlaceIndexedAssignment])
def test_scatter_assignment(tmp_path, cls):
    data = torch.zeros(3, 4)
    index = torch.tensor(1)
    new_data = torch.arange(4).to(torch.float32)
    out = cls()(data.clone(), index, new_data)
    path = str(tmp_path / "inplace_assign.onnx")
    torch2onnx.export(cls(), (data, index, new_data), path)
    check_onnx(path)
    out_ort = run_ort(path, [torch.zeros(3, 4), index, new_data])
    assert torch.all(torch.eq(out, torch.tensor(out_ort[0])))
    assert torch.count_nonzero(data) == 0  # exporting does not change the caller's tensors


class SumModule(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)


def _dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def test_sum_module_dynamic_axes(tmp_path):
    proto, _ = export_and_run(SumModule(), (torch.ones(2, 2),), tmp_path, input_names=["x"], output_names=["sum"])
    assert _dims(proto.graph.input[0]) == [2, 2] and _dims(proto.graph.output[0]) == [2]
    proto, _ = export_and_run(SumModule(), (torch.ones(2, 2),), tmp_path, name="dyn.onnx", input_names=["x"],
                              output_names=["sum"],
                              dynamic_axes={"x": {0: "my_custom_axis_name"}, "sum": [0]})
    assert _dims(proto.graph.input[0]) == ["my_custom_axis_name", 2]
    assert _dims(proto.graph.output[0]) == ["sum_dynamic_axes_1"]
    x = torch.randn(7, 2)
    assert_matches(SumModule()(x), run_ort(str(tmp_path / "dyn.onnx"), [x]))


def test_lstm_dynamic_axes(tmp_path):
    layer_count = 4
    model = nn.LSTM(10, 20, num_layers=layer_count, bidirectional=True).eval()
    input = torch.randn(5, 3, 10)
    h0 = torch.randn(layer_count * 2, 3, 20)
    c0 = torch.randn(layer_count * 2, 3, 20)
    proto, out = export_and_run(model, (input, (h0, c0)), tmp_path, name="lstm.onnx")
    assert _dims(proto.graph.input[0]) == [5, 3, 10]
    with torch.no_grad():
        assert_matches(model(input, (h0, c0)), out)
    proto, _ = export_and_run(model, (input, (h0, c0)), tmp_path, name="lstm_dyn.onnx",
                              input_names=["input", "h0", "c0"], output_names=["output", "hn", "cn"],
                              dynamic_axes={"input": {0: "sequence"}, "output": {0: "sequence"}})
    assert _dims(proto.graph.input[0]) == ["sequence", 3, 10]
    longer = torch.randn(9, 3, 10)
    with torch.no_grad():
        assert_matches(model(longer, (h0, c0)), run_ort(str(tmp_path / "lstm_dyn.onnx"), [longer, h0, c0]))


class ImplicitCastType(torch.jit.ScriptModule):
    @torch.jit.script_method
    def forward(self, x):
        y = x + 2
        return y + 3


def test_implicit_cast_type_with_example_outputs(tmp_path):
    x = torch.tensor([1.0], dtype=torch.float32)
    with pytest.warns(UserWarning, match="example_outputs"):
        proto, out = export_and_run(ImplicitCastType(), x, tmp_path, example_outputs=ImplicitCastType()(x))
    assert out[0].dtype == np.float32  # '3' is a float here, not an int64 as the old exporter made it
    assert_matches(ImplicitCastType()(x), out)


class AnotherModel(nn.Module):
    def forward(self, x):
        return [torch.squeeze(out, 0) for out in torch.split(x, [1, 1, 1], dim=0)]


class Unbind(nn.Module):
    def forward(self, x):
        return x.unbind(0)


@pytest.mark.parametrize("cls", [AnotherModel, Unbind])
def test_lists_of_tensors(tmp_path, cls):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]])
    proto, out = export_and_run(cls(), (x,), tmp_path)
    assert len(proto.graph.output) == 3
    assert_matches(cls()(x), out)


class KwModel(nn.Module):
    def forward(self, x, y=None, z=None, scale=1.0):
        out = x * scale
        if y is not None:
            out = out + y
        if z is not None:
            out = out - z
        return out


def test_args_forms(tmp_path):
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    m = KwModel()
    # a single tensor
    _, out = export_and_run(m, x, tmp_path, name="a.onnx")
    assert_matches(m(x), out)
    # a trailing dict: keyword arguments (y skipped, z given)
    proto, out = export_and_run(m, (x, {"z": z}), tmp_path, name="b.onnx", run_inputs=[x, z])
    assert len(proto.graph.input) == 2
    assert_matches(m(x, z=z), out)
    # kwargs=
    # a number is a 0-d input (double for a float), as torch.onnx traces it
    scale = torch.tensor(2.0, dtype=torch.float64)
    proto, out = export_and_run(m, (x,), tmp_path, name="c.onnx", kwargs={"y": y, "scale": 2.0}, run_inputs=[x, y, scale])
    assert len(proto.graph.input) == 3
    assert_matches(m(x, y, scale=2.0), out)


class DictArg(nn.Module):
    def forward(self, x, d):
        return x + d["a"] * d["b"]


def test_empty_trailing_dict_passes_a_dict_positionally(tmp_path):
    x = torch.randn(2, 3)
    d = {"a": torch.randn(2, 3), "b": torch.randn(2, 3)}
    proto, out = export_and_run(DictArg(), (x, d, {}), tmp_path, run_inputs=[x, d["a"], d["b"]])
    assert len(proto.graph.input) == 3
    assert_matches(DictArg()(x, d), out)
