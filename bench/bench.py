"""torch2onnx vs torch.onnx.export, side by side on this machine.

For each model: a traced TorchScript archive and its example args are made
once; then both exporters run as separate processes on the same archive:

  torch2onnx:  torch2onnx export model.pt --args args.pt -o t2o.onnx
  torch.onnx:  python3 -c "torch.onnx.export(torch.jit.load('model.pt'), args, 'ref.onnx')"

and the table shows end-to-end seconds (median of --repeat runs), the
torch.onnx.export call alone, peak RSS, node count, file size and ONNX Runtime
latency of both files.

    /usr/bin/python3 bench/bench.py [--models resnet50,vgg16] [--repeat 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
import harness  # noqa: E402
import zoo  # noqa: E402

REFERENCE = r"""
import sys, time, torch
pt, args_pt, out, opset = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.time()
m = torch.jit.load(pt)
args = torch.load(args_pt)
torch.onnx.export(m, args, out, opset_version=opset)
print("call", time.time() - t0)
print(open("/proc/self/status").read(), file=sys.stderr)
"""


def peak_rss_mb(text):
    """VmHWM from a /proc/self/status dump, or torch2onnx's own report."""
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
        if line.startswith("[t2o] peak RSS:"):
            return float(line.split()[3])
    return float("nan")


def run_measured(cmd, env=None):
    """Runs cmd after flushing dirty pages (so earlier runs' writeback does not
    land on this one); returns (wall seconds, peak RSS in MB, stdout)."""
    os.sync()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return wall, peak_rss_mb(proc.stderr), proc.stdout


def ort_latency(path, inputs, work, runs):
    _, summary = harness.run_ort(path, inputs, work, bench=runs)
    return summary["latency_ms"]


def bench_model(name, cli, repeat, opset, work, ort_runs):
    module, args = zoo.MODELS[name]()
    pt, args_pt = os.path.join(work, f"{name}.pt"), os.path.join(work, f"{name}_args.pt")
    harness.trace(module, args, pt)
    torch.save(args, args_pt)
    weights_mb = sum(t.numel() * t.element_size() for t in module.state_dict().values()) / 1e6
    t2o_out, ref_out = os.path.join(work, f"{name}.t2o.onnx"), os.path.join(work, f"{name}.ref.onnx")

    env = dict(os.environ, T2O_TIMING="1")
    t2o, ref = [], []
    for _ in range(repeat):  # alternate, so both see the same machine state
        for f in (t2o_out, ref_out):
            if os.path.exists(f):
                os.remove(f)
        t2o.append(run_measured([cli, "export", pt, "--args", args_pt, "-o", t2o_out, "--opset", str(opset)], env))
        ref.append(run_measured([sys.executable, "-c", REFERENCE, pt, args_pt, ref_out, str(opset)]))
    inputs = [t.numpy() for t in harness.flatten(args)]
    row = {
        "model": name,
        "weights_mb": weights_mb,
        "t2o_s": statistics.median(w for w, _, _ in t2o),
        "ref_s": statistics.median(w for w, _, _ in ref),
        "ref_call_s": statistics.median(float(o.split("call")[-1]) for _, _, o in ref),
        "t2o_rss_mb": max(r for _, r, _ in t2o),
        "ref_rss_mb": max(r for _, r, _ in ref),
        "t2o_nodes": len(onnx.load(t2o_out, load_external_data=False).graph.node),
        "ref_nodes": len(onnx.load(ref_out, load_external_data=False).graph.node),
        "t2o_mb": os.path.getsize(t2o_out) / 1e6,
        "ref_mb": os.path.getsize(ref_out) / 1e6,
        "t2o_ort_ms": ort_latency(t2o_out, inputs, work, ort_runs),
        "ref_ort_ms": ort_latency(ref_out, inputs, work, ort_runs),
    }
    row["speedup"] = row["ref_s"] / row["t2o_s"]
    for f in (t2o_out, ref_out, pt):
        os.remove(f)
    return row


def table(rows, opset, repeat):
    lines = [
        f"Export to ONNX opset {opset}, median of {repeat} runs, this machine "
        f"({os.cpu_count()} cores); end to end = the whole process, from the archive on disk to the "
        f"written model.",
        "",
        "| model | weights MB | torch2onnx s | torch.onnx s (call only) | speedup | peak RSS MB t2o / torch.onnx "
        "| nodes t2o / torch.onnx | file MB t2o / torch.onnx | ORT ms t2o / torch.onnx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['weights_mb']:.1f} | {r['t2o_s']:.2f} | {r['ref_s']:.2f} ({r['ref_call_s']:.2f}) "
            f"| {r['speedup']:.1f}x | {r['t2o_rss_mb']:.0f} / {r['ref_rss_mb']:.0f} "
            f"| {r['t2o_nodes']} / {r['ref_nodes']} | {r['t2o_mb']:.1f} / {r['ref_mb']:.1f} "
            f"| {r['t2o_ort_ms']:.2f} / {r['ref_ort_ms']:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "torch2onnx"))
    p.add_argument("--models", default="resnet50,vgg16,alexnet,densenet121,inception_v3,dcgan_generator,"
                                        "super_resolution,word_lm_lstm,word_lm_transformer")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--ort-runs", type=int, default=20)
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in a.models.split(","):
            row = bench_model(name, a.cli, a.repeat, a.opset, work, a.ort_runs)
            print(f"{name}: torch2onnx {row['t2o_s']:.2f}s, torch.onnx {row['ref_s']:.2f}s "
                  f"({row['speedup']:.1f}x)", file=sys.stderr)
            rows.append(row)
    print(table(rows, a.opset, a.repeat))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
