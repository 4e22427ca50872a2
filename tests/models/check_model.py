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
import zoo  # noqa: E402

try:
    import tv_zoo  # noqa: E402
    TV_MODELS = tv_zoo.MODELS
except ModuleNotFoundError as e:  # (the builds on torch 2.13 / 2.15 have no torchvision)
    if e.name != "torchvision":
        raise
    TV_MODELS = {}
MODELS = {**TV_MODELS, **zoo.MODELS}
# The exit status when every model asked for needs torchvision and it is not
# installed: CTest reports these tests as skipped (SKIP_RETURN_CODE, tests/CMakeLists.txt).
SKIPPED = 77


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="+", help="one or more of tests/models/zoo.py and tv_zoo.py (one process)")
    p.add_argument("--opset", type=lambda v: None if v == "default" else int(v), action="append", default=None,
                   help="the opset to export at, or `default` (the exporter's); repeat it for several (one "
                        "process, the model built once)")
    p.add_argument("--script", action="store_true", help="export torch.jit.script(model) instead of a trace")
    a = p.parse_args()
    skipped = 0
    for name in a.model:
        try:
            if name not in MODELS:
                if TV_MODELS:
                    p.error(f"unknown model {name!r}")
                raise ModuleNotFoundError("No module named 'torchvision'", name="torchvision")
            check(name, a.opset or [None], a.script)
        except ModuleNotFoundError as e:
            if e.name != "torchvision":
                raise
            print(f"{name}: skipped: it needs torchvision, which is not installed beside this torch", flush=True)
            skipped += 1
        except BaseException:
            print(f"{name}{' (scripted)' if a.script else ''}: FAILED", flush=True)
            raise
    if skipped == len(a.model):
        sys.exit(SKIPPED)


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
