"""Exports a quantized torchvision model (torchvision.models.quantization,
quantized here: fused, calibrated on seeded random batches, converted with
the fbgemm qconfig; no download) with the torch2onnx CLI and checks it: ONNX
checker (full), ONNX Runtime vs PyTorch to one quantization step of the output
(PyTorch's integer kernels and ONNX Runtime round requantized values in
different orders).

    python tests/models/check_quantized.py resnet18 [--script] [--opset 13]
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

# (inception_v3 is left out: with random weights its calibrated scales reach
# 2e10, which TorchScript writes as an int that its own loader then refuses)
MODELS = {  # name: input size
    "resnet18": 224, "resnet50": 224, "mobilenet_v2": 224, "mobilenet_v3_large": 224, "googlenet": 224,
    "shufflenet_v2_x0_5": 224,
}


def quantized(name):
    import torchvision.models.quantization as tvq

    torch.manual_seed(0)
    torch.backends.quantized.engine = "fbgemm"
    kwargs = {"init_weights": True, "aux_logits": False} if name == "googlenet" else {}
    model = getattr(tvq, name)(weights=None, quantize=False, **kwargs).eval()
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("fbgemm")
    torch.ao.quantization.prepare(model, inplace=True)
    size = MODELS[name]
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(2, 3, size, size))
    torch.ao.quantization.convert(model, inplace=True)
    return model, (torch.randn(1, 3, size, size),)


def output_step(model):
    """The scale of the last quantized module: the step of the dequantized output."""
    return [m.scale for m in model.modules() if isinstance(getattr(m, "scale", None), float)][-1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("--opset", type=int, default=None)
    p.add_argument("--script", action="store_true")
    a = p.parse_args()
    warnings.filterwarnings("ignore")
    module, args = quantized(a.model)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        model, report = harness.check_module(module, args, opset=a.opset, workdir=d, script=a.script,
                                             quantization_step=output_step(module))
    ops = {n.op_type for n in model.graph.node}
    assert "DequantizeLinear" in ops and "QuantizeLinear" in ops, ops
    worst = max(report, key=lambda r: r[1])
    print(f"quantized {a.model}{' (scripted)' if a.script else ''}: OK ({len(model.graph.node)} nodes; "
          f"|err| {worst[1]:.3g} <= {worst[2]:.3g}) in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
