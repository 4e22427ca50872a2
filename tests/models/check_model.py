"""Exports one of the models of tests/models/zoo.py with the torch2onnx CLI and
checks it: ONNX checker (full), ONNX Runtime vs PyTorch.

    /usr/bin/python3 tests/models/check_model.py resnet50 [--opset 17 [--opset 9 ...]]
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
    p.add_argument("model", choices=sorted(MODELS), nargs="+", help="one or more (one process)")
    p.add_argument("--opset", type=lambda v: None if v == "default" else int(v), action="append", default=None,
                   help="the opset to export at, or `default` (the exporter's); repeat it for several (one "
                        "process, the model built once)")
    p.add_argument("--script", action="store_true", help="export torch.jit.script(model) instead of a trace")
    a = p.parse_args()
    for name in a.model:
        try:
            check(name, a.opset or [None], a.script)
        except BaseException:
            print(f"{name}{' (scripted)' if a.script else ''}: FAILED", flush=True)
            raise


def check(name, opsets, script):
    module, args = MODELS[name]()
    for opset in opsets:
        t0 = time.time()
        with tempfile.TemporaryDirectory() as d:
            # strict=False: segmentation models return dicts.
            model, report = harness.check_module(module, args, opset=opset, workdir=d, strict=False, script=script)
        worst = max(report, key=lambda r: r[1] / r[2] if r[2] else 0)
        print(f"{name}{' (scripted)' if script else ''}: OK ({len(model.graph.node)} nodes, opset "
              f"{model.opset_import[0].version}; worst {worst[0]}: |err| {worst[1]:.3g} <= {worst[2]:.3g}) "
              f"in {time.time() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
