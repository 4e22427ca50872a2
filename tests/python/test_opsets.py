"""Opsets 18 to 23 (the default build's ONNX library knows them; the 1.13
build stops at 17): the defaults (17 for TorchScript, 20 for torch.export
programs, as torch.onnx), the range, graph quality where a lowering becomes
one node, and the zoo at 18, 20 and 23 matching PyTorch in ONNX Runtime."""
import collections
import os
import subprocess
import sys

import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch2onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(torch2onnx._C.MAX_OPSET < 23, reason="this build exports opsets up to 17")


def exported(module, args, tmp_path, opset=None, **kw):
    path = tmp_path / f"m{opset}.onnx"
    torch2onnx.export(module, args, str(path), opset_version=opset, verify=True, **kw)
    model = harness.full_check(str(path))
    return model, collections.Counter(n.op_type for n in model.graph.node)


def opset_of(model):
    return {o.domain: o.version for o in model.opset_import}[""]


class Sdpa(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_defaults_are_torch_onnx_s(tmp_path):
    assert (torch2onnx._C.DEFAULT_OPSET, torch2onnx._C.DEFAULT_PROGRAM_OPSET, torch2onnx._C.MAX_OPSET) == (17, 20, 23)
    model, _ = exported(nn.Linear(3, 2), (torch.randn(2, 3),), tmp_path)
    assert opset_of(model) == 17
    program = torch2onnx.export(nn.Linear(3, 2), (torch.randn(2, 3),), dynamo=True)
    assert opset_of(program.model_proto) == 20


def test_cli_defaults_and_range(tmp_path):
    pt, pt2 = tmp_path / "m.pt", tmp_path / "m.pt2"
    module, args = nn.Linear(3, 2).eval(), (torch.randn(2, 3),)
    torch.jit.trace(module, args).save(str(pt))
    torch.export.save(torch.export.export(module, args), str(pt2))
    for src, inputs, want in ((pt, ["--input", "2x3"], 17), (pt2, [], 20)):
        out = tmp_path / (src.name + ".onnx")
        r = subprocess.run([harness.CLI, "export", str(src), "-o", str(out), *inputs], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert opset_of(onnx.load(str(out))) == want
    out = tmp_path / "x.onnx"
    r = subprocess.run([harness.CLI, "export", str(pt), "-o", str(out), "--input", "2x3", "--opset", "24"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "9 to 23" in r.stderr and not out.exists()
    assert "9..23" in subprocess.run([harness.CLI, "--help"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("opset", [17, 23])
def test_sdpa_is_one_attention_node_at_23(opset, tmp_path):
    q, k, v = (torch.randn(2, 4, 6, 8) for _ in range(3))
    _, ops = exported(Sdpa(), (q, k, v), tmp_path, opset)
    assert (ops["Attention"], ops["Softmax"]) == ((1, 0) if opset == 23 else (0, 1)), ops


def test_encoder_layer_attention_at_23(tmp_path):
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True).eval()
    with torch.no_grad():
        _, ops = exported(layer, (torch.randn(2, 5, 16),), tmp_path, 23)
    assert ops["Attention"] == 1 and ops["Softmax"] == 0, ops


@pytest.mark.parametrize("module,op,opset", [
    (nn.GroupNorm(4, 8), "GroupNormalization", 21),
    (nn.Mish(), "Mish", 18),
    (nn.GELU(), "Gelu", 20),
    (nn.GELU("tanh"), "Gelu", 20),
])
def test_one_node_from_its_opset(module, op, opset, tmp_path):
    x = torch.randn(2, 8, 3, 3)
    _, below = exported(module, (x,), tmp_path, opset - 1)
    _, at = exported(module, (x,), tmp_path, opset)
    assert below[op] == 0 and sum(at.values()) == 1 and at[op] == 1, (below, at)


@pytest.mark.skipif(not hasattr(nn, "RMSNorm"), reason="this torch has no nn.RMSNorm")
def test_rms_norm_is_one_node_at_23(tmp_path):
    _, ops = exported(nn.RMSNorm(8), (torch.randn(2, 3, 8),), tmp_path, 23)
    assert sum(ops.values()) == 1 and ops["RMSNormalization"] == 1, ops


def test_reductions_take_axes_as_input_from_18(tmp_path):
    model, _ = exported(harness.Lambda(lambda x: x.mean(1) + x.amax(2, keepdim=True).sum()), (torch.randn(2, 3, 4),),
                        tmp_path, 18)
    for n in model.graph.node:
        if n.op_type.startswith("Reduce"):
            assert len(n.input) == 2 and not [a for a in n.attribute if a.name == "axes"], n


def test_chunk_uses_num_outputs_from_18(tmp_path):
    model, _ = exported(harness.Lambda(lambda x: torch.cat([c * i for i, c in enumerate(x.chunk(3, 1))], 0)),
                        (torch.randn(2, 6),), tmp_path, 18)
    splits = [n for n in model.graph.node if n.op_type == "Split"]
    assert splits and all(len(n.input) == 1 and [a.i for a in n.attribute if a.name == "num_outputs"] == [3]
                          for n in splits)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Rotary(nn.Module):
    """LLaMA's rotary embedding of q and k ([B, H, S, D]): cos/sin buffers of
    cat(freqs, freqs), sliced to the sequence; `halves_differ` breaks the
    equal halves RotaryEmbedding needs (then nothing is fused)."""

    def __init__(self, d=8, max_len=16, halves_differ=False):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        freqs = torch.outer(torch.arange(max_len).float(), inv)
        emb = torch.cat((freqs, freqs * (1.5 if halves_differ else 1.0)), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, q, k):
        s = q.shape[-2]
        cos, sin = self.cos[:s], self.sin[:s]
        return q * cos + rotate_half(q) * sin, (k * cos) + (rotate_half(k) * sin)


@pytest.mark.parametrize("halves_differ", [False, True])
@pytest.mark.parametrize("opset", [22, 23])
def test_rotary_embedding_at_23(opset, halves_differ, tmp_path):
    q, k = torch.randn(2, 4, 6, 8), torch.randn(2, 2, 6, 8)
    model, ops = exported(Rotary(halves_differ=halves_differ).eval(), (q, k), tmp_path, opset,
                          input_names=["q", "k"], output_names=["q_rot", "k_rot"])
    fused = opset == 23 and not halves_differ
    assert ops["RotaryEmbedding"] == (2 if fused else 0), ops
    assert ops["Neg"] == (0 if fused else 2), ops  # rotate_half's nodes are gone when fused
    assert [o.name for o in model.graph.output] == ["q_rot", "k_rot"]


def _zoo():
    import zoo

    names = [("zoo", n) for n in zoo.MODELS]
    try:
        import tv_zoo
    except ImportError:
        return names
    return names + [("tv", n) for n in tv_zoo.FAMILIES.values()]


def _zoo_cases():
    """(source, name, opset): `make test` each model at one of 18, 20 and 23 in
    turn (every opset seen), `make test-full` (T2O_FULL=1) at the other two."""
    opsets = (18, 20, 23)
    return [(source, name, opset) for i, (source, name) in enumerate(_zoo()) for opset in opsets
            if (opset == opsets[i % len(opsets)]) != harness.FULL]


@pytest.mark.parametrize("source,name,opset", _zoo_cases())
def test_zoo_at_new_opsets(source, name, opset, tmp_path):
    """The seed models and a torchvision model per family (TorchScript path) at
    18, 20 and 23; the .pt2 path runs them at its default 20 too (test_dynamo)."""
    if source == "zoo":
        import zoo

        module, args = zoo.MODELS[name]()
    else:
        import tv_zoo

        module, args = tv_zoo.MODELS[name]()
    model, _ = exported(module, args, tmp_path, opset)
    assert opset_of(model) == opset
