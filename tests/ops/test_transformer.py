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
        Case("sdpa_causal", SDPA(is_causal=True), (q, k, v)),
        Case("sdpa_causal_rectangular", SDPA(is_causal=True), (q, k7, v7)),
        Case("sdpa_scale", SDPA(scale=0.3), (q, k7, v7, float_mask)),
        Case("sdpa_negative_scale", SDPA(scale=-0.2), (q, k, v)),
        Case("sdpa_gqa", SDPA(enable_gqa=True), (q, *kv_heads)),
        Case("sdpa_gqa_causal", SDPA(enable_gqa=True, is_causal=True), (q, *kv_heads)),
        Case("sdpa_dropout_zero", SDPA(dropout_p=0.0), (q, k, v)),
        Case("sdpa_double", SDPA(), (q.double(), k.double(), v.double())),
        Case("sdpa_dropout_shape", SDPA(dropout_p=0.5), (q, k, v), check="shape", opsets=(17,)),
    ]


CASES = sdpa_cases() + [
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
