"""Embedding lookups (src/symbolics/embedding.cpp)."""
import os
import sys
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def emb(*args, seed=0, scale=1.0, **kwargs):
    torch.manual_seed(seed)
    m = nn.Embedding(*args, **kwargs)
    with torch.no_grad():
        m.weight.mul_(scale)
    return m


def bag(*args, seed=0, **kwargs):
    torch.manual_seed(seed)
    return nn.EmbeddingBag(*args, **kwargs)


idx = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
flat = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
offsets = torch.tensor([0, 3, 3, 7])  # bag 1 is empty
psw = torch.rand(10)
# other indices and offsets (same shapes): the exported bags follow the run-time offsets
MORE = [(torch.tensor([3, 3, 8, 0, 1, 2, 9, 9, 5, 4]), torch.tensor([0, 0, 0, 9])),
        (torch.tensor([5, 1, 0, 9, 9, 2, 6, 1, 1, 1]), torch.tensor([0, 1, 2, 3])),
        (flat, torch.tensor([0, 6, 10, 10]))]


class RenormThenReuse(nn.Module):
    """max_norm renormalizes the weight in place: a later read sees the new rows."""

    def __init__(self):
        super().__init__()
        self.emb = emb(10, 4, max_norm=1.0, scale=2.0)

    def forward(self, i, j):
        return self.emb(i), self.emb.weight * 1


class BagWeights2d(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = bag(10, 3, mode="sum")

    def forward(self, i, w):
        return self.bag(i, per_sample_weights=w)


class EmbeddingBagScript(nn.Module):
    def __init__(self, mode: int, include_last: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(10, 3))
        self.mode = mode
        self.include_last = include_last

    def forward(self, i, o, w: Optional[torch.Tensor]):
        return torch.embedding_bag(self.weight, i, o, False, self.mode, False, w, self.include_last)[0]


class FunctionalBag(nn.Module):
    """F.embedding_bag scripted: its argument checks test one condition in
    several Ifs that raise (LibTorch's EliminateExceptions hung on them)."""

    def forward(self, w, i, o: Optional[torch.Tensor], psw: Optional[torch.Tensor]):
        return F.embedding_bag(i, w, offsets=o, mode="sum", per_sample_weights=psw)


class EmbeddingBagInternal(nn.Module):
    def __init__(self, mode: int, padding_idx: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(10, 3))
        self.mode = mode
        self.padding_idx = padding_idx

    def forward(self, i, o):
        return torch._embedding_bag(self.weight, i, o, False, self.mode, False, None, False, self.padding_idx)[0]


CASES = [
    # ---- embedding
    Case("embedding", emb(10, 3), (idx,)),
    Case("embedding_1d", emb(10, 3), (flat,)),
    Case("embedding_scalar_index", lambda w, i: F.embedding(i[1], w), (torch.randn(5, 2), torch.tensor([0, 3]))),
    Case("embedding_3d_indices", emb(7, 2), (torch.randint(0, 7, (2, 3, 4)),)),
    Case("embedding_int32_indices", emb(10, 3), (idx.int(),)),
    Case("embedding_padding_idx", emb(10, 3, padding_idx=2), (idx,)),
    Case("embedding_padding_idx_negative", emb(10, 3, padding_idx=-1), (idx,)),
    Case("embedding_weight_input", lambda w, i: F.embedding(i, w, padding_idx=0), (torch.randn(6, 4), idx % 6)),
    Case("embedding_double", lambda w, i: F.embedding(i, w), (torch.randn(6, 4).double(), idx % 6)),
    # ---- max_norm: aten::embedding_renorm_ then aten::embedding
    Case("embedding_max_norm", emb(10, 4, max_norm=1.0, scale=2.0), (idx,)),
    Case("embedding_max_norm_p1", emb(10, 4, max_norm=1.5, norm_type=1.0, scale=2.0), (idx,)),
    Case("embedding_max_norm_p3", emb(10, 4, max_norm=1.2, norm_type=3.0, scale=2.0), (flat,)),
    Case("embedding_max_norm_inf", emb(10, 4, max_norm=0.8, norm_type=float("inf"), scale=2.0), (idx,)),
    Case("embedding_max_norm_repeated", emb(10, 4, max_norm=1.0, scale=2.0), (torch.tensor([3, 3, 1, 3]),)),
    Case("embedding_max_norm_weight_after", RenormThenReuse(), (idx, flat), opsets=(9, 10, 11, 13, 17)),
    # ---- embedding_bag: offsets known only at run time (inputs of the model)
    Case("embedding_bag_sum", bag(10, 3, mode="sum"), (flat, offsets), more_args=MORE),
    Case("embedding_bag_mean", bag(10, 3, mode="mean"), (flat, offsets), more_args=MORE),
    Case("embedding_bag_max", bag(10, 3, mode="max"), (flat, offsets), more_args=MORE),
    Case("embedding_bag_2d_mean", bag(10, 3), (idx,), more_args=[(idx.flip(1),)]),
    Case("embedding_bag_2d_max", bag(10, 3, mode="max"), (idx,)),
    Case("embedding_bag_per_sample_weights", bag(10, 3, mode="sum"), (flat, offsets, psw),
         more_args=[(flat, torch.tensor([0, 8, 9, 9]), psw.flip(0))]),
    Case("embedding_bag_per_sample_weights_2d", BagWeights2d(), (idx, torch.rand(2, 4))),
    Case("embedding_bag_include_last_offset", bag(10, 3, mode="sum", include_last_offset=True),
         (flat, torch.tensor([0, 2, 2, 6, 10])), more_args=[(flat, torch.tensor([0, 0, 7, 7, 10]))]),
    Case("embedding_bag_include_last_offset_mean", bag(10, 3, mode="mean", include_last_offset=True),
         (flat, torch.tensor([0, 5, 5, 10]))),
    Case("embedding_bag_include_last_offset_max", bag(10, 3, mode="max", include_last_offset=True),
         (flat, torch.tensor([0, 1, 1, 10]))),
    Case("embedding_bag_padding_idx_sum", bag(10, 3, mode="sum", padding_idx=4), (flat, offsets)),
    Case("embedding_bag_padding_idx_mean", bag(10, 3, mode="mean", padding_idx=2), (flat, offsets)),
    Case("embedding_bag_padding_idx_max", bag(10, 3, mode="max", padding_idx=-1), (flat, offsets)),
    Case("embedding_bag_padding_idx_all_padded", bag(10, 3, mode="mean", padding_idx=1),
         (torch.tensor([1, 1, 2, 3]), torch.tensor([0, 2]))),
    Case("embedding_bag_max_norm", bag(10, 3, mode="sum", max_norm=0.5), (flat, offsets)),
    Case("embedding_bag_int32", bag(10, 3, mode="mean"), (flat.int(), offsets.int())),
    Case("embedding_bag_functional", lambda i, w, o: F.embedding_bag(i, w, o, mode="max"),
         (flat, torch.randn(10, 5), offsets)),
    Case("embedding_bag_script", EmbeddingBagScript(0, False), (flat, offsets, psw), script=True),
    Case("embedding_bag_script_include_last", EmbeddingBagScript(1, True), (flat, torch.tensor([0, 3, 10]), None),
         script=True),
    Case("embedding_bag_script_functional_weights", FunctionalBag(), (torch.rand(10, 15), flat, offsets, psw),
         script=True, more_args=[(torch.rand(10, 15), flat.flip(0), torch.tensor([0, 1, 1, 9]), psw.flip(0))]),
    Case("embedding_bag_script_functional_weights_2d", FunctionalBag(), (torch.rand(10, 15), idx, None, psw[:8].view(2, 4)),
         script=True),
    Case("_embedding_bag", EmbeddingBagInternal(1, 3), (flat, offsets), script=True),
    Case("_embedding_bag_no_padding", EmbeddingBagInternal(2, -1), (flat, offsets), script=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
