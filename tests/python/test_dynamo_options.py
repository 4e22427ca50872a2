"""export(dynamo=True)'s options that torch.onnx 2.14 ignores there (training,
operator_export_type, do_constant_folding) do what they do with dynamo=False;
keep_initializers_as_inputs as torch.onnx. The .pt2 frontend goes through the
same conversion core as TorchScript (src/convert/core.cpp): the same fallback
nodes on both paths."""
import io

import onnx
import pytest
import torch
import torch.nn as nn

import torch2onnx
from torch2onnx import errors
from conftest import assert_matches, check_onnx, run_ort

pytestmark = pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"),
                                reason="this torch has no torch.export")

ATEN_FALLBACK = torch2onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK


class Unsupported(nn.Module):
    """Two operators without a conversion (poisson, fractional_max_pool2d) among ones that convert."""

    def forward(self, x):
        y = nn.functional.fractional_max_pool2d((torch.outer(x, x) + 8)[None], 2, output_size=3,
                                                _random_samples=torch.full((1, 1, 2), 0.5))
        return y.sum() * 2 + torch.poisson(x.abs()).sum()


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 2


class Norm(nn.Module):
    """Batch norm: batch statistics in training mode, running ones in evaluation."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)

    def forward(self, x):
        return self.bn(x) + 1


def _export(model, args, **kw):
    buf = io.BytesIO()
    torch2onnx.export(model, args, buf, dynamo=True, **kw)
    return buf.getvalue()


def _nodes(data):
    return [(n.domain, n.op_type, {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
            for n in onnx.load_from_string(data).graph.node]


@pytest.mark.parametrize("dynamo", [False, True])
def test_aten_fallback_on_both_paths(dynamo):
    x = torch.randn(6)
    buf = io.BytesIO()
    torch2onnx.export(Unsupported(), (x,), buf, dynamo=dynamo, operator_export_type=ATEN_FALLBACK)
    check_onnx(buf.getvalue())
    aten = sorted((a["operator"], a["overload_name"]) for d, t, a in _nodes(buf.getvalue()) if t == "ATen")
    assert [op for op, _ in aten] == [b"fractional_max_pool2d", b"poisson"]
    assert all(d == "org.pytorch.aten" for d, t, _ in _nodes(buf.getvalue()) if t == "ATen")
    assert {"ReduceSum", "Mul", "Add"} <= {t for _, t, _ in _nodes(buf.getvalue())}  # the rest converts
    # the ONNX mode refuses them, naming both
    with pytest.raises(errors.UnsupportedOperatorError) as e:
        torch2onnx.export(Unsupported(), (x,), io.BytesIO(), dynamo=dynamo)
    assert "poisson" in str(e.value) and "fractional_max_pool2d" in str(e.value)


def test_fallthrough_and_aten_on_the_dynamo_path():
    data = _export(Unsupported(), (torch.randn(6),), operator_export_type=torch2onnx.OperatorExportTypes.ONNX_FALLTHROUGH)
    check_onnx(data)
    kept = {(d, t) for d, t, _ in _nodes(data) if d not in ("", "ai.onnx")}
    assert kept == {("aten", "fractional_max_pool2d"), ("aten", "poisson")}
    fmp = next(a for _, t, a in _nodes(data) if t == "fractional_max_pool2d")
    assert fmp["kernel_size"] == [2, 2]  # constant arguments as attributes, named by the schema
    # ONNX_ATEN: every aten operator with tensor outputs is an ATen node
    data = _export(Small().eval(), (torch.randn(2, 4),), operator_export_type=torch2onnx.OperatorExportTypes.ONNX_ATEN)
    check_onnx(data)
    ops = {a["operator"] for _, t, a in _nodes(data) if t == "ATen"}
    assert {b"linear", b"relu", b"mul"} <= ops
    assert all(t == "ATen" for d, t, _ in _nodes(data) if d == "org.pytorch.aten")
    overloads = {a["operator"]: a["overload_name"] for _, t, a in _nodes(data) if t == "ATen"}
    assert overloads[b"mul"] == b"Tensor" and overloads[b"linear"] == b""  # "default" is the empty overload


class Folded(nn.Module):
    """A subgraph of constants only (the weight's transpose and scaling) beside the input's."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        return x @ (self.w.t() * 2).t()


def test_constant_folding_switch_on_the_dynamo_path():
    x = torch.randn(2, 4)
    m = Folded().eval()
    folded, unfolded = _export(m, (x,)), _export(m, (x,), do_constant_folding=False)
    for data in (folded, unfolded):
        check_onnx(data)
        assert_matches(m(x), run_ort(data, [x]))
    assert "Transpose" not in {t for _, t, _ in _nodes(folded)}
    assert "Transpose" in {t for _, t, _ in _nodes(unfolded)}
    assert len(_nodes(unfolded)) > len(_nodes(folded))


def test_keep_initializers_as_inputs_on_the_dynamo_path():
    x = torch.randn(2, 4)
    m = Small().eval()
    for keep in (False, True):
        proto = check_onnx(_export(m, (x,), keep_initializers_as_inputs=keep))
        inputs = [i.name for i in proto.graph.input]
        weights = {"fc.weight", "fc.bias"}
        assert weights <= {i.name for i in proto.graph.initializer}
        assert (weights <= set(inputs)) == keep
        assert inputs[0] == "x"
        assert_matches(m(x), run_ort(proto.SerializeToString(), [x]))


@pytest.mark.parametrize("mode", ["EVAL", "TRAINING", "PRESERVE"])
@pytest.mark.parametrize("model_training", [False, True])
def test_training_mode_on_the_dynamo_path(mode, model_training):
    x = torch.randn(5, 4) * 3 + 1
    m = Norm().train(model_training)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    data = _export(m, (x,), training=getattr(torch2onnx.TrainingMode, mode))
    check_onnx(data)
    assert m.training == model_training  # restored
    exported_training = mode == "TRAINING" or (mode == "PRESERVE" and model_training)
    reference = Norm()
    reference.load_state_dict(before)
    reference.train(exported_training)
    with torch.no_grad():
        expected = reference(x)
    assert_matches(expected, run_ort(data, [x]))
    # the two modes really differ here, so the comparison tells them apart
    other = Norm()
    other.load_state_dict(before)
    other.train(not exported_training)
    with torch.no_grad():
        assert (other(x) - expected).abs().max() > 0.1


def test_training_mode_with_an_exported_program():
    m = Norm().eval()
    ep = torch.export.export(m, (torch.randn(5, 4),))
    with pytest.raises(errors.ExportUsageError, match="training mode was fixed"):
        torch2onnx.export(ep, (torch.randn(5, 4),), io.BytesIO(), training=torch2onnx.TrainingMode.TRAINING)
    buf = io.BytesIO()
    torch2onnx.export(ep, (torch.randn(5, 4),), buf, training=torch2onnx.TrainingMode.PRESERVE)
    x = torch.randn(5, 4)
    assert_matches(m(x), run_ort(buf.getvalue(), [x]))


@pytest.mark.parametrize("dynamo", [False, True])
def test_aliases_convert_on_both_paths(dynamo, tmp_path):
    """Alias operators resolve through one table (convert::canonical_kind) on both frontends."""

    class Aliases(nn.Module):
        def forward(self, x):
            return (torch.swapaxes(x, 0, 1).absolute() + torch.special.expit(x).t()
                    + torch.special.round(x * 3).moveaxis(0, 1) + torch.clip(x, -0.5, 0.5).t())

    x = torch.randn(3, 4)
    buf = io.BytesIO()
    torch2onnx.export(Aliases(), (x,), buf, dynamo=dynamo, opset_version=17)
    check_onnx(buf.getvalue())
    assert_matches(Aliases()(x), run_ort(buf.getvalue(), [x]))


class ConvNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)

    def forward(self, x):
        y = self.bn(self.conv(x))
        return y * torch.sigmoid(y), y + 0


@pytest.mark.parametrize("dynamo", [False, True])
def test_optimize_false_leaves_out_the_optimizations(dynamo):
    """optimize=False (torch.onnx's keyword, dynamo=True; honoured on both paths): no Conv+BatchNorm fusion, no
    Swish at 24, no removal of x + 0; the graph still matches PyTorch."""
    x = torch.randn(1, 3, 8, 8)
    m = ConvNorm().eval()
    graphs = {}
    for optimize in (True, False):
        buf = io.BytesIO()
        torch2onnx.export(m, (x,), buf, dynamo=dynamo, opset_version=24, optimize=optimize,
                          output_names=["a", "b"])
        check_onnx(buf.getvalue())
        assert_matches(m(x), run_ort(buf.getvalue(), [x]))
        graphs[optimize] = [t for _, t, _ in _nodes(buf.getvalue())]
        assert [o.name for o in onnx.load_from_string(buf.getvalue()).graph.output] == ["a", "b"]
    assert "BatchNormalization" not in graphs[True] and "Swish" in graphs[True]
    assert "BatchNormalization" in graphs[False] and "Swish" not in graphs[False]
    assert len(graphs[False]) > len(graphs[True])
