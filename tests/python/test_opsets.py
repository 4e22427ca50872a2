"""Opsets 18 to 23 (the default build's ONNX library knows them, and 24-28: test_opsets_24_28.py; the 1.13
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
from torch2onnx import verification

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
    assert (torch2onnx._C.DEFAULT_OPSET, torch2onnx._C.DEFAULT_PROGRAM_OPSET, torch2onnx._C.MAX_OPSET) == (17, 20, 28)
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
    r = subprocess.run([harness.CLI, "export", str(pt), "-o", str(out), "--input", "2x3", "--opset", "29"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "9 to 28" in r.stderr and not out.exists()
    assert "9..28" in subprocess.run([harness.CLI, "--help"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("opset", [17, 23])
def test_sdpa_is_one_attention_node_at_23(opset, tmp_path):
    q, k, v = (torch.randn(2, 4, 6, 8) for _ in range(3))
    _, ops = exported(Sdpa(), (q, k, v), tmp_path, opset)
    assert (ops["Attention"], ops["Softmax"]) == ((1, 0) if opset == 23 else (0, 1)), ops


def test_multi_query_sdpa_is_one_attention_node_at_23(tmp_path):
    """One kv head broadcast over the query heads (multi-query attention, Falcon: sdpa without enable_gqa)."""
    q, k, v = torch.randn(2, 4, 6, 8), torch.randn(2, 1, 6, 8), torch.randn(2, 1, 6, 8)
    mask = torch.rand(2, 1, 6, 6) > 0.3
    _, ops = exported(harness.Lambda(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
                      (q, k, v, mask), tmp_path, 23)
    assert (ops["Attention"], ops["Softmax"]) == (1, 0), ops


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


class HandRmsNorm(nn.Module):
    """RMS normalization as transformers writes it (LlamaRMSNorm, T5LayerNorm ...), in a few forms."""

    def __init__(self, form, d=8):
        super().__init__()
        self.form = form
        self.weight = nn.Parameter(torch.randn(d))

    def forward(self, x):
        if self.form == "llama":
            h = x.to(torch.float32)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
            return self.weight * h.to(x.dtype)
        if self.form == "div":  # x / sqrt(mean(x * x) + eps) * w, no keepdim'd pow
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * self.weight
        if self.form == "unscaled":
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        # "middle_axis": the mean over another axis is not RMSNormalization's
        return x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6) * self.weight


@pytest.mark.parametrize("form", ["llama", "div", "unscaled", "middle_axis"])
@pytest.mark.parametrize("opset", [22, 23])
def test_hand_written_rms_norm_is_one_node_at_23(form, opset, tmp_path):
    _, ops = exported(HandRmsNorm(form).eval(), (torch.randn(2, 3, 8),), tmp_path, opset, input_names=["x"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}})
    fused = opset == 23 and form != "middle_axis"
    assert ops["RMSNormalization"] == int(fused), ops
    if fused:
        assert sum(ops.values()) == 1, ops


class CacheAttention(nn.Module):
    """One attention step over a KV cache as transformers writes it: the cache concatenated, repeat_kv's
    expand + reshape for grouped-query attention, sdpa with a boolean mask; returns the output and the cache."""

    def __init__(self, batch_one_cache=False):
        super().__init__()
        self.batch_one_cache = batch_one_cache

    def forward(self, q, k, v, past_k, past_v, mask):
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)

        def repeat_kv(x, n):
            b, h, t, d = x.shape
            if self.batch_one_cache:  # a cache of batch 1 broadcast to the queries' batch: not a repeat
                b = q.shape[0]
            return x[:, :, None, :, :].expand(b, h, n, t, d).reshape(b, h * n, t, d)
        y = F.scaled_dot_product_attention(q, repeat_kv(k, 2), repeat_kv(v, 2), attn_mask=mask)
        return y, k, v


def _cache_inputs(batch=2, cache_batch=2, seq=3, past=5):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(batch, 4, seq, 8, generator=g)
    k, v = (torch.randn(cache_batch, 2, seq, 8, generator=g) for _ in range(2))
    pk, pv = (torch.randn(cache_batch, 2, past, 8, generator=g) for _ in range(2))
    mask = torch.rand(batch, 1, seq, past + seq, generator=g) > 0.3
    mask[..., 0] = True
    return q, k, v, pk, pv, mask


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("opset", [22, 23])
def test_kv_cache_attention_takes_the_cache_at_23(opset, dynamo, tmp_path):
    """At 23 the Attention node takes past_key / past_value and returns the new cache (no Concat, no repeated
    K/V: the node broadcasts kv heads itself); matches PyTorch at other batch / seq / past sizes."""
    names = ["q", "k", "v", "past_k", "past_v", "mask"]
    axes = {"q": {0: "batch", 2: "seq"}, "k": {0: "batch", 2: "seq"}, "v": {0: "batch", 2: "seq"},
            "past_k": {0: "batch", 2: "past"}, "past_v": {0: "batch", 2: "past"}, "mask": {0: "batch", 2: "seq", 3: "total"}}
    if dynamo:
        b, s, p = torch.export.Dim("batch"), torch.export.Dim("seq"), torch.export.Dim("past")
        kw = dict(dynamo=True, dynamic_shapes=({0: b, 2: s}, {0: b, 2: s}, {0: b, 2: s}, {0: b, 2: p},
                                               {0: b, 2: p}, {0: b, 2: s, 3: torch.export.Dim("total")}))
    else:
        kw = dict(input_names=names, dynamic_axes=axes)
    path = tmp_path / "m.onnx"  # (verify would draw the mask's total length apart from seq + past)
    torch2onnx.export(CacheAttention().eval(), _cache_inputs(), str(path), opset_version=opset,
                      output_names=["y", "present_k", "present_v"], **kw)
    model = harness.full_check(str(path))
    ops = collections.Counter(n.op_type for n in model.graph.node)
    if opset == 23:
        att = [n for n in model.graph.node if n.op_type == "Attention"]
        assert len(att) == 1 and len(att[0].input) == 6 and list(att[0].output[1:]) == ["present_k", "present_v"]
        readers = [n.op_type for n in model.graph.node for i in n.input if i in ("past_k", "past_v", "k", "v")]
        assert readers == ["Attention"] * 4 and ops["Reshape"] == 0, (readers, ops)  # no Concat, no repeat
    else:
        assert ops["Attention"] == 0 and ops["Concat"] >= 2, ops
    session = verification.ort_session(model.SerializeToString())
    for size in [(3, 3, 1, 7), (1, 1, 1, 2), (2, 2, 4, 0)]:
        inputs = _cache_inputs(*size)
        expected = CacheAttention()(*inputs)
        actual = session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)})
        harness.compare([e.numpy() for e in expected], actual)


def test_kv_cache_broadcast_from_batch_one_is_not_a_repeat(tmp_path):
    """A cache of batch 1 expanded to the queries' batch is not repeat_kv: left as it is (and still right)."""
    inputs = _cache_inputs(cache_batch=1)
    _, ops = exported(CacheAttention(batch_one_cache=True).eval(), inputs, tmp_path, 23,
                      input_names=["q", "k", "v", "past_k", "past_v", "mask"],
                      dynamic_axes={"q": {0: "batch"}, "mask": {0: "batch"}})
    assert ops["Attention"] == 1 and ops["Concat"] >= 2, ops


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


class PartialRotary(nn.Module):
    """Rotary embedding of the first half of the head dim only (Phi's partial_rotary_factor, GPT-NeoX's
    rotary_pct): cat(rope(x[..., :r]), x[..., r:])."""

    def __init__(self):
        super().__init__()
        self.rope = Rotary(d=4)

    def forward(self, q):
        rotated, _ = self.rope(q[..., :4], q[..., :4])
        return torch.cat([rotated, q[..., 4:]], dim=-1)


def test_partial_rotary_is_one_node_at_23(tmp_path):
    model, ops = exported(PartialRotary().eval(), (torch.randn(2, 4, 6, 8),), tmp_path, 23)
    assert ops["RotaryEmbedding"] == 1 and ops["Slice"] == 0 and ops["Neg"] == 0, ops  # (a Concat builds position ids)
    node = next(n for n in model.graph.node if n.op_type == "RotaryEmbedding")
    assert [a.i for a in node.attribute if a.name == "rotary_embedding_dim"] == [4]


class InterleavedRotary(nn.Module):
    """GPT-J's rotary embedding: x [B, S, H, D] (heads after the sequence), the first `rot` dims of each head
    rotated in pairs (rotate_every_two), cos / sin [B, S, rot/2] looked up from the positions at run time and
    repeat_interleave'd."""

    def __init__(self, rot=4, max_len=32):
        super().__init__()
        self.rot = rot
        inv = 1.0 / (10000 ** (torch.arange(0, rot, 2).float() / rot))
        freqs = torch.outer(torch.arange(max_len).float(), inv)
        self.register_buffer("sincos", torch.cat([freqs.sin(), freqs.cos()], dim=-1))

    def forward(self, x, positions):
        sin, cos = torch.split(self.sincos[positions], self.rot // 2, dim=-1)

        def rotate_every_two(t):
            return torch.stack((-t[..., 1::2], t[..., ::2]), dim=-1).flatten(-2)

        def apply(t):
            s = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
            c = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
            return t * c + rotate_every_two(t) * s
        if self.rot == x.shape[-1]:
            return apply(x)
        return torch.cat([apply(x[..., : self.rot]), x[..., self.rot:]], dim=-1)


@pytest.mark.parametrize("rot", [4, 8], ids=["partial", "whole"])
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_interleaved_rotary_is_one_node_at_23(rot, dynamo, tmp_path):
    """One RotaryEmbedding(interleaved) on the [B, S, H*D] view, matching PyTorch at other batch / seq sizes."""
    x, positions = torch.randn(2, 5, 3, 8), torch.tensor([[3, 4, 5, 6, 7], [0, 1, 2, 3, 4]])
    if dynamo:
        b, s = torch.export.Dim("batch"), torch.export.Dim("seq")
        kw = dict(dynamo=True, dynamic_shapes=({0: b, 1: s}, {0: b, 1: s}))
    else:
        kw = dict(input_names=["x", "positions"], dynamic_axes={"x": {0: "batch", 1: "seq"},
                                                               "positions": {0: "batch", 1: "seq"}})
    model, ops = exported(InterleavedRotary(rot).eval(), (x, positions), tmp_path, 23, **kw)
    assert ops["RotaryEmbedding"] == 1 and ops["Neg"] == 0 and ops["Tile"] == 0, ops
    node = next(n for n in model.graph.node if n.op_type == "RotaryEmbedding")
    attrs = {a.name: a.i for a in node.attribute}
    assert attrs["interleaved"] == 1 and attrs["num_heads"] == 3 and attrs.get("rotary_embedding_dim", 0) == (
        4 if rot == 4 else 0), attrs


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
