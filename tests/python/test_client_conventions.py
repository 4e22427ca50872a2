"""The calling conventions of the programs that call torch.onnx.export for
most of its users, reproduced on small models without those packages
(`make test-clients` runs the programs themselves):

- Hugging Face's exporter (optimum) passes a decoder's KV cache as a list of
  (key, value) tuples, names every flattened tensor ("past_key_values.0.key")
  and makes batch, sequence and past-sequence axes dynamic;
- Ultralytics names "images" / "output0" with batch, height and width dynamic.

Every tensor the caller passes is a graph input (never a constant), and the
model matches PyTorch at other sizes along the dynamic axes. Sizes that the
weights fix (a fused q/k/v projection split, an attention head size) are
static even where the example run's tensors also have dynamic axes."""
import io
import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch2onnx
from conftest import check_onnx, run_ort
from dropin import check

# ---- nested inputs: every tensor becomes an input, in flattening order


class PairsSum(nn.Module):
    def forward(self, x, pairs):
        for k, v in pairs:
            x = x + k * v
        return x


class ListsSum(nn.Module):
    def forward(self, x, lists):
        for l in lists:
            for t in l:
                x = x * t
        return x


class DictOfLists(nn.Module):
    def forward(self, x, d):
        return x + d["a"][0] + d["a"][1] * d["b"]


def _pairs(n, shape=(2, 3)):
    return [(torch.randn(*shape), torch.randn(*shape)) for _ in range(n)]


def test_list_of_tuples_is_flattened_into_inputs():
    # optimum's past_key_values: [(k0, v0), (k1, v1)]
    e = check(PairsSum(), (torch.randn(2, 3), _pairs(2)), more=[(torch.randn(2, 3), _pairs(2))])
    assert len(e.ours.graph.initializer) == 0


def test_tuple_of_tuples_and_list_of_lists():
    check(PairsSum(), (torch.randn(2, 3), tuple(tuple(p) for p in _pairs(3))))
    check(ListsSum(), (torch.randn(2, 3), [[torch.randn(2, 3), torch.randn(2, 3)], [torch.randn(2, 3)]]))


def test_dict_holding_a_list():
    check(DictOfLists(), (torch.randn(2, 3), {"a": [torch.randn(2, 3), torch.randn(2, 3)], "b": torch.randn(2, 3)}, {}))


def test_list_of_tuples_with_names_and_dynamic_axes():
    names = ["x", "past.0.key", "past.0.value", "past.1.key", "past.1.value"]
    axes = {n: {0: "batch"} for n in names}
    check(PairsSum(), (torch.randn(2, 3), _pairs(2)), input_names=names, dynamic_axes=axes,
          more=[(torch.randn(5, 3), _pairs(2, (5, 3)))])


def test_scripted_list_of_tuples():
    from typing import List, Tuple

    class Scripted(nn.Module):
        def forward(self, x, pairs: List[Tuple[torch.Tensor, torch.Tensor]]):
            for k, v in pairs:
                x = x + k * v
            return x

    # (torch.onnx fails here: "symbolic for __getitem__ produced an incorrect number of outputs")
    check(Scripted(), (torch.randn(2, 3), _pairs(2)), script=True, more=[(torch.randn(2, 3), _pairs(2))], theirs="fails")


def test_a_passed_tensor_never_becomes_a_constant_silently():
    # Whatever the container, the example's tensors are the graph's inputs:
    # the exported model computes with the values it is fed.
    buf = io.BytesIO()
    x, pairs = torch.randn(2, 3), _pairs(2)
    torch2onnx.export(PairsSum(), (x, pairs), buf)
    proto = check_onnx(buf.getvalue())
    assert len(proto.graph.input) == 5 and not proto.graph.initializer
    fresh = _pairs(2)
    out = run_ort(buf.getvalue(), [x] + [t for p in fresh for t in p])[0]
    np.testing.assert_allclose(out, PairsSum()(x, fresh).numpy(), rtol=1e-5, atol=1e-5)


# ---- a decoder called as optimum calls it (text-generation-with-past)

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")  # (torch 2.x; 1.13 spells attention out)
HAS_EXPORT = hasattr(torch, "export") and hasattr(torch.export, "Dim")
needs_export = pytest.mark.skipif(not HAS_EXPORT, reason="torch.export (dynamo=True) is torch 2.x's")


def attention(q, k, v, mask=None):
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v



class TinyDecoder(nn.Module):
    """GPT-2's structure: a fused q/k/v projection split along the hidden
    size, positions from the attention mask's cumsum, the cache as a list of
    (key, value) tuples, scaled_dot_product_attention over heads."""

    def __init__(self, vocab=50, hidden=32, heads=4, layers=2):
        super().__init__()
        self.hidden, self.heads = hidden, heads
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(64, hidden)
        self.c_attn = nn.ModuleList(nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.c_proj = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        for p in self.parameters():  # attention far from uniform
            nn.init.normal_(p, std=0.5)

    def forward(self, input_ids, attention_mask, past_key_values):
        batch, seq = input_ids.shape
        past = past_key_values[0][0].shape[2]
        position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, past:]
        h = self.wte(input_ids) + self.wpe(position_ids)
        keep = attention_mask[:, None, None, :].to(torch.bool)
        causal = torch.ones(seq, past + seq, dtype=torch.bool).tril(past)
        mask = keep & causal
        presents = []
        head = self.hidden // self.heads
        for i, (k_past, v_past) in enumerate(past_key_values):
            q, k, v = self.c_attn[i](self.ln(h)).split(self.hidden, dim=2)
            q, k, v = (t.view(batch, seq, self.heads, head).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([k_past, k], dim=2)
            v = torch.cat([v_past, v], dim=2)
            presents.append((k, v))
            a = attention(q, k, v, mask)
            h = h + self.c_proj[i](a.transpose(1, 2).reshape(batch, seq, self.hidden))
        return self.lm_head(h), tuple(presents)


def _decoder_args(batch, seq, past, layers=2, heads=4, head=8):
    ids = torch.randint(0, 50, (batch, seq))
    mask = torch.ones(batch, past + seq, dtype=torch.int64)
    mask[0, :2] = 0  # left padding in the first row
    cache = [(torch.randn(batch, heads, past, head), torch.randn(batch, heads, past, head)) for _ in range(layers)]
    return ids, mask, cache


def _optimum_names(layers=2):
    inputs = ["input_ids", "attention_mask"]
    outputs = ["logits"]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    for i in range(layers):
        for kind in ("key", "value"):
            inputs.append(f"past_key_values.{i}.{kind}")
            outputs.append(f"present.{i}.{kind}")
            axes[inputs[-1]] = {0: "batch_size", 2: "past_sequence_length"}
            axes[outputs[-1]] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    return inputs, outputs, axes


@pytest.mark.parametrize("opset", [14, 17])
def test_decoder_with_past_as_optimum_exports_it(opset):
    torch.manual_seed(1)
    model = TinyDecoder().eval()
    inputs, outputs, axes = _optimum_names()
    check(model, _decoder_args(2, 4, 3), opset=opset, input_names=inputs, output_names=outputs, dynamic_axes=axes,
          more=[_decoder_args(3, 1, 6), _decoder_args(1, 5, 1), _decoder_args(2, 2, 9)])


@needs_export
def test_decoder_with_past_through_dynamo():
    torch.manual_seed(1)
    model = TinyDecoder().eval()
    ids, mask, cache = _decoder_args(2, 4, 3)
    batch, seq, past = torch.export.Dim("batch"), torch.export.Dim("seq"), torch.export.Dim("past")
    total = torch.export.Dim("total")
    shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: total},
              "past_key_values": [({0: batch, 2: past}, {0: batch, 2: past})] * 2}
    inputs, outputs, _ = _optimum_names()
    program = torch2onnx.export(model, (ids, mask, cache), dynamo=True, dynamic_shapes=shapes,
                                input_names=inputs, output_names=outputs)
    proto = program.model_proto
    onnx.checker.check_model(proto, full_check=True)
    assert [i.name for i in proto.graph.input] == inputs
    for args in [_decoder_args(3, 1, 6), _decoder_args(2, 4, 3)]:
        with torch.no_grad():
            logits, presents = model(*args)
        got = run_ort(proto.SerializeToString(), [args[0], args[1]] + [t for p in args[2] for t in p])
        expected = [logits] + [t for p in presents for t in p]
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-4)


@needs_export
@pytest.mark.parametrize("as_kwargs", [False, True], ids=["positional", "keywords"])
def test_decoder_with_past_through_dynamo_with_dynamic_axes(as_kwargs):
    # optimum's call with dynamo=True: the inputs as a trailing dict, names for
    # every flattened tensor, dynamic_axes with names such as
    # "past_sequence_length + sequence_length".
    torch.manual_seed(1)
    model = TinyDecoder().eval()
    ids, mask, cache = _decoder_args(2, 4, 3)
    inputs, outputs, axes = _optimum_names()
    args = ({"input_ids": ids, "attention_mask": mask, "past_key_values": cache},) if as_kwargs else (ids, mask, cache)
    proto = torch2onnx.export(model, args, dynamo=True, input_names=inputs, output_names=outputs,
                              dynamic_axes=axes).model_proto
    onnx.checker.check_model(proto, full_check=True)
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input}
    assert dims["attention_mask"] == ["batch_size", "past_sequence_length + sequence_length"]
    assert dims["past_key_values.1.value"] == ["batch_size", 4, "past_sequence_length", 8]
    for run in [_decoder_args(3, 1, 6), _decoder_args(1, 5, 2)]:
        with torch.no_grad():
            logits, presents = model(*run)
        got = run_ort(proto.SerializeToString(), [run[0], run[1]] + [t for p in run[2] for t in p])
        for e, g in zip([logits] + [t for p in presents for t in p], got):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=1e-4)


# ---- sizes fixed by the weights are static under dynamic axes


class FusedQKV(nn.Module):
    """GPT-2's c_attn: one Linear then split(hidden, dim=2)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.proj(x).split(16, dim=2)
        return q * k + v


class HeadsAfterCumsum(nn.Module):
    """A computed reshape before attention (the positions from a cumsum): the
    head size stays known."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 48)
        self.pos = nn.Embedding(32, 16)

    def forward(self, x, mask):
        pos = mask.cumsum(-1) + 1
        h = x + self.pos(pos)
        b, s = x.shape[0], x.shape[1]
        q, k, v = (t.reshape(b, s, 2, 8).transpose(1, 2) for t in self.proj(h).chunk(3, dim=-1))
        return attention(q, k, v).transpose(1, 2).reshape(b, s, 16)


class SqueezeHead(nn.Module):
    """DeBERTa-v2's pattern: a Linear to one value per position, then squeeze(-1)."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(16, 1)

    def forward(self, x):
        return self.score(x).squeeze(-1).softmax(-1)


@pytest.mark.parametrize("model,args,names,axes,more", [
    (FusedQKV(), (torch.randn(2, 5, 16),), ["x"], {"x": {0: "b", 1: "s"}}, [(torch.randn(3, 7, 16),)]),
    (HeadsAfterCumsum(), (torch.randn(2, 5, 16), torch.ones(2, 5, dtype=torch.int64)), ["x", "mask"],
     {"x": {0: "b", 1: "s"}, "mask": {0: "b", 1: "s"}},
     [(torch.randn(1, 9, 16), torch.ones(1, 9, dtype=torch.int64))]),
    (SqueezeHead(), (torch.randn(2, 5, 16),), ["x"], {"x": {0: "b", 1: "s"}}, [(torch.randn(4, 2, 16),)]),
], ids=["split-of-fused-qkv", "sdpa-after-cumsum", "squeeze"])
def test_sizes_fixed_by_weights_are_static(model, args, names, axes, more):
    check(model, args, input_names=names, dynamic_axes=axes, more=more)


class SplitInHalves(nn.Module):
    def forward(self, x):
        a, b = x.split(x.shape[1] // 2, dim=1)
        return a * b


def test_a_size_that_really_varies_is_still_refused():
    # split(x.shape[1] // 2) along a dynamic axis: the pieces' sizes vary, and
    # opset 9's Split needs them at export time. Refused, never baked.
    with pytest.raises(torch2onnx.errors.OnnxExporterError, match="dynamic"):
        torch2onnx.export(SplitInHalves(), (torch.randn(2, 6),), io.BytesIO(), opset_version=9,
                          input_names=["x"], dynamic_axes={"x": [1]})


# ---- Ultralytics: images in, output0 (and output1) out, batch/height/width dynamic


class TinyDetect(nn.Module):
    """A YOLO-like head: strided convs, per-level outputs flattened and
    concatenated along the anchors, box/class split along a fixed channel dim."""

    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.p3 = nn.Conv2d(8, 16, 3, 2, 1)
        self.p4 = nn.Conv2d(16, 16, 3, 2, 1)
        self.heads = nn.ModuleList(nn.Conv2d(16, 4 + classes, 1) for _ in range(2))
        self.classes = classes

    def forward(self, images):
        x = F.silu(self.stem(images))
        f3 = F.silu(self.p3(x))
        f4 = F.silu(self.p4(f3))
        outs = [h(f).flatten(2) for h, f in zip(self.heads, (f3, f4))]
        y = torch.cat(outs, 2)
        box, cls = y.split((4, self.classes), 1)
        return torch.cat((box * 2.0, cls.sigmoid()), 1)


def test_ultralytics_dynamic_export():
    model = TinyDetect().eval()
    axes = {"images": {0: "batch", 2: "height", 3: "width"}, "output0": {0: "batch", 2: "anchors"}}
    check(model, (torch.randn(1, 3, 64, 64),), input_names=["images"], output_names=["output0"], dynamic_axes=axes,
          more=[(torch.randn(2, 3, 96, 64),), (torch.randn(3, 3, 32, 128),)])


# ---- start-up: no torch._dynamo on the dynamo=False path


def test_export_imports_nothing_of_dynamo():
    # The meta-device example run in a Python process uses LibTorch's C++ meta
    # kernels (src/torch_passes/cpp_meta_kernels.cpp), not the Python ones
    # `import torch` installs: the first of those imports torch._dynamo
    # (seconds). A fresh interpreter, as a user's script starts.
    import subprocess
    import sys

    code = """
import io, sys, torch, torch2onnx
sys.path.insert(0, {tests!r})
from test_client_conventions import TinyDecoder, _decoder_args, _optimum_names
names, outputs, axes = _optimum_names()
torch2onnx.export(TinyDecoder().eval(), _decoder_args(2, 4, 3), io.BytesIO(), input_names=names,
                  output_names=outputs, dynamic_axes=axes)
mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8), torch.nn.Softmax(-1))
torch2onnx.export(mlp, (torch.randn(2, 4),), io.BytesIO())
print(sorted(m for m in sys.modules if m.startswith("torch._dynamo")))
""".format(tests=os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
