"""Opsets 24 to 28 (onnx 1.23; issue 45): whole models at 24, 26 and 28 through both paths, checked in full
(checker, strict shape inference) and against PyTorch in ONNX Runtime, with the operators made for their patterns:
one Attention per ViT layer, one GroupNormalization per GroupNorm, Swish for SiLU where ONNX Runtime runs it (24).
`make test` runs each model and path at one of the three opsets in turn; `make test-full` (T2O_FULL=1) the rest."""
import collections
import io
import os
import sys

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn

import torch2onnx
from torch2onnx import verification

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402

pytestmark = pytest.mark.skipif(torch2onnx._C.MAX_OPSET < 28, reason="this build exports opsets up to "
                                f"{torch2onnx._C.MAX_OPSET}")

OPSETS = (24, 26, 28)


class GroupNormCnn(nn.Module):
    """Conv / GroupNorm / SiLU blocks (a diffusion U-Net's ResNet block, small)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.SiLU(),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.GroupNorm(8, 32), nn.SiLU(),
                                  nn.Conv2d(32, 8, 1))

    def forward(self, x):
        return self.body(x)


def _models():
    import torchvision

    torch.manual_seed(0)
    return {
        "resnet50": lambda: (torchvision.models.resnet50(), (torch.randn(1, 3, 64, 64),), {}),
        "vit_b_16": lambda: (torchvision.models.vit_b_16(), (torch.randn(1, 3, 224, 224),), {"Attention": 12}),
        "swin_t": lambda: (torchvision.models.swin_t(), (torch.randn(1, 3, 64, 64),), {}),
        "groupnorm_cnn": lambda: (GroupNormCnn(), (torch.randn(2, 3, 12, 12),), {"GroupNormalization": 2}),
    }


MODELS = ["resnet50", "vit_b_16", "swin_t", "groupnorm_cnn"]


def _cases():
    """(model, dynamo, opset): `make test` each model and path at one opset (in turn), the rest with T2O_FULL=1."""
    out = []
    for i, name in enumerate(MODELS):
        for j, dynamo in enumerate((False, True)):
            for opset in OPSETS:
                if (opset == OPSETS[(2 * i + j) % len(OPSETS)]) != harness.FULL:
                    out.append((name, dynamo, opset))
    return out


@pytest.mark.parametrize("name,dynamo,opset", _cases())
def test_model(name, dynamo, opset):
    module, args, want = _models()[name]()
    module.eval()
    f = io.BytesIO()
    with torch.no_grad():
        torch2onnx.export(module, args, f, opset_version=opset, dynamo=dynamo)
        expected = module(*args)
    proto = onnx.load_from_string(f.getvalue())
    assert {o.domain: o.version for o in proto.opset_import}[""] == opset
    onnx.checker.check_model(proto, full_check=True)
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    ops = collections.Counter(n.op_type for n in proto.graph.node)
    for op, count in want.items():
        assert ops[op] == count, (op, ops)
    if name == "groupnorm_cnn":  # SiLU: Swish where ONNX Runtime runs it (24 only, in 1.32)
        assert ops["Swish"] == (2 if opset == 24 else 0), ops
    session = verification.ort_session(f.getvalue())
    (actual,) = session.run(None, {session.get_inputs()[0].name: args[0].numpy()})
    e = expected.numpy()
    assert actual.shape == e.shape
    err = np.abs(actual - e)
    assert (err <= 1e-4 * (1 + np.abs(e))).all(), f"max |diff| {err.max():.3g}"


def test_range_and_refusal_past_28(tmp_path):
    """The range is 9-28; 29 is refused by name on both paths."""
    assert torch2onnx._C.MAX_OPSET == 28
    for dynamo in (False, True):
        with pytest.raises(Exception, match="(9 to 28|up to 28)"):
            torch2onnx.export(nn.Linear(3, 2), (torch.randn(2, 3),), str(tmp_path / "m.onnx"), opset_version=29,
                              dynamo=dynamo)
