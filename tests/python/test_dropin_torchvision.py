"""Drop-in parity for torchvision's detection operators, which torch.onnx
exports through the symbolics torchvision registers in Python and torch2onnx
through its own (src/symbolics/torchvision.cpp). The cases are torch.onnx's
own (test_pytorch_onnx_onnxruntime.py: test_nms, test_batched_nms,
test_clip_boxes_to_image, test_roi_align, test_roi_align_aligned,
test_roi_pool, test_multi_scale_roi_align), traced and scripted where it runs
them scripted, at the opsets it runs them."""
from collections import OrderedDict

import pytest
import torch

torchvision = pytest.importorskip("torchvision")
from dropin import check  # noqa: E402

torch.manual_seed(0)

# torch.onnx 1.13 with Debian's torchvision 0.14 fails most of these (its
# roi_align/roi_pool symbolics are not registered for the TorchScript
# exporter there, and scripted cases die in a pybind11 cast): on 1.13 only
# torch2onnx is checked against PyTorch.
THEIRS = "same" if torch.__version__ >= "2" else "not compared"


def boxes(n, scale=1.0):
    b = torch.rand(n, 4) * scale
    b[:, 2:] += b[:, :2]
    return b


class Nms(torch.nn.Module):
    def forward(self, boxes, scores):
        return torchvision.ops.nms(boxes, scores, 0.5)


class BatchedNms(torch.nn.Module):
    def forward(self, boxes, scores, idxs):
        return torchvision.ops.batched_nms(boxes, scores, idxs, 0.5)


class ClipBoxes(torch.nn.Module):
    def forward(self, boxes, size):
        shape = (size.shape[0], size.shape[1])
        return torchvision.ops.boxes.clip_boxes_to_image(boxes, shape)


@pytest.mark.parametrize("opset", [11, 13, 17])
@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_nms(opset, script):
    n = 100
    check(Nms(), (boxes(n), torch.randn(n)), script=script, opset=opset, theirs=THEIRS, input_names=["boxes", "scores"],
          dynamic_axes={"boxes": [0], "scores": [0]}, more=[(boxes(37), torch.randn(37)), (boxes(1), torch.randn(1))])


@pytest.mark.parametrize("opset", [11, 17])
@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_batched_nms(opset, script):
    """Scripted, torch.onnx 2.14 fails ("Cannot determine scalar type" in the
    branch its example did not take)."""
    n = 100
    args = (boxes(n), torch.randn(n), torch.randint(0, 5, (n,)))
    check(BatchedNms(), args, script=script, opset=opset, theirs="fails" if script and THEIRS == "same" else THEIRS, input_names=["boxes", "scores", "idxs"],
          dynamic_axes={"boxes": [0], "scores": [0], "idxs": [0]},
          more=[(boxes(20), torch.randn(20), torch.randint(0, 3, (20,))),
                # over 4000 coordinates: torchvision's other algorithm (nms per class in a loop), which
                # the example never ran (scripted: its types come from ONNX's inference)
                (boxes(1100, 50.0), torch.randn(1100), torch.randint(0, 4, (1100,)))])


@pytest.mark.parametrize("opset", [11, 17])
def test_clip_boxes_to_image(opset):
    b = torch.randn(5, 4) * 500
    b[:, 2:] += b[:, :2]
    check(ClipBoxes(), (b, torch.randn(200, 300)), opset=opset, theirs=THEIRS, input_names=["boxes", "size"],
          dynamic_axes={"size": [0, 1]}, more=[(b, torch.randn(300, 400))])


@pytest.mark.parametrize("opset", [10, 11, 16, 17])
@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_roi_align(opset, script):
    """torch.onnx 2.14 refuses below opset 11, and scripted at every opset
    (prim::isinstance in torchvision's code)."""
    theirs = "fails" if THEIRS == "same" and (script or opset < 11) else THEIRS
    x = torch.rand(1, 1, 10, 10)
    check(torchvision.ops.RoIAlign((5, 5), 1.0, 2), (x, torch.tensor([[0, 0, 0, 4, 4.0]])), script=script,
          opset=opset, theirs=theirs)
    check(torchvision.ops.RoIAlign((5, 5), 0.5, -1), (torch.rand(2, 3, 20, 20), torch.tensor(
        [[0, 1, 2, 19, 15.0], [1, 0.5, 0.5, 3, 3], [1, 4, 4, 30, 36]])), script=script, opset=opset,
          theirs=theirs)


@pytest.mark.parametrize("opset", [16, 17])
@pytest.mark.parametrize("roi, scale, sampling", [([[0, 1.5, 1.5, 3, 3]], 1.0, 2), ([[0, 0.2, 0.3, 4.5, 3.5]], 1.0, 2),
                                                  ([[0, 0.2, 0.3, 4.5, 3.5]], 0.5, 3), ([[0, 0.2, 0.3, 4.5, 3.5]], 1.8, 2),
                                                  ([[0, 0.2, 0.3, 4.5, 3.5]], 2.5, 0)])
def test_roi_align_aligned(opset, roi, scale, sampling):
    check(torchvision.ops.RoIAlign((5, 5), scale, sampling, aligned=True), (torch.rand(1, 1, 10, 10), torch.tensor(roi)),
          opset=opset, theirs=THEIRS)


def test_roi_align_aligned_below_opset_16():
    """torchvision's symbolic warns and exports aligned=False below 16 (wrong
    values); torch2onnx says which opset it needs."""
    import io

    import torch2onnx

    with pytest.raises(torch2onnx.errors.OnnxExporterError, match="opset 16"):
        torch2onnx.export(torchvision.ops.RoIAlign((5, 5), 1.0, 2, aligned=True),
                          (torch.rand(1, 1, 10, 10), torch.tensor([[0, 1.5, 1.5, 3, 3.0]])), io.BytesIO(),
                          opset_version=13)


@pytest.mark.parametrize("opset", [9, 11, 17])
def test_roi_pool(opset):
    """torch.onnx 2.14 refuses below opset 11 (MaxRoiPool exists from opset 1)."""
    check(torchvision.ops.RoIPool((5, 5), 2.0), (torch.rand(1, 1, 10, 10), torch.tensor([[0, 0, 0, 4, 4.0]])),
          opset=opset, theirs="fails" if THEIRS == "same" and opset < 11 else THEIRS)


class MultiScale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.model = torchvision.ops.MultiScaleRoIAlign(["feat1", "feat2"], 3, 2)
        self.image_sizes = [(512, 512)]

    def forward(self, input, boxes):
        return self.model(input, boxes, self.image_sizes)


@pytest.mark.parametrize("opset", [11, 17])
def test_multi_scale_roi_align(opset):
    def features():
        return OrderedDict(feat1=torch.rand(1, 5, 64, 64), feat2=torch.rand(1, 5, 16, 16))

    check(MultiScale(), (features(), [boxes(6, 256)]), opset=opset, more=[(features(), [boxes(6, 256)])],
          theirs=THEIRS)
