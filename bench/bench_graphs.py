"""Graph quality on the transformers corpus (tests/transformers/corpus.py):
node count and ONNX Runtime latency of torch2onnx's two paths against
torch.onnx's dynamo exporter, side by side in one run (issue 38).

    PYTHONPATH=build/python build/venv/bin/python bench/bench_graphs.py [--cases bert,llama+cache]
        [--opset 20] [--runs 20] [--markdown docs/benchmarks.md]

Each case is exported by each exporter in this process (the corpus's example
at its first size, its dynamic dims dynamic); each file runs in ONNX Runtime
on one thread (all graph optimizations), median of --runs runs after one
warm-up, on the example (the files of a case run in turn, a run of each per
round), and is compared with eager PyTorch there
(1e-4 * (1 + max |torch|)). A failed export is reported as such.
"""
import argparse
import io
import os
import statistics
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "transformers"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import corpus  # noqa: E402
import harness  # noqa: E402
from bench import GRAPHS_HEADING as HEADING, write_section  # noqa: E402

EXPORTERS = ["t2o-ts", "t2o-dynamo", "onnx-ts", "onnx-dynamo"]
LABELS = {"t2o-ts": "torch2onnx TS", "t2o-dynamo": "torch2onnx dynamo", "onnx-ts": "torch.onnx TS",
          "onnx-dynamo": "torch.onnx dynamo"}


def export(which, model, args, kwargs, shapes, axes, names, opset):
    import torch2onnx

    if which in ("t2o-ts", "onnx-ts"):
        f = io.BytesIO()
        if which == "t2o-ts":
            torch2onnx.export(model, args, f, kwargs=kwargs, dynamo=False, opset_version=opset, input_names=names,
                              dynamic_axes=axes)
        else:  # (its last opset is 20)
            torch.onnx.export(model, args, f, kwargs=kwargs, dynamo=False, input_names=names, dynamic_axes=axes,
                              opset_version=min(opset, 20))
        return f.getvalue()
    exporter = torch2onnx if which == "t2o-dynamo" else torch.onnx
    program = exporter.export(model, args, kwargs=kwargs, dynamo=True, opset_version=opset, dynamic_shapes=shapes)
    return program.model_proto.SerializeToString()


def feeds(session, args, kwargs):
    """By name where the graph's inputs are named after the keyword args, else in order."""
    inputs = session.get_inputs()
    if not args and all(i.name in kwargs and isinstance(kwargs[i.name], torch.Tensor) for i in inputs):
        return {i.name: kwargs[i.name].numpy() for i in inputs}
    flat = harness.flatten(list(args) + list(kwargs.values()))
    return {i.name: t.numpy() for i, t in zip(inputs, flat)}


def session_of(data):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def latencies(sessions, runs):
    """Median ms per session, the sessions run in turn (one run of each per round, after a warm-up round), so
    that a slower stretch of the machine weighs on every file alike."""
    for s, feed in sessions:
        s.run(None, feed)
    times = [[] for _ in sessions]
    for _ in range(runs):
        for k, (s, feed) in enumerate(sessions):
            start = time.perf_counter()
            s.run(None, feed)
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cases", default=None, help="corpus case names (default: all)")
    p.add_argument("--opset", type=int, default=20)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--markdown", default=None)
    a = p.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    cases = [c for c in corpus.CASES if a.cases is None or c.name in a.cases.split(",")]
    rows = []
    for case in cases:
        model, inputs, shapes, axes, names = case.make()
        args, kwargs = inputs(*corpus.SIZES[case.kind][0])
        with torch.no_grad():
            expected = harness.flatten(model(*args, **kwargs))
        row = {"case": case.name}
        # (the dynamo paths first: a TorchScript export's trace may leave attributes behind in the model that
        # torch.export then fails on, as torch.onnx's does to Swin)
        timed = []
        for which in sorted(EXPORTERS, key=lambda w: "ts" in w):
            try:
                data = export(which, model, args, kwargs, shapes, axes, names, a.opset)
                nodes = len(onnx.load_from_string(data).graph.node)
                session = session_of(data)
                feed = feeds(session, args, kwargs)
                out = session.run(None, feed)
                ok = len(out) >= len(expected) and all(
                    np.max(np.abs(o - e.numpy()), initial=0) <= 1e-4 * (1 + np.max(np.abs(e.numpy()), initial=0))
                    for o, e in zip(out, expected))
                row[which] = (nodes, None, ok)
                timed.append((which, session, feed))
            except Exception as e:  # (reported in the table: the other exporters still run)
                row[which] = str(e).splitlines()[0][:80] if str(e) else type(e).__name__
        for (which, _, _), ms in zip(timed, latencies([(s, f) for _, s, f in timed], a.runs)):
            row[which] = (row[which][0], ms, row[which][2])
        rows.append(row)
        print(row, flush=True)
    lines = [HEADING, "",
             f"The transformers corpus (`tests/transformers/corpus.py`: small configs, random weights) at opset "
             f"{a.opset}, dynamic dims as the corpus makes them; `bench/bench_graphs.py`. Nodes of each file; "
             f"ONNX Runtime latency on one thread, median of {a.runs} runs on the example (ms; the four files of a model "
             "run in turn, one run each per round); ✗: differs from eager PyTorch there.", "",
             "| model | " + " | ".join(f"{LABELS[w]} nodes" for w in EXPORTERS) + " | "
             + " | ".join(f"{LABELS[w]} ms" for w in EXPORTERS) + " |",
             "|---|" + "---:|" * (2 * len(EXPORTERS))]
    for r in rows:
        cells_n, cells_t = [], []
        for w in EXPORTERS:
            v = r[w]
            if isinstance(v, str):
                cells_n.append("failed")
                cells_t.append("")
            else:
                cells_n.append(f"{v[0]}" + ("" if v[2] else " ✗"))
                cells_t.append(f"{v[1]:.2f}")
        lines.append(f"| {r['case']} | " + " | ".join(cells_n) + " | " + " | ".join(cells_t) + " |")
    both = [r for r in rows if all(not isinstance(r[w], str) for w in ("t2o-dynamo", "onnx-dynamo"))]
    for ours in ("t2o-ts", "t2o-dynamo"):  # latency against the faster torch.onnx file
        rated = [(r[ours][1], min(r[w][1] for w in ("onnx-ts", "onnx-dynamo") if not isinstance(r[w], str)))
                 for r in rows if not isinstance(r[ours], str)
                 and any(not isinstance(r[w], str) for w in ("onnx-ts", "onnx-dynamo"))]
        if rated:
            lines += ["", f"{LABELS[ours]} against the faster torch.onnx file ({len(rated)} models): latency at most "
                          f"that file's in {sum(a <= b for a, b in rated)}, median ratio "
                          f"{statistics.median(a / b for a, b in rated):.2f}."]
    if both:
        fewer = sum(r["t2o-dynamo"][0] <= r["onnx-dynamo"][0] for r in both)
        ratio_n = statistics.median(r["t2o-dynamo"][0] / r["onnx-dynamo"][0] for r in both)
        ratio_t = statistics.median(r["t2o-dynamo"][1] / r["onnx-dynamo"][1] for r in both)
        lines += ["", f"Where both dynamo paths export ({len(both)} models): torch2onnx's graph has at most the "
                      f"nodes of torch.onnx's in {fewer}; median node ratio {ratio_n:.2f}, median latency ratio "
                      f"{ratio_t:.2f} (torch2onnx / torch.onnx)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        write_section(a.markdown, HEADING, text)


if __name__ == "__main__":
    main()
