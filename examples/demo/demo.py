"""`make demo`: export a ResNet-18 (torchvision, random weights) with the
torch2onnx CLI, check it with the ONNX checker and run it in ONNX Runtime
next to PyTorch."""
import argparse
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import harness  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "torch2onnx"))
    p.add_argument("--out", default=os.path.join(ROOT, "build", "demo"))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pt, onnx_path = os.path.join(a.out, "resnet18.pt"), os.path.join(a.out, "resnet18.onnx")

    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    image = torch.randn(1, 3, 224, 224)
    print(f"[1/4] tracing torchvision resnet18 (random weights) -> {pt}")
    with warnings.catch_warnings():  # torch 2.10+ deprecates TorchScript; this demo saves an archive on purpose
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated", category=FutureWarning)
        harness.trace(model, (image,), pt)

    cmd = [a.cli, "export", pt, "-o", onnx_path, "--input", "1x3x224x224",
           "--input-names", "image", "--output-names", "logits"]
    print("[2/4] " + " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c for c in cmd))
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"export failed:\n{proc.stderr}")
    print(f"      done in {time.time() - t0:.2f} s")

    m = harness.full_check(onnx_path)
    size_mb = os.path.getsize(onnx_path) / 1e6
    print(f"[3/4] ONNX checker (full check): OK -- {len(m.graph.node)} nodes, {len(m.graph.initializer)} "
          f"initializers, opset {m.opset_import[0].version}, {size_mb:.1f} MB")

    with torch.no_grad():
        expected = model(image)
    actual, _ = harness.run_ort(onnx_path, [image.numpy()], a.out)
    report = harness.compare([expected], actual)
    _, err, tol = report[0]
    top_torch = torch.topk(expected[0], 5).indices.tolist()
    top_ort = np.argsort(-actual[0][0])[:5].tolist()
    print(f"[4/4] ONNX Runtime vs PyTorch: max |ort - torch| = {err:.3g} <= {tol:.3g} -> MATCH")
    print(f"      top-5 classes  PyTorch: {top_torch}  ONNX Runtime: {top_ort}")


if __name__ == "__main__":
    main()
