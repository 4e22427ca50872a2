"""torchvision's detection operators (src/symbolics/torchvision.cpp): nms,
roi_align, roi_pool, ps_roi_align, ps_roi_pool, deform_conv2d. Their library is loaded by `import torchvision`, so the
cases export through the Python API in this process (the CLI would need
torchvision's library loaded to read the archives)."""
import os
import sys

import pytest
import torch
import torch.nn as nn

torchvision = pytest.importorskip("torchvision")
pytest.importorskip("torch2onnx")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def boxes(n, size=20.0):
    """n boxes (x1, y1, x2, y2) inside a size x size image, overlapping often."""
    xy = torch.rand(n, 2) * size * 0.7
    wh = torch.rand(n, 2) * size * 0.3 + 1.0
    return torch.cat([xy, xy + wh], 1)


def scores(n):
    return torch.randperm(n).float() / n + torch.rand(n) * 0.01  # no ties: nms keeps by decreasing score


def rois(n, batch, size):
    return torch.cat([torch.randint(0, batch, (n, 1)).float(), boxes(n, size)], 1)


class Nms(nn.Module):
    def __init__(self, iou):
        super().__init__()
        self.iou = iou

    def forward(self, b, s):
        return torchvision.ops.nms(b, s, self.iou)


class BatchedNms(nn.Module):
    def forward(self, b, s, idxs):
        return torchvision.ops.batched_nms(b, s, idxs, 0.5)


class RoiAlign(nn.Module):
    def __init__(self, scale, sampling, aligned):
        super().__init__()
        self.scale, self.sampling, self.aligned = scale, sampling, aligned

    def forward(self, x, r):
        return torchvision.ops.roi_align(x, r, (3, 4), self.scale, self.sampling, self.aligned)


class RoiPool(nn.Module):
    def forward(self, x, r):
        return torchvision.ops.roi_pool(x, r, (3, 3), 0.5)


class PsRoiAlign(nn.Module):
    def __init__(self, size, scale, sampling):
        super().__init__()
        self.size, self.scale, self.sampling = size, scale, sampling

    def forward(self, x, r):
        return torchvision.ops.ps_roi_align(x, r, self.size, self.scale, self.sampling)


class PsRoiPool(nn.Module):
    def __init__(self, size, scale):
        super().__init__()
        self.size, self.scale = size, scale

    def forward(self, x, r):
        return torchvision.ops.ps_roi_pool(x, r, self.size, self.scale)


class PsRoiAlignMapping(nn.Module):
    """Both outputs of the operator: the pooled values and the channel each read."""

    def forward(self, x, r):
        return torch.ops.torchvision.ps_roi_align(x, r, 0.5, 3, 2, -1)


class PsRoiPoolMapping(nn.Module):
    """Both outputs of the operator: the pooled values and the channel each read."""

    def forward(self, x, r):
        return torch.ops.torchvision.ps_roi_pool(x, r, 0.5, 2, 3)


class RoiAlignBoxList(nn.Module):
    """Boxes given per image (a list of [K_i, 4] tensors), as detection heads do."""

    def forward(self, x, b0, b1):
        return torchvision.ops.roi_align(x, [b0, b1], 2, 1.0, 2)


class DeformConv(nn.Module):
    """torchvision.ops.DeformConv2d with its offsets (and mask) from a plain conv, as models use it."""

    def __init__(self, groups=1, offset_groups=1, mask=False, bias=True, stride=1, padding=1, dilation=1):
        super().__init__()
        self.k, self.mask = 3, mask
        self.offsets = nn.Conv2d(4, 2 * offset_groups * 9, 3, stride=stride, padding=padding, dilation=dilation)
        self.masks = nn.Conv2d(4, offset_groups * 9, 3, stride=stride, padding=padding, dilation=dilation)
        self.conv = torchvision.ops.DeformConv2d(4, 6, 3, stride=stride, padding=padding, dilation=dilation,
                                                 groups=groups, bias=bias)

    def forward(self, x):
        mask = torch.sigmoid(self.masks(x)) if self.mask else None
        return self.conv(x, self.offsets(x) * 2, mask)


def ps_rois():
    """Boxes inside, across the border of and outside a 12 x 12 image at scale 0.5, some under a pixel."""
    return torch.tensor([[0, 1.0, 2.0, 20.0, 14.0], [1, -6.0, -3.0, 9.0, 30.0], [1, 3.2, 4.7, 3.9, 5.1],
                         [0, 30.0, 30.0, 40.0, 44.0], [1, 0.0, 0.0, 23.0, 23.0], [0, 7.3, 2.1, 12.6, 19.9]])


def with_inf(t):
    t = t.clone()
    t[0, 1, 5, 6] = float("inf")
    t[1, 3, 2, 2] = float("-inf")
    return t


x = torch.randn(2, 3, 12, 12)
xps = torch.randn(2, 8, 12, 12)  # 2 output channels of 2 x 2 bins
xps12 = torch.randn(2, 12, 12, 12)  # 2 output channels of 3 x 2 bins
PS_ALIGN_OPSETS = (16, 17, 18)  # ONNX Runtime has no RoiAlign-22 kernel
xd = torch.randn(2, 4, 9, 10)
DEFORM = (19, 23)
NMS_OPSETS = (10, 11, 13, 17)
ALIGN_OPSETS = (10, 11, 13, 16, 17)

CASES = [
    Case("nms", Nms(0.5), (boxes(30), scores(30)), opsets=NMS_OPSETS, error_below={9: "opset 10"}),
    Case("nms_strict", Nms(0.2), (boxes(30), scores(30)), opsets=(10, 17)),
    Case("nms_scripted", Nms(0.5), (boxes(30), scores(30)), opsets=NMS_OPSETS, script=True),
    Case("nms_double", Nms(0.5), (boxes(20).double(), scores(20).double()), opsets=(10, 17)),
    Case("batched_nms", BatchedNms(), (boxes(30), scores(30), torch.randint(0, 3, (30,))), opsets=(11, 13, 17)),
    Case("roi_align", RoiAlign(0.5, -1, False), (x, rois(5, 2, 24.0)), opsets=ALIGN_OPSETS),
    Case("roi_align_sampling", RoiAlign(1.0, 2, False), (x, rois(5, 2, 12.0)), opsets=ALIGN_OPSETS),
    Case("roi_align_aligned", RoiAlign(0.5, 2, True), (x, rois(5, 2, 24.0)), opsets=(16, 17),
         error_below={10: "opset 16", 15: "opset 16"}),
    Case("roi_align_aligned_scripted", RoiAlign(0.5, -1, True), (x, rois(5, 2, 24.0)), opsets=(16, 17),
         script=True),
    Case("roi_align_box_list", RoiAlignBoxList(), (x, boxes(3, 12.0), boxes(2, 12.0)), opsets=(11, 17)),
    Case("roi_pool", RoiPool(), (x, rois(5, 2, 24.0))),
    Case("roi_pool_scripted", RoiPool(), (x, rois(4, 2, 24.0)), script=True, opsets=(9, 17)),
    Case("ps_roi_align", PsRoiAlign(2, 0.5, -1), (xps, ps_rois()), opsets=PS_ALIGN_OPSETS,
         error_below={13: "ps_roi_align"}),
    Case("ps_roi_align_sampling", PsRoiAlign((3, 2), 0.5, 2), (xps12, ps_rois()), opsets=PS_ALIGN_OPSETS, pt2=True),
    Case("ps_roi_align_random_rois", PsRoiAlign(2, 1.0, 3), (xps, rois(7, 2, 12.0)), opsets=PS_ALIGN_OPSETS),
    Case("ps_roi_align_double", PsRoiAlign(2, 0.5, -1), (xps.double(), ps_rois().double()), opsets=(16, 17)),
    Case("ps_roi_align_one_bin", PsRoiAlign(1, 0.5, 2), (x, ps_rois()), opsets=(16, 17)),
    Case("ps_roi_align_channel_mapping", PsRoiAlignMapping(), (xps12, ps_rois()), opsets=(16, 17)),
    Case("ps_roi_align_scripted", PsRoiAlign(2, 0.5, -1), (xps, ps_rois()), opsets=(16, 17), script=True),
    Case("ps_roi_pool", PsRoiPool(2, 0.5), (xps, ps_rois()), pt2=True),
    Case("ps_roi_pool_bins_3x2", PsRoiPool((3, 2), 0.5), (xps12, ps_rois()), opsets=(9, 13, 17)),
    Case("ps_roi_pool_random_rois", PsRoiPool(2, 1.0), (xps, rois(7, 2, 12.0)), opsets=(9, 17)),
    Case("ps_roi_pool_double", PsRoiPool(2, 0.5), (xps.double(), ps_rois().double()), opsets=(9, 17)),
    Case("ps_roi_pool_inf", PsRoiPool(2, 0.5), (with_inf(xps), ps_rois()), opsets=(9, 17)),
    Case("ps_roi_pool_channel_mapping", PsRoiPoolMapping(), (xps12, ps_rois()), opsets=(9, 17)),
    Case("ps_roi_pool_scripted", PsRoiPool(2, 0.5), (xps, ps_rois()), opsets=(9, 17), script=True),
    Case("deform_conv2d", DeformConv(), (xd,), opsets=DEFORM, error_below={18: "deform_conv2d"}),
    Case("deform_conv2d_mask_groups", DeformConv(groups=2, offset_groups=2, mask=True), (xd,), opsets=DEFORM),
    Case("deform_conv2d_stride_dilation", DeformConv(stride=2, padding=2, dilation=2, bias=False), (xd,),
         opsets=DEFORM),
]

results = optest.results_fixture(CASES, in_process=True)
test_case = optest.case_test(CASES)


# Dynamic axes (the Cases above export through the Python API without them).


def export_dynamic(module, args, path, axes):
    import torch2onnx

    traced = torch.jit.trace(module.eval(), args, check_trace=False)
    torch2onnx.export(traced, args, path, opset_version=17, input_names=["x", "rois"], dynamic_axes=axes)


@pytest.mark.parametrize("axes", [{"x": [2, 3]}, {"x": [1]}], ids=["hw", "channels"])
def test_ps_roi_pool_dynamic_sizes_refused(axes, tmp_path):
    """ps_roi_pool tables its bins over the positions of H and W and shapes its output by C: an export where
    they vary is refused (issue 43: the example's sizes were baked in)."""
    with pytest.raises(Exception, match="is dynamic"):
        export_dynamic(PsRoiPool(2, 0.5), (xps, ps_rois()), str(tmp_path / "m.onnx"), axes)


def test_ps_roi_pool_dynamic_batch(tmp_path):
    """The batch and the number of boxes may vary: the model matches PyTorch at other counts."""
    import onnxruntime

    module = PsRoiPool(2, 0.5).eval()
    path = str(tmp_path / "m.onnx")
    export_dynamic(module, (xps, ps_rois()), path, {"x": [0], "rois": [0]})
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    x3, r3 = torch.randn(3, 8, 12, 12), rois(9, 3, 24.0)
    got = session.run(None, {"x": x3.numpy(), "rois": r3.numpy()})[0]
    with torch.no_grad():
        want = module(x3, r3).numpy()
    assert got.shape == want.shape
    assert abs(got - want).max() <= 1e-4 * (1 + abs(want).max())
