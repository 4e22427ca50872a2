"""torch2onnx.export(..., dynamo=True) and ExportedPrograms: the model is
captured with torch.export (non-strict, then strict), handed to the C++ core
in memory (its JSON and its own tensors), and converted by the .pt2 frontend. Returns an
ONNXProgram as torch.onnx.export(dynamo=True) does."""
import io
import os
import subprocess
import sys

import onnx
import pytest
import torch
import torch.nn as nn

import torch2onnx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models"))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"),
                                reason="this torch has no torch.export")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


def net():
    torch.manual_seed(0)
    return Net().eval()


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def matches(program, module, inputs, model=False):
    """model: a whole zoo model (harness.compare's model tolerance)."""
    for args in inputs:
        with torch.no_grad():
            expected = harness.flatten(module(*args))
        harness.compare(expected, [a.numpy() for a in program(*args)], model=model)


def test_dynamic_shapes_name_the_dims(tmp_path):
    module, out = net(), tmp_path / "net.onnx"
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch2onnx.export(module, (torch.randn(2, 3, 16, 16),), out, dynamo=True,
                                dynamic_shapes={"x": {0: batch}}, input_names=["image"], output_names=["logits"])
    assert isinstance(program, torch2onnx.ONNXProgram)
    model = harness.full_check(str(out))
    assert [i.name for i in model.graph.input] == ["image"] and dims(model.graph.input[0]) == ["batch", 3, 16, 16]
    assert model.graph.output[0].name == "logits" and dims(model.graph.output[0]) == ["batch", 4]
    assert "BatchNormalization" not in [n.op_type for n in model.graph.node]
    assert isinstance(program.exported_program, torch.export.ExportedProgram)
    assert program.model_proto.graph.input[0].name == "image"
    matches(program, module, [(torch.randn(b, 3, 16, 16),) for b in (2, 1, 5)])


def test_dynamic_axes_become_dynamic_shapes(tmp_path):
    module, out = net(), tmp_path / "axes.onnx"
    torch2onnx.export(module, (torch.randn(2, 3, 16, 16),), out, dynamo=True, dynamic_axes={"x": {0: "N"}})
    model = harness.full_check(str(out))
    assert dims(model.graph.input[0]) == ["N", 3, 16, 16] and dims(model.graph.output[0]) == ["N", 4]


def test_in_memory_and_streams(tmp_path):
    module, x = net(), torch.randn(2, 3, 16, 16)
    program = torch2onnx.export(module, (x,), dynamo=True)  # f is optional with dynamo=True
    matches(program, module, [(x,)])
    stream = io.BytesIO()
    torch2onnx.export(module, (x,), stream, dynamo=True)
    onnx.checker.check_model(onnx.load_from_string(stream.getvalue()), full_check=True)
    program.save(tmp_path / "saved.onnx")
    harness.full_check(str(tmp_path / "saved.onnx"))


def test_an_exported_program_is_taken_as_is(tmp_path):
    module, x = net(), torch.randn(2, 3, 16, 16)
    ep = torch.export.export(module, (x,), dynamic_shapes={"x": {0: torch.export.Dim("b")}})
    program = torch2onnx.export(ep, (), tmp_path / "ep.onnx")
    assert program.exported_program is ep
    model = harness.full_check(str(tmp_path / "ep.onnx"))
    assert dims(model.graph.input[0])[0] == "x_dim_0"
    matches(program, module, [(torch.randn(3, 3, 16, 16),)])


def test_verify_and_report(tmp_path):
    module, x = net(), torch.randn(2, 3, 16, 16)
    torch2onnx.export(module, (x,), tmp_path / "v.onnx", dynamo=True, verify=True, report=True,
                      artifacts_dir=str(tmp_path / "reports"))
    (report,) = os.listdir(tmp_path / "reports")
    assert report.endswith("_success.md")
    text = (tmp_path / "reports" / report).read_text()
    for part in ("## Stages", "torch.export (non-strict)", "## Program operators", "aten.conv2d.default",
                 "## ONNX graph", "| Conv | 1 |", "## Verification", "match"):
        assert part in text, part


def test_weights_are_handed_over_in_place(tmp_path):
    """The program goes to the C++ core as its JSON and its own tensors (parameters, buffers, constants), read
    in place: no serialized copy of the weights (issue 38). The report's stages say which way it went; the
    external data written holds exactly the weights."""
    class WithConstant(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(64, 32)
            self.register_buffer("scale", torch.full((32,), 0.5), persistent=False)
            self.register_buffer("t", torch.randn(32, 64).t(), persistent=True)  # (not contiguous)

        def forward(self, x):
            return self.fc(x) * self.scale + x @ self.t + torch.tensor([1.0, 2.0]).sum()
    module, x = WithConstant().eval(), torch.randn(3, 64)
    program = torch2onnx.export(module, (x,), tmp_path / "w.onnx", dynamo=True, report=True,
                                artifacts_dir=str(tmp_path / "reports"), external_data=True,
                                dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    (report,) = os.listdir(tmp_path / "reports")
    text = (tmp_path / "reports" / report).read_text()
    assert "without its weights" in text and "torch.export.save" not in text
    matches(program, module, [(x,), (torch.randn(5, 64),)])
    model = onnx.load(str(tmp_path / "w.onnx"))
    onnx.checker.check_model(model, full_check=True)


class Squeezes(nn.Module):
    def forward(self, x):
        return x.squeeze(0) * 2


def test_size_one_examples_of_dynamic_dims(tmp_path):
    """torch.export fixes dims of size 0 and 1: a dynamic dim whose example is 1
    is captured at size 2, and the program checked on the example itself."""
    module = net()
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch2onnx.export(module, (torch.randn(1, 3, 16, 16),), tmp_path / "one.onnx", dynamo=True,
                                dynamic_shapes=({0: batch},))
    assert dims(harness.full_check(str(tmp_path / "one.onnx")).graph.input[0])[0] == "batch"
    matches(program, module, [(torch.randn(b, 3, 16, 16),) for b in (1, 4)])
    # A model whose result depends on the size being 1: captured size-obliviously (as torch.onnx does), its
    # squeeze is decided at run time, right at 1 and at other sizes (the rank of the output varies).
    program = torch2onnx.export(Squeezes(), (torch.randn(1, 3),), tmp_path / "sq.onnx", dynamo=True,
                                dynamic_shapes=({0: batch},))
    matches(program, Squeezes(), [(torch.randn(b, 3),) for b in (1, 4)])


class WritesIntoAView(nn.Module):
    def forward(self, x):
        mask = x.new_zeros(4, 4)
        mask[:2].fill_(1.0)
        return x + mask


def test_writes_into_views_are_functionalized(tmp_path):
    x = torch.randn(4, 4)
    program = torch2onnx.export(WritesIntoAView(), (x,), tmp_path / "w.onnx", dynamo=True, verify=True)
    matches(program, WritesIntoAView(), [(x,)])


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent Python control flow: torch.export cannot capture it
            return x * 2
        return x


def test_capture_failures_name_both_strategies(tmp_path):
    with pytest.raises(torch2onnx.OnnxExporterError, match="non-strict: .*; strict: "):
        torch2onnx.export(Branchy(), (torch.randn(3),), tmp_path / "b.onnx", dynamo=True)
    assert not (tmp_path / "b.onnx").exists()
    with pytest.raises(torch2onnx.errors.ExportUsageError, match="TorchScript"):
        torch2onnx.export(torch.jit.script(Squeezes()), (torch.randn(1, 3),), tmp_path / "s.onnx", dynamo=True)


class Cond(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.mean() > 0, lambda x: self.fc(x).relu(), lambda x: x.cos(), (x,))


def test_cond_through_python(tmp_path):
    torch.manual_seed(0)
    module = Cond().eval()
    program = torch2onnx.export(module, (torch.randn(3, 4),), tmp_path / "c.onnx", dynamo=True,
                                dynamic_shapes=({0: torch.export.Dim("n")},))
    assert "If" in [n.op_type for n in harness.full_check(str(tmp_path / "c.onnx")).graph.node]
    matches(program, module, [(torch.rand(3, 4) + 0.1,), (-torch.rand(5, 4) - 0.1,), (torch.rand(1, 4),)])


class Inverse(nn.Module):
    def forward(self, x):
        return torch.nn.functional.fractional_max_pool2d(
            (x @ x.transpose(-1, -2))[None], 2, output_size=2, _random_samples=torch.full((1, 1, 2), 0.5))


def test_unsupported_operators_are_listed(tmp_path):
    with pytest.raises(torch2onnx.UnsupportedOperatorError, match="aten::fractional_max_pool2d"):
        torch2onnx.export(Inverse(), (torch.randn(3, 3),), tmp_path / "inv.onnx", dynamo=True)
    assert not (tmp_path / "inv.onnx").exists()


class IgnoresAnInput(nn.Module):
    def forward(self, x, unused):
        return x.new_zeros((2, 0)), x * 2


def test_unused_inputs_stay_as_in_torch_onnx(tmp_path):
    """The ONNX inputs are the program's user inputs, read or not (torch.onnx's
    dynamo exporter keeps them too); outputs with an empty dim work."""
    args = (torch.randn(2, 3), torch.randn(4))
    program = torch2onnx.export(IgnoresAnInput(), args, dynamo=True, verify=True)
    assert [i.name for i in program.model_proto.graph.input] == ["x", "unused"]
    matches(program, IgnoresAnInput(), [args])


EMPTY_SIZES = {
    "new_full_0d": lambda x: x.new_full((), 3.0) * x,
    "new_ones_0d": lambda x: x.new_ones(()) + x,
    "new_zeros_empty": lambda x: (x.new_zeros((2, 0)), x + 1),
    "repeat_0d_by_nothing": lambda x: x[0, 0].repeat(()) * 2,
    "repeat_0d_to_2d": lambda x: x[0, 0].repeat(2, 3),
    "repeat_zero": lambda x: x.repeat(0, 2),
    "tile_0d_by_nothing": lambda x: x[0, 0].tile(()) * 2,
    "tile_fewer_dims": lambda x: x.tile((2,)),
}


@pytest.mark.parametrize("name", sorted(EMPTY_SIZES))
def test_empty_and_0d_sizes(name):
    """0-d and empty sizes (issue 20's checker failures) on the .pt2 path too."""
    module, args = harness.Lambda(EMPTY_SIZES[name]), (torch.randn(2, 3),)
    program = torch2onnx.export(module, args, dynamo=True, verify=True)
    matches(program, module, [args])


def _zoo_models():
    """Every other model in `make test`, the rest in `make test-full` (T2O_FULL=1: python.dynamo.full)."""
    import zoo

    names = [("zoo", n) for n in zoo.MODELS if n != "word_lm_transformer"]  # (torch.export cannot capture it)
    try:
        import tv_zoo
        names += [("tv", n) for n in tv_zoo.FAMILIES.values()]
    except ImportError:
        pass
    return [m for i, m in enumerate(names) if (i % 2 == 0) != harness.FULL]


@pytest.mark.parametrize("source,name", _zoo_models())
def test_zoo(source, name, tmp_path):
    """The seed models and a torchvision model per family, with a dynamic batch
    where the inputs are images (run at batch 1 and 3 too): from Python, and
    the same program saved with torch.export.save, from the CLI."""
    if source == "zoo":
        import zoo

        module, args = zoo.MODELS[name]()
    else:
        import tv_zoo

        module, args = tv_zoo.MODELS[name]()
    images = all(isinstance(a, torch.Tensor) and a.dim() >= 4 for a in args)
    shapes = tuple({0: torch.export.Dim("batch", min=1, max=1024)} for _ in args) if images else None
    program = torch2onnx.export(module, args, dynamo=True, dynamic_shapes=shapes, verify=True)
    onnx.checker.check_model(program.model_proto, full_check=True)
    cases = [args] + ([tuple(torch.randn(b, *a.shape[1:]) for a in args) for b in (1, 3)] if images else [])
    matches(program, module, cases[1:], model=True)
    saved, out = tmp_path / f"{name}.pt2", tmp_path / f"{name}.onnx"
    torch.export.save(program.exported_program, str(saved))
    r = subprocess.run([harness.CLI, "export", str(saved), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from_cli = torch2onnx.ONNXProgram(None, str(out), program.exported_program)
    matches(from_cli, module, cases, model=True)
