"""ONNX operators placed in models with torch.onnx.ops (issue 41): attention,
rotary_embedding, symbolic and symbolic_multi_out export as the ONNX nodes
they name, on both paths (torch.jit.trace records the first two; it cannot
trace the symbolic ones) and from a .pt2 through the command line, compared
with PyTorch in ONNX Runtime."""
import io
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

import torch2onnx
from torch2onnx import verification

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import optest  # noqa: E402
from optest import Case  # noqa: E402

ops = getattr(getattr(torch, "onnx", None), "ops", None)
pytestmark = pytest.mark.skipif(ops is None or not hasattr(ops, "attention"), reason="torch.onnx.ops (torch 2.8+)")


def export(model, args, dynamo, opset=23, **kw):
    f = io.BytesIO()
    if dynamo:
        return torch2onnx.export(model, args, dynamo=True, opset_version=opset, **kw).model_proto
    torch2onnx.export(model, args, f, dynamo=False, opset_version=opset, **kw)
    return onnx.load_from_string(f.getvalue())


def check(proto, expected, *inputs):
    onnx.checker.check_model(proto, full_check=True)
    session = verification.ort_session(proto.SerializeToString())
    actual = session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), inputs)})
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        e = e.detach().numpy()
        assert a.shape == e.shape and a.dtype == e.dtype
        assert np.all(np.abs(a - e) <= 1e-4 * (1 + np.abs(e))), np.max(np.abs(a - e))


# The family's sweep cases (optest: the command line converts each case's .pt2 program; it cannot load a
# TorchScript archive holding these Python-registered operators, which the tests below export in process).
CASES = []
if ops is not None and hasattr(ops, "attention") and harness.max_opset() >= 23:
    torch.manual_seed(0)
    CASES = [
        Case("attention", lambda q, k, v: ops.attention(q, k, v, scale=0.4)[0],
             (torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)), min_opset=23,
             torchscript=False),
        Case("rotary_embedding", lambda x, c, s, p: ops.rotary_embedding(x, c, s, p, num_heads=2),
             (torch.randn(2, 3, 8), torch.randn(6, 2), torch.randn(6, 2), torch.tensor([[0, 1, 2], [2, 3, 4]])),
             min_opset=23, torchscript=False),
        # (in PyTorch these two compute zeros of the given shape: the shapes are compared)
        Case("symbolic", lambda x: ops.symbolic("Softsign", (x,), {}, dtype=x.dtype, shape=x.shape),
             (torch.randn(3, 4),), min_opset=18, torchscript=False, check="shape"),
        Case("symbolic_multi_out", lambda x: ops.symbolic_multi_out(
            "Split", (x,), {"axis": 0, "num_outputs": 2}, dtypes=(x.dtype, x.dtype), shapes=((2, 4), (1, 4))),
             (torch.randn(3, 4),), min_opset=18, torchscript=False, check="shape"),
    ]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


def op_types(proto):
    return [n.op_type for n in proto.graph.node]


class Op(torch.nn.Module):
    """A torch.onnx.ops function of the inputs with the attributes given."""

    def __init__(self, fn, **attrs):
        super().__init__()
        self.fn, self.attrs = fn, attrs

    def forward(self, *inputs):
        return self.fn(*inputs, **self.attrs)


def Attention(**attrs):
    return Op(ops.attention, **attrs)


def Rotary(**attrs):
    return Op(ops.rotary_embedding, **attrs)


class AttentionWithCache(torch.nn.Module):
    def forward(self, q, k, v, past_k, past_v):
        y, present_k, present_v, _ = ops.attention(q, k, v, None, past_k, past_v, is_causal=True)
        return y, present_k, present_v


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
def test_attention(dynamo):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 8)
    mask = torch.randn(5, 7)
    model = Attention(scale=0.3, softmax_precision=1)
    proto = export(model, (q, k, v, mask), dynamo)
    (node,) = [n for n in proto.graph.node if n.op_type == "Attention"]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == pytest.approx(
        {"is_causal": 0, "scale": 0.3, "softmax_precision": 1})
    with torch.no_grad():
        check(proto, model(q, k, v, mask), q, k, v, mask)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
@pytest.mark.parametrize("mask", ["float", "bool", "causal"])
def test_attention_softcap_with_a_mask(dynamo, mask):
    """ONNX Runtime's Attention soft-caps the scores before adding the mask, PyTorch (and ONNX's definition)
    after: with a mask, the softcap is computed in plain operators, as PyTorch does."""
    torch.manual_seed(5)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 8)
    args = {"float": torch.randn(5, 7), "bool": torch.rand(2, 1, 5, 7) > 0.3, "causal": None}[mask]
    if mask == "bool":
        args[..., 0] = True

    class Capped(torch.nn.Module):
        def forward(self, q, k, v, m=None):
            return ops.attention(q, k, v, m, softcap=2.0, scale=0.3, is_causal=m is None)[0]

    inputs = (q, k, v) if args is None else (q, k, v, args)
    proto = export(Capped(), inputs, dynamo)
    assert "Attention" not in op_types(proto) and "Tanh" in op_types(proto)
    with torch.no_grad():
        check(proto, Capped()(*inputs), *inputs)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
def test_attention_grouped_query_3d_inputs(dynamo):
    """[B, S, H*E] inputs with q_num_heads and kv_num_heads (grouped-query), a boolean mask."""
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 5, 4 * 8), torch.randn(2, 5, 2 * 8), torch.randn(2, 5, 2 * 8)
    mask = torch.rand(2, 1, 5, 5) > 0.3
    mask[..., 0] = True
    model = Attention(q_num_heads=4, kv_num_heads=2)
    proto = export(model, (q, k, v, mask), dynamo)
    with torch.no_grad():
        check(proto, model(q, k, v, mask), q, k, v, mask)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
def test_attention_with_a_kv_cache(dynamo):
    torch.manual_seed(2)
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
    past_k, past_v = torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 4)
    model = AttentionWithCache()
    proto = export(model, (q, k, v, past_k, past_v), dynamo)
    assert op_types(proto).count("Attention") == 1
    with torch.no_grad():
        check(proto, model(q, k, v, past_k, past_v), q, k, v, past_k, past_v)


def test_attention_below_opset_23_names_the_opset():
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(torch2onnx.OnnxExporterError, match=r"onnx::Attention .*supported from opset 23"):
        export(Attention(), (q, q, q, torch.zeros(3, 3)), True, opset=20)


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_embedding(dynamo, interleaved):
    torch.manual_seed(3)
    x = torch.randn(2, 5, 2 * 8)  # [B, S, H*E]
    cos, sin = torch.randn(10, 4), torch.randn(10, 4)
    positions = torch.tensor([[0, 1, 2, 3, 4], [3, 4, 5, 6, 7]])
    model = Rotary(num_heads=2, interleaved=interleaved)
    proto = export(model, (x, cos, sin, positions), dynamo)
    assert op_types(proto) == ["RotaryEmbedding"]
    with torch.no_grad():
        check(proto, model(x, cos, sin, positions), x, cos, sin, positions)


class Custom(torch.nn.Module):
    def forward(self, x):
        return ops.symbolic("custom_domain::CustomOp", (x, None, x), {"alpha": 1.5, "n": 3, "names": ["a", "b"],
                                                                      "sizes": [1, 2], "scales": [0.5, 2.0]},
                            dtype=torch.float16, shape=(x.shape[0], 7), version=2)


def test_symbolic_custom_domain():
    proto = export(Custom(), (torch.randn(3, 4),), True)
    (node,) = proto.graph.node
    assert (node.domain, node.op_type) == ("custom_domain", "CustomOp")
    assert list(node.input)[1] == "" and len(node.input) == 3
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"alpha": 1.5, "n": 3, "names": [b"a", b"b"], "sizes": [1, 2], "scales": [0.5, 2.0]}
    assert {o.domain: o.version for o in proto.opset_import}["custom_domain"] == 2
    out = proto.graph.output[0].type.tensor_type
    assert out.elem_type == onnx.TensorProto.FLOAT16


class StandardSymbolic(torch.nn.Module):
    """ONNX's own operators through symbolic and symbolic_multi_out, which ONNX Runtime runs."""

    def forward(self, x):
        y = ops.symbolic("LeakyRelu", (x,), {"alpha": 0.25}, dtype=x.dtype, shape=x.shape)
        a, b = ops.symbolic_multi_out("Split", (y, torch.tensor([1, 3])), {"axis": 1}, dtypes=(x.dtype, x.dtype),
                                      shapes=((x.shape[0], 1), (x.shape[0], 3)))
        return a, b


def test_symbolic_standard_operators_run():
    x = torch.randn(3, 4)
    proto = export(StandardSymbolic(), (x,), True)
    assert [t for t in op_types(proto) if t != "Constant"] == ["LeakyRelu", "Split"]
    y = torch.nn.functional.leaky_relu(x, 0.25)
    check(proto, (y[:, :1], y[:, 1:]), x)


def test_pt2_through_the_command_line(tmp_path):
    """The command line reads the program without torch.onnx.ops registered: arguments by the names the
    program gives them, defaults where it gives none."""
    torch.manual_seed(4)
    q, k, v, mask = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4), torch.zeros(3, 5)
    model = Attention(scale=0.5)
    program = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(model, (q, k, v, mask)), str(program))
    out = tmp_path / "m.onnx"
    r = subprocess.run([harness.CLI, "export", str(program), "-o", str(out), "--opset", "23"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    with torch.no_grad():
        check(onnx.load(str(out)), model(q, k, v, mask), q, k, v, mask)
