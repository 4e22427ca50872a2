"""Normalization (src/symbolics/normalization.cpp)."""
import os
import sys
from typing import List, Optional

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
import harness  # noqa: E402  (on the path optest sets)
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=1.0, shift=0.0):
    return torch.randn(*shape) * scale + shift


def randomized(m, seed=0):
    """Random affine parameters and running statistics (the defaults are 1/0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if not t.is_floating_point():
                continue
            if "var" in name:
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g))
    return m


class NativeLayerNorm(nn.Module):
    def __init__(self, shape: List[int], affine: bool):
        super().__init__()
        self.shape = shape
        self.weight = nn.Parameter(torch.randn(shape)) if affine else None
        self.bias = nn.Parameter(torch.randn(shape)) if affine else None

    def forward(self, x):
        return torch.native_layer_norm(x, self.shape, self.weight, self.bias, 1e-5)


class NativeBatchNorm(nn.Module):
    def __init__(self, c: int, training: bool, stats: bool = True):
        super().__init__()
        self.training_flag = training
        self.weight = nn.Parameter(torch.randn(c))
        self.bias = nn.Parameter(torch.randn(c))
        self.register_buffer("rm", torch.randn(c) if stats else None)
        self.register_buffer("rv", torch.rand(c) + 0.5 if stats else None)

    def forward(self, x):
        rm = self.rm.clone() if self.rm is not None else None
        rv = self.rv.clone() if self.rv is not None else None
        return torch.native_batch_norm(x, self.weight, self.bias, rm, rv, self.training_flag, 0.1, 1e-3)


class GroupNormScript(nn.Module):
    def __init__(self, groups: int, c: int):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.randn(c))
        self.bias = nn.Parameter(torch.randn(c))

    def forward(self, x):
        return torch.group_norm(x, self.groups, self.weight, self.bias, 1e-4)


class LayerNormScript(nn.Module):
    def forward(self, x, w: Optional[torch.Tensor], b: Optional[torch.Tensor]):
        return torch.layer_norm(x, [3, 4], w, b, 1e-3)


CASES = [
    # ---- batch_norm (eval: running statistics)
    Case("batch_norm1d_2d", randomized(nn.BatchNorm1d(5)), (r(4, 5, scale=2, shift=1),)),
    Case("batch_norm1d_3d", randomized(nn.BatchNorm1d(3)), (r(2, 3, 7),)),
    Case("batch_norm2d", randomized(nn.BatchNorm2d(3)), (r(2, 3, 4, 5, scale=3),)),
    Case("batch_norm2d_eps", randomized(nn.BatchNorm2d(3, eps=0.1)), (r(2, 3, 4, 5),)),
    Case("batch_norm2d_no_affine", randomized(nn.BatchNorm2d(3, affine=False)), (r(2, 3, 4, 5),)),
    Case("batch_norm3d", randomized(nn.BatchNorm3d(2)), (r(2, 2, 3, 4, 3),)),
    # track_running_stats=False: the batch's own statistics, also in eval
    Case("batch_norm1d_batch_stats", randomized(nn.BatchNorm1d(4, track_running_stats=False)), (r(6, 4, shift=2),)),
    Case("batch_norm2d_batch_stats", randomized(nn.BatchNorm2d(3, track_running_stats=False)), (r(2, 3, 4, 5),)),
    Case("batch_norm3d_batch_stats_no_affine", nn.BatchNorm3d(2, affine=False, track_running_stats=False),
         (r(2, 2, 3, 3, 4, scale=2),)),
    Case("batch_norm_functional_weight_only",
         lambda x, m, v, w: F.batch_norm(x, m, v, weight=w, eps=1e-3), (r(2, 3, 4), r(3), torch.rand(3) + 0.5, r(3))),
    Case("batch_norm_functional_training",
         lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (r(3, 2, 5), r(2), r(2))),
    Case("batch_norm2d_double", randomized(nn.BatchNorm2d(3)).double(), (r(2, 3, 4, 5).double(),)),
    Case("batch_norm_batch_stats_double", randomized(nn.BatchNorm1d(3, track_running_stats=False)).double(),
         (r(4, 3, 2).double(),)),
    # ---- native_batch_norm: (out, save_mean, save_invstd)
    Case("native_batch_norm_eval", NativeBatchNorm(3, False), (r(2, 3, 4),)),
    Case("native_batch_norm_train", NativeBatchNorm(3, True), (r(2, 3, 4, 2),)),
    Case("native_batch_norm_no_stats", NativeBatchNorm(2, True, stats=False), (r(4, 2),)),
    # ---- instance_norm
    Case("instance_norm1d", nn.InstanceNorm1d(3), (r(2, 3, 6),)),
    Case("instance_norm1d_unbatched", randomized(nn.InstanceNorm1d(3, affine=True)), (r(3, 6),)),
    Case("instance_norm2d_affine", randomized(nn.InstanceNorm2d(3, affine=True)), (r(2, 3, 4, 5, scale=2),)),
    Case("instance_norm2d_running_stats", randomized(nn.InstanceNorm2d(3, track_running_stats=True)),
         (r(2, 3, 4, 5),)),
    Case("instance_norm2d_running_stats_affine",
         randomized(nn.InstanceNorm2d(3, affine=True, track_running_stats=True)), (r(2, 3, 4, 5),)),
    Case("instance_norm3d", randomized(nn.InstanceNorm3d(2, affine=True, eps=1e-2)), (r(1, 2, 3, 4, 3),)),
    Case("instance_norm_functional_stats",
         lambda x, m, v: F.instance_norm(x, m.clone(), v.clone(), use_input_stats=True), (r(2, 3, 5), r(3), torch.rand(3) + 0.5)),
    # ---- layer_norm (decomposed below 17, LayerNormalization from 17)
    Case("layer_norm", randomized(nn.LayerNorm(6)), (r(2, 3, 6, scale=3),)),
    Case("layer_norm_2d", randomized(nn.LayerNorm([4, 5])), (r(3, 4, 5),)),
    Case("layer_norm_all_dims", randomized(nn.LayerNorm([2, 3, 4], eps=1e-3)), (r(2, 3, 4),)),
    Case("layer_norm_no_affine", nn.LayerNorm([3, 4], elementwise_affine=False), (r(2, 3, 4, shift=5),)),
    Case("layer_norm_1d_input", randomized(nn.LayerNorm(7)), (r(7),)),
    Case("layer_norm_weight_only", lambda x, w: F.layer_norm(x, [5], w), (r(2, 5), r(5))),
    Case("layer_norm_bias_only", lambda x, b: F.layer_norm(x, [2, 5], None, b), (r(3, 2, 5), r(2, 5))),
    Case("layer_norm_script", LayerNormScript(), (r(2, 3, 4), r(3, 4), r(3, 4)), script=True),
    Case("layer_norm_script_none", LayerNormScript(), (r(2, 3, 4), None, None), script=True),
    Case("layer_norm_double", randomized(nn.LayerNorm([3, 4])).double(), (r(2, 3, 4).double(),)),
    # ---- native_layer_norm: (out, mean, rstd)
    Case("native_layer_norm", NativeLayerNorm([4], True), (r(2, 3, 4),), atol_scale=1e-4),
    Case("native_layer_norm_2d_no_affine", NativeLayerNorm([3, 4], False), (r(2, 3, 4, scale=2, shift=1),)),
    # ---- group_norm
    Case("group_norm", randomized(nn.GroupNorm(2, 4)), (r(2, 4, 3, 5),)),
    Case("group_norm_one_group", randomized(nn.GroupNorm(1, 3)), (r(2, 3, 6),)),
    Case("group_norm_per_channel", randomized(nn.GroupNorm(3, 3)), (r(2, 3, 4, 4),)),
    Case("group_norm_no_affine", nn.GroupNorm(2, 6, affine=False, eps=1e-3), (r(3, 6, 2, 2, 2, scale=4),)),
    Case("group_norm_2d_input", randomized(nn.GroupNorm(2, 4)), (r(5, 4),)),
    Case("group_norm_double", randomized(nn.GroupNorm(2, 4)).double(), (r(2, 4, 3).double(),)),
    Case("group_norm_script", GroupNormScript(3, 6), (r(2, 6, 5),), script=True),
    Case("group_norm_opsets", randomized(nn.GroupNorm(4, 8)), (r(2, 8, 3, 3, scale=2, shift=1),),
         opsets=(9, 17, 18, 21, 23), expect_ops={9: ("InstanceNormalization",), 17: ("InstanceNormalization",),
                                                 21: ("GroupNormalization",)}),
    # wav2vec2's feature extractor: a group per channel over a long time axis, rows far from zero mean
    Case("group_norm_channels_over_time", randomized(nn.GroupNorm(16, 16)), (r(2, 16, 400, scale=3, shift=5),),
         opsets=(17, 20), expect_ops={20: ("InstanceNormalization",)}),
]


def rms_norm_cases():
    """torch 2.4+ (1.13 has no rms_norm): decomposed below opset 23, one RMSNormalization from 23."""
    if not hasattr(F, "rms_norm"):
        return []
    opsets = (9, 17, 18, 23)
    return [
        Case("rms_norm", randomized(nn.RMSNorm(6)), (r(2, 3, 6, scale=3),), opsets=opsets),
        Case("rms_norm_eps", randomized(nn.RMSNorm([3, 6], eps=1e-3)), (r(2, 3, 6),), opsets=opsets),
        Case("rms_norm_no_weight", nn.RMSNorm(5, elementwise_affine=False), (r(4, 5, shift=2),), opsets=opsets),
        Case("rms_norm_functional", lambda x, w: F.rms_norm(x, [4], w, 1e-5), (r(3, 2, 4), r(4)), opsets=opsets),
        Case("rms_norm_double", randomized(nn.RMSNorm(6)).double(), (r(2, 6).double(),), opsets=opsets),
    ]


CASES += rms_norm_cases()

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


@pytest.mark.parametrize("conv", [
    nn.Conv2d(4, 6, 3, groups=2),
    nn.ConvTranspose2d(4, 6, 3, stride=2),
    nn.ConvTranspose2d(4, 6, 3, groups=2, bias=False),
    nn.ConvTranspose1d(3, 5, 2),
], ids=["conv", "conv_transpose", "conv_transpose_groups", "conv_transpose1d"])
def test_batch_norm_folds_into_the_convolution(conv):
    """Eval-mode BatchNormalization after a Conv or ConvTranspose is folded
    into its weights (one factor per output channel), and the model still
    computes what PyTorch does."""
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(6) if isinstance(conv, (nn.Conv2d, nn.ConvTranspose2d)) else nn.BatchNorm1d(5)
    model = nn.Sequential(conv, randomized(bn)).eval()
    x = torch.randn(2, conv.in_channels, 5, 5) if bn.num_features == 6 else torch.randn(2, 3, 7)
    proto, _ = harness.check_module(model, (x,))
    ops = [n.op_type for n in proto.graph.node]
    assert "BatchNormalization" not in ops and len(ops) == 1, ops
