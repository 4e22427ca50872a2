"""Runs Ultralytics' ONNX export (`YOLO(yaml).export(format="onnx", ...)`)
on random-weight models built from the YAML files ultralytics ships, once
with torch.onnx as shipped and once with torch.onnx.export swapped for
torch2onnx.export, all in this one process. Started by run.py.

For each case: `YOLO("<name>.yaml")` (nothing downloaded), its BatchNorm
statistics drawn again so the fused convolutions are not the initial ones,
then `.export(format="onnx", imgsz=..., dynamic=..., simplify=...)` in a
temporary folder. The model Ultralytics exported (its Exporter's fused,
export-mode model, taken from the `on_export_end` callback) is run in
PyTorch and the ONNX file in ONNX Runtime on random images: batch 1 at the
export size, and for dynamic exports batch 2 and a second image size too;
every output is compared (|onnx - torch| <= ATOL + RTOL * max|torch|;
RT-DETR's (B, 300, 6) detections as sets of rows: with random weights many
scores tie to float rounding and the order of their top-k is not defined).
Then `YOLO("x.onnx").predict(<random HxWx3 uint8 image>)` runs the file
through Ultralytics' own ONNX Runtime backend. An onnxslim failure, which
Ultralytics only logs as a warning, fails the case.
"""
import contextlib
import json
import logging
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from cases import ULTRALYTICS  # noqa: E402

ATOL = 1e-6
RTOL = 1e-4  # of the output's largest magnitude (boxes are in pixels)
SEED = 1234


class WarningCatcher(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def model_class(yaml):
    from ultralytics import RTDETR, YOLO
    return RTDETR if yaml.startswith("rtdetr") else YOLO


def build_model(yaml):
    import torch
    from ultralytics.nn.modules import Classify
    torch.manual_seed(SEED)
    model = model_class(yaml)(yaml)
    with torch.no_grad():
        for m in model.model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.normal_(1.0, 0.1)
                m.bias.normal_(0.0, 0.1)
            if isinstance(m, Classify):
                # logits of std ~3, so the softmax the head ends with is not flat
                m.linear.weight.normal_(0.0, 3.0 / m.linear.in_features ** 0.5)
    return model


def flatten(y):
    import torch
    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, (list, tuple)):
        out = []
        for v in y:
            out += flatten(v)
        return out
    if isinstance(y, dict):
        out = []
        for v in y.values():
            out += flatten(v)
        return out
    return []


def sort_rows(a):
    """(B, N, C) detections with their rows sorted (by every column, rounded to 1e-3)."""
    import numpy as np
    out = np.empty_like(a)
    for b in range(a.shape[0]):
        keys = np.round(a[b].astype(np.float64), 3).T[::-1]
        out[b] = a[b][np.lexsort(keys)]
    return out


def compare(torch_model, onnx_path, inputs, topk_rows=False):
    """[(label, max_abs_diff, ok, note)] for each input tensor."""
    import numpy as np
    import onnxruntime as ort
    import torch
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    in_name = sess.get_inputs()[0].name
    rows = []
    for label, x in inputs:
        with torch.no_grad():
            ref = [t.detach().float().numpy() for t in flatten(torch_model(x))]
        got = sess.run(None, {in_name: x.numpy()})
        if len(got) != len(ref):
            # the ONNX graph keeps only the outputs ultralytics named; compare those in order
            ref = ref[:len(got)]
        worst, ok, note = 0.0, True, ""
        for i, (r, g) in enumerate(zip(ref, got)):
            if r.shape != g.shape:
                ok, note = False, f"output {i}: shape {g.shape} vs torch {r.shape}"
                worst = float("inf")
                break
            g = g.astype(np.float32)
            if topk_rows and r.ndim == 3:
                # a top-k head (RT-DETR): random weights leave near-equal scores whose order
                # is rounding; compare the selected detections as a set
                r, g = sort_rows(r), sort_rows(g)
            d = float(np.max(np.abs(r - g))) if r.size else 0.0
            if not np.isfinite(d):
                d = float("inf")
            bound = ATOL + RTOL * float(np.max(np.abs(r))) if r.size else ATOL
            worst = max(worst, d)
            if not d <= bound:
                ok = False
                note = note or f"output {i}{tuple(r.shape)}: max diff {d:.3g} > {bound:.3g}"
        rows.append((label, worst, ok, note))
    return rows


def run_case(case, yaml, imgsz, dynamic, simplify, mode, model, work, t2o_export, t2o_error):
    import numpy as np
    import torch
    from ultralytics import YOLO
    from ultralytics.utils import LOGGER

    res = {"ok": False, "error": None, "max_diff": None, "checks": None}
    if mode == "torch2onnx" and t2o_export is None:
        res["error"] = "import torch2onnx failed: " + common.first_lines(t2o_error)
        return res
    captured = {}

    def on_export_end(exporter):
        captured["model"] = exporter.model

    model.callbacks["on_export_end"] = [cb for cb in model.callbacks.get("on_export_end", [])
                                        if getattr(cb, "__name__", "") != "on_export_end"] + [on_export_end]
    catcher = WarningCatcher()
    LOGGER.addHandler(catcher)
    calls = []
    cwd = os.getcwd()
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    t0 = time.perf_counter()
    try:
        with common.export_swapped(mode, calls, t2o_export):
            f = model.export(format="onnx", imgsz=imgsz, dynamic=dynamic, simplify=simplify)
        res.update(common.summarize_calls(calls))
        res["nodes_final"] = common.count_nodes(f)
        if not calls:
            raise RuntimeError("torch.onnx.export was never called through the swap")
        slim_fail = [m for m in catcher.messages if "simplifier failure" in m]
        torch_model = captured["model"]
        g = torch.Generator().manual_seed(SEED)
        inputs = [("b1", torch.rand(1, 3, imgsz, imgsz, generator=g))]
        if dynamic:
            inputs.append(("b2", torch.rand(2, 3, imgsz, imgsz, generator=g)))
            inputs.append((f"{imgsz + 32}px", torch.rand(1, 3, imgsz + 32, imgsz + 32, generator=g)))
        rows = compare(torch_model, f, inputs, topk_rows=yaml.startswith("rtdetr"))
        res["checks"] = {label: d for label, d, _, _ in rows}
        res["max_diff"] = max(d for _, d, _, _ in rows)
        bad = [f"{label}: {note}" for label, _, ok, note in rows if not ok]
        # Ultralytics' own inference on the file
        rng = np.random.default_rng(SEED)
        img = rng.integers(0, 256, size=(imgsz + 7, imgsz - 5, 3), dtype=np.uint8)
        task = torch_model.task if hasattr(torch_model, "task") else None
        cls = model_class(yaml)
        loaded = cls(f) if cls.__name__ == "RTDETR" else cls(f, task=task)
        pred = loaded.predict(img, imgsz=imgsz, verbose=False)
        if not pred:
            bad.append("predict returned no result")
        if slim_fail:
            bad.insert(0, "onnxslim failed: " + slim_fail[0].splitlines()[0][:300])
        if bad:
            res["error"] = "; ".join(bad)
        else:
            res["ok"] = True
    except Exception as e:
        res["error"] = common.first_lines(e)
        common.log(common.format_tb())
        if "export_seconds" not in res:
            res.update(common.summarize_calls(calls))
    finally:
        os.chdir(cwd)
        LOGGER.removeHandler(catcher)
        res["wall_seconds"] = time.perf_counter() - t0
    return res


def main():
    args = common.worker_args()
    with open(args.cases) as f:
        todo = json.load(f)
    table = {c[0]: c for c in ULTRALYTICS}
    import torch  # noqa: F401
    t2o_export, t2o_error = common.load_torch2onnx()
    results = common.Results(args.results)
    results.info(torch2onnx=common.torch2onnx_build())
    models = {}
    for case, mode in todo:
        name, yaml, imgsz, dynamic, simplify = table[case]
        work = os.path.join(args.tmp, name.replace("/", "__").replace("+", "_"), mode)
        common.log(f"=== {case} [{mode}]")
        results.start(case, mode)
        if yaml not in models:
            models.clear()
            try:
                models[yaml] = build_model(yaml)
            except Exception as e:
                models[yaml] = "building the model failed: " + common.first_lines(e)
                common.log(common.format_tb())
        if isinstance(models[yaml], str):
            res = {"ok": False, "error": models[yaml]}
        else:
            try:
                with common.time_guard(args.soft_timeout, args.hard_timeout):
                    res = run_case(case, yaml, imgsz, dynamic, simplify, mode, models[yaml], work, t2o_export,
                                   t2o_error)
            except common.CaseTimeout as e:
                res = {"ok": False, "error": f"timeout: {e}"}
        shutil.rmtree(os.path.dirname(work), ignore_errors=True)
        results.result(case, mode, **res)
        common.log(f"--- {case} [{mode}]: {'ok' if res['ok'] else 'FAIL ' + str(res['error'])}")


if __name__ == "__main__":
    main()
