"""Attention (src/symbolics/transformer.cpp): torch 2.x's
scaled_dot_product_attention, PyTorch's fused transformer fast paths and
the transformer modules around them. Cases are traced under no_grad in eval
mode, as users save them, which records the fused operators."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
B, T, D, H = 2, 5, 16, 4
x = torch.randn(B, T, D)
mem = torch.randn(B, 7, D)
pad = torch.tensor([[False] * T, [False, False, False, True, True]])


def encoder(activation="relu", norm_first=False, layers=2):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(D, H, 32, dropout=0.1, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


class EncoderWithPadding(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = encoder()

    def forward(self, x, pad):
        return self.enc(x, src_key_padding_mask=pad)


class EncoderWithMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = encoder()

    def forward(self, x, mask):
        return self.enc(x, mask=mask)


class MHA(nn.Module):
    def __init__(self, need_weights=False, average=True, kdim=None):
        super().__init__()
        torch.manual_seed(2)
        self.mha = nn.MultiheadAttention(D, H, batch_first=True)
        self.need_weights, self.average = need_weights, average

    def forward(self, q, k, v):
        out, w = self.mha(q, k, v, need_weights=self.need_weights, average_attn_weights=self.average)
        return (out, w) if self.need_weights else out


class SelfMHA(MHA):
    def forward(self, x, pad=None):
        out, _ = self.mha(x, x, x, key_padding_mask=pad, need_weights=False)
        return out


class SelfMHAPadded(MHA):
    def forward(self, x, pad):
        out, _ = self.mha(x, x, x, key_padding_mask=pad, need_weights=False)
        return out


def decoder():
    torch.manual_seed(3)
    layer = nn.TransformerDecoderLayer(D, H, 32, dropout=0.1, batch_first=True)
    return nn.TransformerDecoder(layer, 2).eval()


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.dec = decoder()

    def forward(self, tgt, memory, tgt_mask):
        return self.dec(tgt, memory, tgt_mask=tgt_mask)


causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
causal_bool = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
OPSETS = (9, 13, 17, 23)  # (23: the attention is one Attention node)

class SDPA(nn.Module):
    """F.scaled_dot_product_attention with its keyword arguments fixed."""

    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v, *mask):
        kw = dict(self.kw)
        if mask:
            kw["attn_mask"] = mask[0]
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


class Eager(nn.Module):
    """softmax(q k^T * s [+ mask]) v written out, as transformers' eager attention paths write it
    (fuse_eager_attention: one Attention node from opset 23). `where`: the mask is built inside from a bool
    input, torch.where(allowed, 0, finfo.min), as transformers builds its masks. `cache`: a decoding step, k
    and v concatenated to past ones (forward(q, past_k, k, past_v, v, *mask)): the node takes the cache."""

    def __init__(self, divide=None, multiply=None, q_scale=None, where=False, weights=False, cache=False):
        super().__init__()
        self.divide, self.multiply, self.q_scale, self.where, self.weights = divide, multiply, q_scale, where, weights
        self.cache = cache

    def forward(self, q, *args):
        if self.cache:
            past_k, k, past_v, v, *mask = args
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        else:
            k, v, *mask = args
        if self.q_scale is not None:
            q = q * self.q_scale
        w = torch.matmul(q, k.transpose(-1, -2))
        if self.divide is not None:
            w = w / self.divide
        if self.multiply is not None:
            w = w * self.multiply
        if mask:
            m = mask[0]
            if self.where:
                m = torch.where(m, 0.0, torch.finfo(q.dtype).min)
            w = w + m
        p = torch.softmax(w, dim=-1)
        y = torch.matmul(p, v)
        return (y, p) if self.weights else y


class Merged(nn.Module):
    """BLOOM's attention: the heads merged into the batch, baddbmm adding a per-head bias (alibi, [B*H, 1, S]),
    the view back to [B, H, L, S], a mask, softmax, the view, bmm; a decoding step (k and v concatenated to past
    ones). fuse_eager_attention: one Attention node taking the cache, the bias viewed as [B, H, 1, S]."""

    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, q, past_k, k, past_v, v, bias, mask):
        b, h, length, d = q.shape
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        q3 = q.reshape(b * h, -1, d)
        k3 = k.reshape(b * h, -1, d).transpose(-1, -2)
        v3 = v.reshape(b * h, -1, d)
        w = bias.baddbmm(batch1=q3, batch2=k3, beta=1.0, alpha=self.alpha).view(b, h, length, -1) + mask
        y = torch.bmm(torch.softmax(w, dim=-1).view(b * h, length, -1), v3)
        return y.view(b, h, length, d)


def attention_rows(g, shape):
    """A float mask with a row of finfo.min only (PyTorch: the mean of the values; ONNX Runtime's Attention
    would give zeros: guard_attention_masks), a row mixing finfo.min and -inf, and a row of -inf only."""
    m = torch.randn(*shape, generator=g)
    low = torch.finfo(torch.float32).min
    m[..., 0, :] = low
    m[..., 1, :] = low
    m[..., 1, ::2] = float("-inf")
    m[..., 2, :3] = low
    return m


def eager_cases():
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 4, 5, 8, generator=g) for _ in range(3))
    k7, v7 = torch.randn(2, 4, 7, 8, generator=g), torch.randn(2, 4, 7, 6, generator=g)
    float_mask = torch.randn(2, 1, 5, 7, generator=g)
    float_mask[1, 0, 3, 2] = float("-inf")
    rows = attention_rows(g, (2, 1, 5, 7))
    minus_inf_row = float_mask.clone()
    minus_inf_row[0, 0, 4] = float("-inf")  # PyTorch's eager softmax: NaN in that row
    allowed = torch.rand(2, 1, 5, 7, generator=g) > 0.3
    allowed[0, 0, 1] = False  # a row of finfo.min
    one_head = (torch.randn(2, 1, 7, 8, generator=g), torch.randn(2, 1, 7, 6, generator=g))
    fused = {23: ("Attention",), 28: ("Attention",)}
    return [
        Case("eager_attention", Eager(divide=2.8), (q, k7, v7, float_mask), expect_ops=fused),
        Case("eager_attention_rows", Eager(multiply=0.35), (q, k7, v7, rows), expect_ops=fused),
        Case("eager_attention_minus_inf_row", Eager(divide=2.8), (q, k7, v7, minus_inf_row), expect_ops=fused),
        Case("eager_attention_where_mask", Eager(divide=2.8, where=True), (q, k7, v7, allowed), expect_ops=fused),
        # without a cache, a mask that needs expanding to the queries stays decomposed (the graph would grow) ...
        Case("eager_attention_key_padding", Eager(divide=2.8), (q, k7, v7, float_mask[:, :, :1])),
        # ... with one, it is one node taking the cache
        Case("eager_attention_cache_key_padding", Eager(divide=2.8, cache=True),
             (q, k7[:, :, :3], k7[:, :, 3:], v7[:, :, :3], v7[:, :, 3:], float_mask[:, :, :1]), expect_ops=fused),
        Case("eager_attention_2d_mask", Eager(divide=2.8), (q, k7, v7, float_mask[0, 0]), expect_ops=fused),
        Case("eager_attention_q_scaled", Eager(q_scale=0.5, multiply=0.7), (q, k, v), expect_ops=fused),
        Case("eager_attention_unscaled", Eager(), (q, k, v), expect_ops=fused),
        Case("eager_attention_one_kv_head", Eager(divide=2.8), (q, *one_head, float_mask), expect_ops=fused),
        Case("eager_attention_weights", Eager(divide=2.8, weights=True), (q, k7, v7, float_mask)),
        Case("eager_attention_merged_heads", Merged(0.35),
             (q, k7[:, :, :3], k7[:, :, 3:5], torch.randn(2, 4, 3, 8, generator=g), torch.randn(2, 4, 2, 8, generator=g),
              torch.randn(8, 1, 5, generator=g), float_mask[:, :, :, :5]), expect_ops=fused),
        # (float16: at the dynamic sweep's grown sizes PyTorch's half arithmetic and ONNX Runtime's differ by up to
        # 5e-3 (1 + |torch|), the written-out form as much as the Attention node)
        Case("eager_attention_half", Eager(divide=2.8), (q.half(), k7.half(), v7.half(), float_mask.half()),
             atol_scale=1e-2, opsets=(23,)),
    ]


class Routed(nn.Module):
    """sdpa after a mixture of experts' grouped product (aten::_grouped_mm: its meta kernel takes bfloat16 only,
    so the example run resized along the dynamic axes stops there) with the heads from a view's -1: the query's
    heads and head size are not known when sdpa converts; the Attention node shares the kv heads at run time (it
    was refused: 'dim 3 of argument 0 (query) is dynamic')."""

    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x, w, offs, kv):
        h = torch._grouped_mm(x, w, offs=offs)
        q = h.view(kv.shape[0], -1, 4, 8).transpose(1, 2)
        return torch.nn.functional.scaled_dot_product_attention(q, kv, kv, **self.kw)


def routed_cases(g):
    if not hasattr(torch, "_grouped_mm"):
        return []
    offs = torch.tensor([3, 3, 8], dtype=torch.int32)
    x, w = torch.randn(8, 16, generator=g), torch.randn(3, 16, 32, generator=g)
    flags = ("--dynamic-axes", '{"x":[0],"kv":[0]}', "--input-names", "x,w,offs,kv")
    kv, kv2 = torch.randn(2, 4, 7, 8, generator=g), torch.randn(2, 2, 7, 8, generator=g)
    more = [(torch.randn(16, 16, generator=g), w, torch.tensor([5, 9, 16], dtype=torch.int32),
             torch.randn(4, 4, 7, 8, generator=g))]
    return [
        Case("sdpa_heads_unknown", Routed(), (x, w, offs, kv), pt2=False, extra=flags, min_opset=23,
             expect_ops={23: ("Attention",)}, more_args=more),
        Case("sdpa_heads_unknown_gqa", Routed(enable_gqa=True), (x, w, offs, kv2), pt2=False, extra=flags,
             min_opset=23, expect_ops={23: ("Attention",)}),
    ]


def sdpa_cases():
    """torch 2.x only (1.13 has no scaled_dot_product_attention)."""
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return []
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 4, 5, 8, generator=g) for _ in range(3))
    k7, v7 = torch.randn(2, 4, 7, 8, generator=g), torch.randn(2, 4, 7, 6, generator=g)
    bool_mask = torch.rand(5, 7, generator=g) > 0.3
    bool_mask[2] = False  # a fully masked row: zeros, as PyTorch's safe softmax gives
    float_mask = torch.randn(2, 1, 5, 7, generator=g)
    float_mask[1, 0, 3] = float("-inf")
    kv_heads = (torch.randn(2, 2, 7, 8, generator=g), torch.randn(2, 2, 7, 8, generator=g))
    return [
        Case("sdpa", SDPA(), (q, k, v)),
        Case("sdpa_3d", SDPA(), (q[0], k[0], v[0])),
        Case("sdpa_cross_value_dim", SDPA(), (q, k7, v7)),
        Case("sdpa_bool_mask", SDPA(), (q, k7, v7, bool_mask)),
        Case("sdpa_float_mask", SDPA(), (q, k7, v7, float_mask)),
        Case("sdpa_float_mask_rows", SDPA(), (q, k7, v7, attention_rows(g, (2, 1, 5, 7)))),
        Case("sdpa_causal", SDPA(is_causal=True), (q, k, v)),
        Case("sdpa_causal_rectangular", SDPA(is_causal=True), (q, k7, v7)),
        Case("sdpa_scale", SDPA(scale=0.3), (q, k7, v7, float_mask)),
        Case("sdpa_negative_scale", SDPA(scale=-0.2), (q, k, v)),
        Case("sdpa_gqa", SDPA(enable_gqa=True), (q, *kv_heads)),
        Case("sdpa_gqa_causal", SDPA(enable_gqa=True, is_causal=True), (q, *kv_heads)),
        Case("sdpa_dropout_zero", SDPA(dropout_p=0.0), (q, k, v)),
        Case("sdpa_double", SDPA(), (q.double(), k.double(), v.double())),
        Case("sdpa_dropout_shape", SDPA(dropout_p=0.5), (q, k, v), check="shape", opsets=(17,)),
    ] + routed_cases(g)


CASES = sdpa_cases() + eager_cases() + [
    Case("encoder_fast_relu", encoder(), (x,), opsets=OPSETS),
    Case("encoder_fast_gelu", encoder("gelu"), (x,), opsets=OPSETS),
    Case("encoder_fast_norm_first", encoder(norm_first=True), (x,), opsets=OPSETS),
    Case("encoder_fast_key_padding", EncoderWithPadding(), (x, pad), opsets=OPSETS),
    Case("encoder_mask", EncoderWithMask(), (x, causal_bool), opsets=OPSETS),
    Case("mha_fast_self", SelfMHA(), (x,), opsets=OPSETS),
    Case("mha_fast_key_padding", SelfMHAPadded(), (x, pad), opsets=OPSETS),
    Case("mha_fast_cross", MHA(), (x, torch.randn(B, T, D), torch.randn(B, T, D)), opsets=OPSETS),
    Case("mha_weights_averaged", MHA(need_weights=True), (x, mem, mem), opsets=OPSETS),
    Case("mha_weights_per_head", MHA(need_weights=True, average=False), (x, mem, mem), opsets=OPSETS),
    Case("decoder_causal", Decoder(), (x, mem, causal), opsets=OPSETS),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
