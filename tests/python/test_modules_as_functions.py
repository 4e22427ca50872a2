"""export_modules_as_functions: calls of selected submodules become nodes
calling ONNX model-local functions, which ONNX Runtime runs."""
import io

import onnx
import pytest
import torch
import torch.nn as nn
import torchvision

import torch2onnx
from conftest import assert_matches, check_onnx, run_ort


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = Block(8)
        self.b2 = Block(8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.b2(self.b1(x))).softmax(-1)


def _export(model, args, **kw):
    buf = io.BytesIO()
    torch2onnx.export(model, args, buf, opset_version=kw.pop("opset_version", 15), **kw)
    data = buf.getvalue()
    return check_onnx(data), data


def test_selected_class_becomes_a_function():
    model, x = Net().eval(), torch.randn(4, 8)
    proto, data = _export(model, (x,), export_modules_as_functions={Block})
    calls = [n for n in proto.graph.node if n.op_type == "Block"]
    assert len(calls) == 2 and calls[0].domain == Block.__module__
    assert [(f.domain, f.name) for f in proto.functions] == [(Block.__module__, "Block")]
    (fn,) = proto.functions
    assert [n.op_type for n in fn.node] == ["Gemm", "Relu", "Add"]
    assert len(fn.input) == 3  # x, fc.weight, fc.bias
    assert {o.domain: o.version for o in proto.opset_import}[Block.__module__] == 1
    with torch.no_grad():
        assert_matches(model(x), run_ort(data, [x]))


def test_all_submodules_nest():
    model, x = Net().eval(), torch.randn(4, 8)
    proto, data = _export(model, (x,), export_modules_as_functions=True, opset_version=17)
    names = sorted(f.name for f in proto.functions)
    assert names == ["Block", "Linear", "ReLU"]
    block = next(f for f in proto.functions if f.name == "Block")
    assert [n.op_type for n in block.node] == ["Linear", "ReLU", "Add"]  # calls of the inner functions
    assert [n.op_type for n in proto.graph.node if n.op_type != "Softmax"] == ["Block", "Block", "Linear"]
    with torch.no_grad():
        assert_matches(model(x), run_ort(data, [x]))


def test_resnet_basic_blocks():
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    cls = torchvision.models.resnet.BasicBlock
    proto, data = _export(model, (x,), export_modules_as_functions={cls})
    assert sum(n.op_type.startswith("BasicBlock") for n in proto.graph.node) == 8
    # Blocks that downsample compute something else: they get their own function.
    assert sorted(f.name for f in proto.functions) == ["BasicBlock", "BasicBlock_1"]
    with torch.no_grad():
        assert_matches(model(x), run_ort(data, [x]))


def test_needs_opset_15():
    with pytest.raises(torch2onnx.errors.ExportUsageError, match="opset_version 15"):
        _export(Net(), (torch.randn(4, 8),), export_modules_as_functions={Block}, opset_version=14)
    with pytest.raises(torch2onnx.errors.ExportUsageError, match="nn.Module classes"):
        _export(Net(), (torch.randn(4, 8),), export_modules_as_functions={"Block"})


def test_off_by_default():
    proto, _ = _export(Net().eval(), (torch.randn(4, 8),))
    assert not proto.functions
