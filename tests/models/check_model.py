"""Exports one of the models of tests/models/zoo.py with the torch2onnx CLI and
checks it: ONNX checker (full), ONNX Runtime vs PyTorch.

    /usr/bin/python3 tests/models/check_model.py resnet50 [--opset 17]
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import tv_zoo  # noqa: E402
import zoo  # noqa: E402

MODELS = {**tv_zoo.MODELS, **zoo.MODELS}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("--opset", type=int, default=None)
    p.add_argument("--script", action="store_true", help="export torch.jit.script(model) instead of a trace")
    a = p.parse_args()
    module, args = MODELS[a.model]()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        # strict=False: segmentation models return dicts.
        model, report = harness.check_module(module, args, opset=a.opset, workdir=d, strict=False, script=a.script)
    worst = max(report, key=lambda r: r[1] / r[2] if r[2] else 0)
    print(f"{a.model}{' (scripted)' if a.script else ''}: OK ({len(model.graph.node)} nodes, opset {model.opset_import[0].version}; "
          f"worst {worst[0]}: |err| {worst[1]:.3g} <= {worst[2]:.3g}) in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
