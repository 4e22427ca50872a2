"""What the client workers share: the swap of torch.onnx.export, the per-case
result record, node counting and the per-case time guard.

The swap. Both clients reach the exporter through the attribute
`torch.onnx.export`, read when they export:
- optimum-onnx 0.1.0, `optimum/exporters/onnx/convert.py`, `export_pytorch()`:
  `from torch.onnx import export as onnx_export` inside the function, then
  `onnx_export(model, (dummy_inputs,), f=..., input_names=..., output_names=...,
  dynamic_axes=..., do_constant_folding=..., opset_version=..., dynamo=False)`;
- ultralytics 8.4, `ultralytics/utils/export/engine.py`, `torch2onnx()`:
  `torch.onnx.export(model, im, output_file, opset_version=..., input_names=...,
  output_names=..., dynamic_axes=..., dynamo=False)` (called from
  `Exporter.export_onnx` in `ultralytics/engine/exporter.py`, inside
  ultralytics' own `onnx_export_patch`/`arange_patch` context managers).
Neither binds the function at import time, so setting `torch.onnx.export`
for the duration of a case reaches exactly those calls, and restoring it
afterwards leaves the process as it was. The same wrapper is put around the
shipped torch.onnx.export for the reference run, so both sides are timed and
counted the same way; a case whose export was never called through the
wrapper fails (the swap missed).
"""
import contextlib
import faulthandler
import functools
import json
import os
import signal
import sys
import time
import traceback

MODES = ("torch.onnx", "torch2onnx")


def load_torch2onnx():
    """torch2onnx.export, or the exception that importing it raised."""
    try:
        import torch2onnx
        return torch2onnx.export, None
    except Exception as e:  # recorded as the failure of every torch2onnx case
        return None, e


def torch2onnx_build():
    """Which torch2onnx this process imported: the extension's path and time."""
    mod = sys.modules.get("torch2onnx._C")
    path = getattr(mod, "__file__", None)
    if not path:
        return None
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(path)))
    return f"{path} (written {stamp})"


@contextlib.contextmanager
def export_swapped(mode, calls, t2o_export=None):
    """Sets torch.onnx.export to the exporter of `mode` for the block.

    Every call is appended to `calls` as {"seconds", "file", "nodes"}; the
    arguments go through untouched."""
    import torch.onnx

    original = torch.onnx.export
    target = original if mode == "torch.onnx" else t2o_export
    if target is None:
        raise RuntimeError("torch2onnx is not importable")

    @functools.wraps(target)
    def export(*args, **kwargs):
        t0 = time.perf_counter()
        rec = {"seconds": None, "file": None, "nodes": None}
        calls.append(rec)
        try:
            return target(*args, **kwargs)
        finally:
            rec["seconds"] = time.perf_counter() - t0
            f = kwargs.get("f", args[2] if len(args) > 2 else None)
            if isinstance(f, (str, os.PathLike)) and os.path.exists(f):
                rec["file"] = os.fspath(f)
                rec["nodes"] = count_nodes(f)

    torch.onnx.export = export
    try:
        yield
    finally:
        torch.onnx.export = original


def count_nodes(path):
    """Nodes of an ONNX file, those of If/Loop/Scan bodies included."""
    try:
        import onnx
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception:
        return None

    def walk(graph):
        n = 0
        for node in graph.node:
            n += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    n += walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    n += sum(walk(g) for g in attr.graphs)
        return n

    return walk(model.graph)


def first_lines(exc, n=4, width=400):
    """The exception's type and the first lines of its message (and of its cause's)."""
    parts = []
    e = exc
    depth = 0
    while e is not None and depth < 3:
        msg = str(e).strip()
        lines = [l for l in msg.splitlines() if l.strip()][:n]
        text = f"{type(e).__module__}.{type(e).__name__}: " + " | ".join(lines)
        parts.append(text[:width])
        e = e.__cause__ if e.__cause__ is not None else (None if e.__suppress_context__ else e.__context__)
        depth += 1
    return " <- ".join(parts)


class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def time_guard(soft, hard):
    """SIGALRM raises CaseTimeout after `soft` s (when Python code runs again);
    after `hard` s faulthandler prints every thread's stack and exits the
    worker (code 1): the driver records the case as timed out and starts a new
    worker for the rest."""
    def on_alarm(signum, frame):
        raise CaseTimeout(f"case took longer than {soft} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(soft))
    faulthandler.dump_traceback_later(hard, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        faulthandler.cancel_dump_traceback_later()


class Results:
    """One JSON object per line: {"event": "start"|"result", ...}; flushed at
    once, so a crash leaves the case that was running identifiable."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def info(self, **fields):
        self._write({"event": "info", **fields})

    def start(self, case, mode):
        self._write({"event": "start", "case": case, "mode": mode, "time": time.time()})

    def result(self, case, mode, **fields):
        self._write({"event": "result", "case": case, "mode": mode, **fields})

    def _write(self, obj):
        self.f.write(json.dumps(obj, default=str) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())


def summarize_calls(calls):
    return {
        "export_seconds": sum(c["seconds"] or 0.0 for c in calls) if calls else None,
        "nodes": [c["nodes"] for c in calls],
        "files": [os.path.basename(c["file"]) if c["file"] else None for c in calls],
    }


def worker_args(argv=None):
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--cases", required=True, help="JSON file: [[case, mode], ...]")
    p.add_argument("--results", required=True)
    p.add_argument("--tmp", required=True)
    p.add_argument("--soft-timeout", type=float, default=240)
    p.add_argument("--hard-timeout", type=float, default=420)
    return p.parse_args(argv)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def format_tb():
    return traceback.format_exc()
