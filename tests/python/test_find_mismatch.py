"""torch2onnx.verification.find_mismatch (python/torch2onnx/_mismatch.py): the
graph bisected down to the operators whose export differs from PyTorch in
ONNX Runtime, found with deliberately wrong custom symbolics."""
import contextlib

import pytest
import torch
import torch.nn as nn

torch2onnx = pytest.importorskip("torch2onnx")
pytest.importorskip("onnxruntime")
from torch2onnx import verification  # noqa: E402


@contextlib.contextmanager
def wrong_symbolic(op, fn, opset):
    torch2onnx.register_custom_op_symbolic(op, fn, opset)
    try:
        yield
    finally:
        torch2onnx.unregister_custom_op_symbolic(op, opset)


class Documented(nn.Module):
    """torch.onnx's documented example."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 6))

    def forward(self, x):
        return self.layers(x)


class Block(nn.Module):
    def __init__(self, n, act):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.act = act

    def forward(self, x):
        return self.act(self.fc(x)) + x


class Deep(nn.Module):
    """Ten blocks; only block 7 uses tanh."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(8, nn.Tanh() if i == 7 else nn.SiLU()) for i in range(10)])

    def forward(self, x):
        return self.blocks(x).softmax(-1)


def test_documented_example(capsys):
    torch.manual_seed(0)
    with wrong_symbolic("aten::relu", lambda g, self: self, 15):
        info = verification.find_mismatch(Documented(), (torch.randn(2, 3),), opset_version=15)
    assert [leaf.id for leaf in info.all_mismatch_leaf_graph_info()] == ["01", "110"]
    kinds = [k for leaf in info.all_mismatch_leaf_graph_info() for k in leaf.essential_node_kinds()]
    assert kinds == ["aten::relu", "aten::relu"]
    out = capsys.readouterr().out
    assert "Mismatch node kinds: {'aten::relu': 2}" in out
    assert "aten::relu in layers.1 (test_find_mismatch.py:" in out and "aten::relu in layers.3" in out, out


def test_names_the_wrong_operator_deep_in_a_model(capsys):
    torch.manual_seed(0)
    # tanh exported as x / (1 + |x|): close to tanh in shape, wrong in value
    wrong_tanh = lambda g, x: g.op("Div", x, g.op("Add", g.op("Constant", value_t=torch.tensor(1.0)), g.op("Abs", x)))  # noqa: E731
    with wrong_symbolic("aten::tanh", wrong_tanh, 9):
        info = verification.find_mismatch(Deep(), (torch.randn(4, 8),), opset_version=17)
    leaves = info.all_mismatch_leaf_graph_info()
    assert len(leaves) == 1 and leaves[0].essential_node_kinds() == {"aten::tanh"}, [leaf.id for leaf in leaves]
    assert "aten::tanh in blocks.7.act" in capsys.readouterr().out


def test_a_correct_model_has_no_mismatch(capsys):
    info = verification.find_mismatch(Deep(), (torch.randn(4, 8),))
    assert not info.has_mismatch() and info.all_mismatch_leaf_graph_info() == []
    assert "No mismatch found." in capsys.readouterr().out


@pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"), reason="no torch.export")
def test_an_exported_program_is_bisected_by_the_cpp_core(capsys):
    # an ExportedProgram runs in LibTorch through torch2onnx's own runner (C++),
    # its parts exported by the .pt2 frontend, the wrong symbolic the same
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    ep = torch.export.export(Deep().eval(), (x,))
    info = verification.find_mismatch(ep, (x,), opset_version=17)
    assert not info.has_mismatch(), capsys.readouterr().out
    wrong_tanh = lambda g, x: g.op("Sigmoid", x)  # noqa: E731
    with wrong_symbolic("aten::tanh", wrong_tanh, 9):
        info = verification.find_mismatch(ep, (x,), opset_version=17)
    leaves = info.all_mismatch_leaf_graph_info()
    assert len(leaves) == 1 and leaves[0].essential_node_kinds() == {"aten::tanh"}, [leaf.id for leaf in leaves]
    out = capsys.readouterr().out
    assert "Mismatch found." in out and "Mismatch node kinds: {'aten::tanh': 1}" in out, out
    assert "aten::tanh in blocks.7.act (" in out and "test_find_mismatch.py:" in out, out
    # the stored sample inputs serve when none are given
    with wrong_symbolic("aten::tanh", wrong_tanh, 9):
        assert verification.find_mismatch(ep, None, opset_version=17).has_mismatch()
