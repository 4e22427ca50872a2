"""Runs the C++ API example on a traced model and checks its output file."""
import os
import subprocess
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

exe, work = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
try:
    import torchvision

    model = torchvision.models.resnet18().eval()
except ModuleNotFoundError as e:  # (the builds on torch 2.13 / 2.15 have no torchvision: a small CNN instead)
    if e.name != "torchvision":
        raise
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 10)).eval()
x = torch.randn(1, 3, 64, 64)
pt, out = os.path.join(work, "model.pt"), os.path.join(work, "model.onnx")
try:
    harness.trace(model, (x,), pt)
    proc = subprocess.run([exe, pt, out, "1,3,64,64"], capture_output=True, text=True)
    print(proc.stdout, proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "exported" in proc.stdout and "opset 13" in proc.stdout
    m = harness.full_check(out)
    assert [i.name for i in m.graph.input] == ["image"]
    assert [o.name for o in m.graph.output] == ["logits"]
    with torch.no_grad():
        expected = model(x)
    actual, _ = harness.run_ort(out, [x.numpy()], work)
    print(harness.compare([expected], actual))
finally:  # (in the build tree; 90 MB that nothing reads again. Issue 46)
    for path in (pt, out):
        if os.path.exists(path):
            os.remove(path)
