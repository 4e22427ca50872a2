"""torch2onnx vs torch.onnx.export, side by side on this machine.

For each model: a traced TorchScript archive and its example args are made
once; then both exporters run as separate processes on the same archive:

  torch2onnx:  torch2onnx export model.pt --args args.pt -o t2o.onnx
  torch.onnx:  python3 -c "torch.onnx.export(torch.jit.load('model.pt'), args, 'ref.onnx')"

and the table shows end-to-end seconds (median of --repeat runs), the
torch.onnx.export call alone, peak RSS, node count, file size and ONNX Runtime
latency of both files.

    /usr/bin/python3 bench/bench.py [--models resnet50,vgg16] [--repeat 3] [--markdown docs/benchmarks.md]

Besides the models: the cost per node on generated graphs of 1k, 10k and
100k nodes (--scaling), and a model with 2.5 GiB of weights (--big), which
goes to ONNX external data.
"""
import argparse
import json
import os
import shutil
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
import tv_zoo  # noqa: E402
import zoo  # noqa: E402


class Encoder12(torch.nn.Module):
    """A 12-layer transformer encoder (BERT-base sized: d_model 768, 12 heads,
    sequence-first so that torch.onnx can export it: batch-first inference
    takes PyTorch's fused fast path, which torch.onnx 1.13 cannot export).
    Each layer has its own random weights (nn.TransformerEncoder deep-copies
    one layer, which would leave 12 identical ones)."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0)
        self.encoder = torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)
        for p in self.encoder.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, x):
        return self.encoder(x)


def transformer_encoder_12():
    torch.manual_seed(0)
    return Encoder12().eval(), (torch.randn(128, 2, 768),)


class Chain(torch.nn.Module):
    """n elementwise nodes in a row, for the cost per node. No per-node
    constants: traced Python numbers become 0-d tensor constants, whose
    pooling in LibTorch's own loader (torch.jit.load) is quadratic in their
    number; that would measure LibTorch, not the exporters."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        for i in range(self.n // 2):
            x = torch.tanh(x) + x
        return x


MODELS = {**zoo.MODELS, "swin_t": tv_zoo.MODELS["swin_t"], "transformer_encoder_12": transformer_encoder_12,
          "big_2.5GiB": lambda: (zoo.Big().eval(), (torch.randn(2, 8192),))}
for _n in (1000, 10000, 100000):
    MODELS[f"chain_{_n // 1000}k"] = (lambda n: lambda: (Chain(n), (torch.randn(4, 4),)))(_n)

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
    """VmHWM from a /proc/self/status dump, or torch2onnx's own report (both
    in KiB or MiB), in MB of 10^6 bytes like every other size here."""
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / 1e6
        if line.startswith("[t2o] peak RSS:"):
            return float(line.split()[3]) * 2**20 / 1e6
    return float("nan")


def run_measured(cmd, env=None, timeout=900):
    """Runs cmd after flushing dirty pages (so earlier runs' writeback does not
    land on this one); returns (wall seconds, peak RSS in MB, stdout)."""
    os.sync()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(cmd)} failed:\ntimed out after {timeout} s")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return wall, peak_rss_mb(proc.stderr), proc.stdout


def ort_latency(path, inputs, work, runs):
    _, summary = harness.run_ort(path, inputs, work, bench=runs)
    return summary["latency_ms"]


def bench_model(name, cli, repeat, opset, work, ort_runs, ref_timeout=900):
    module, args = MODELS[name]()
    pt, args_pt = os.path.join(work, f"{name}.pt"), os.path.join(work, f"{name}_args.pt")
    harness.trace(module, args, pt)
    torch.save(args, args_pt)
    weights_mb = sum(t.numel() * t.element_size() for t in module.state_dict().values()) / 1e6
    del module
    # Each exporter writes into its own directory (torch.onnx puts external
    # data in one file per tensor), whose files make the size.
    t2o_dir, ref_dir = os.path.join(work, f"{name}.t2o"), os.path.join(work, f"{name}.ref")
    t2o_out, ref_out = os.path.join(t2o_dir, "model.onnx"), os.path.join(ref_dir, "model.onnx")

    env = dict(os.environ, T2O_TIMING="1")
    t2o, ref = [], []
    for _ in range(repeat):  # alternate, so both see the same machine state
        for d in (t2o_dir, ref_dir):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        t2o.append(run_measured([cli, "export", pt, "--args", args_pt, "-o", t2o_out, "--opset", str(opset)], env))
        try:
            ref.append(run_measured([sys.executable, "-c", REFERENCE, pt, args_pt, ref_out, str(opset)],
                                    timeout=ref_timeout))
        except RuntimeError as e:
            ref_error = str(e).strip().splitlines()[-1]
            print(f"{name}: torch.onnx.export failed: {ref_error}", file=sys.stderr)
            ref = []
            break
    inputs = [t.numpy() for t in harness.flatten(args)]

    def size_mb(path):
        d = os.path.dirname(path)
        return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / 1e6

    def nodes(path):
        return len(onnx.load(path, load_external_data=False).graph.node)

    def med(xs):
        return statistics.median(xs) if xs else None

    row = {
        "model": name,
        "weights_mb": weights_mb,
        "t2o_s": med([w for w, _, _ in t2o]),
        "ref_s": med([w for w, _, _ in ref]),
        "ref_call_s": med([float(o.split("call")[-1]) for _, _, o in ref]),
        "t2o_rss_mb": max(r for _, r, _ in t2o),
        "ref_rss_mb": max((r for _, r, _ in ref), default=None),
        "t2o_nodes": nodes(t2o_out),
        "ref_nodes": nodes(ref_out) if ref else None,
        "t2o_mb": size_mb(t2o_out),
        "ref_mb": size_mb(ref_out) if ref else None,
    }
    # ONNX Runtime latency: 5 rounds alternating between the two files, each
    # the median of enough runs for about half a second; the median round.
    t2o_ms, ref_ms = [], []
    if ort_runs:
        estimate = ort_latency(t2o_out, inputs, work, 3)
        runs = max(ort_runs, min(500, int(500 / max(estimate, 1e-3))))
        for _ in range(5):
            t2o_ms.append(ort_latency(t2o_out, inputs, work, runs))
            if ref:
                ref_ms.append(ort_latency(ref_out, inputs, work, runs))
    row["t2o_ort_ms"] = statistics.median(t2o_ms) if t2o_ms else None
    row["ref_ort_ms"] = statistics.median(ref_ms) if ref_ms else None
    row["speedup"] = row["ref_s"] / row["t2o_s"] if ref else None
    for d in (t2o_dir, ref_dir):
        shutil.rmtree(d, ignore_errors=True)
    os.remove(pt)
    return row


def fmt(v, spec, missing="failed"):
    return missing if v is None else format(v, spec)


def table(rows, opset, repeat, baseline_mb):
    lines = [
        f"Export to ONNX opset {opset}, median of {repeat} runs, on this machine ({os.cpu_count()} cores, "
        f"torch {torch.__version__}). *End to end* is the whole process, from the archive on disk to the written "
        f"model (for torch.onnx: `python3 -c \"torch.onnx.export(torch.jit.load(...), ...)\"`, its export call "
        f"alone in parentheses). *Peak RSS* is the process's high-water mark; *over baseline* is torch2onnx's "
        f"peak minus its peak on a model with no weights to speak of ({baseline_mb:.0f} MB: LibTorch loaded), "
        f"in MB and as a multiple of the weights' size (models under 1 MB of weights: MB only; on models of a few "
        f"MB, the MB are the code each export touches, not weights). *ORT ms*: ONNX Runtime latency of each file on the example inputs (5 rounds alternating between the two files, each the median of enough runs for about 0.5 s, at least --ort-runs; the median round).",
        "",
        "| model | weights MB | torch2onnx s | torch.onnx s (call only) | speedup | peak RSS MB t2o / torch.onnx "
        "| t2o over baseline MB (/ weights) | nodes t2o / torch.onnx | file MB t2o / torch.onnx "
        "| ORT ms t2o / torch.onnx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        over_mb = r["t2o_rss_mb"] - baseline_mb
        over = f"{over_mb:.0f} ({over_mb / r['weights_mb']:.2f}x)" if r["weights_mb"] >= 1 else f"{over_mb:.0f}"
        ref_s = "failed" if r["ref_s"] is None else f"{r['ref_s']:.2f} ({r['ref_call_s']:.2f})"
        lines.append(
            f"| {r['model']} | {r['weights_mb']:.1f} | {r['t2o_s']:.2f} | {ref_s} "
            f"| {fmt(r['speedup'], '.1f')}x | {r['t2o_rss_mb']:.0f} / {fmt(r['ref_rss_mb'], '.0f')} "
            f"| {over} | {r['t2o_nodes']} / {fmt(r['ref_nodes'], 'd')} "
            f"| {r['t2o_mb']:.1f} / {fmt(r['ref_mb'], '.1f')} "
            f"| {fmt(r['t2o_ort_ms'], '.2f', '-')} / {fmt(r['ref_ort_ms'], '.2f', '-')} |")
    return "\n".join(lines)


def scaling_table(rows):
    lines = [
        "Cost per node: a chain of n elementwise nodes (`tanh`, `add`), exported end to end (torch.onnx given at most "
        "300 s). "
        "µs/node is the end-to-end time over the exported node count (the process's fixed start-up cost included, "
        "so it falls as graphs grow while the cost stays linear).",
        "",
        "| graph | ONNX nodes | torch2onnx s | torch2onnx µs/node | torch.onnx s | torch.onnx µs/node |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r["t2o_nodes"]
        ref_us = None if r["ref_s"] is None else 1e6 * r["ref_s"] / n
        lines.append(f"| {r['model']} | {n} | {r['t2o_s']:.2f} | {1e6 * r['t2o_s'] / n:.1f} "
                     f"| {fmt(r['ref_s'], '.2f')} | {fmt(ref_us, '.1f')} |")
    return "\n".join(lines)


def baseline_rss(cli, work):
    module, args = zoo.MODELS["super_resolution"]()
    pt, args_pt = os.path.join(work, "baseline.pt"), os.path.join(work, "baseline_args.pt")
    harness.trace(module, args, pt)
    torch.save(args, args_pt)
    _, rss, _ = run_measured([cli, "export", pt, "--args", args_pt, "-o", os.path.join(work, "baseline.onnx")],
                             dict(os.environ, T2O_TIMING="1"))
    return rss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "torch2onnx"))
    p.add_argument("--models", default="vgg16,resnet50,swin_t,transformer_encoder_12,alexnet,densenet121,"
                                        "inception_v3,dcgan_generator,dcgan_discriminator,super_resolution,"
                                        "word_lm_lstm,word_lm_gru,word_lm_rnn_tanh,word_lm_transformer")
    p.add_argument("--scaling", default="chain_1k,chain_10k,chain_100k", help="generated graphs ('' to skip)")
    p.add_argument("--big", action=argparse.BooleanOptionalAction, default=True, help="the 2.5 GiB model")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--ort-runs", type=int, default=20)
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    p.add_argument("--markdown", default=None, help="write the tables to this file (docs/benchmarks.md)")
    a = p.parse_args()
    rows, scaling = [], []
    with tempfile.TemporaryDirectory() as work:
        base = baseline_rss(a.cli, work)
        jobs = [(m, a.repeat, a.ort_runs, rows, 900) for m in a.models.split(",") if m]
        jobs += [(m, 1, 0, scaling, 300) for m in a.scaling.split(",") if m]
        if a.big:
            jobs.append(("big_2.5GiB", 1, 3, rows, 900))
        for name, repeat, ort_runs, out, ref_timeout in jobs:
            row = bench_model(name, a.cli, repeat, a.opset, work, ort_runs, ref_timeout)
            print(f"{name}: torch2onnx {row['t2o_s']:.2f}s, torch.onnx {fmt(row['ref_s'], '.2f')}s "
                  f"({fmt(row['speedup'], '.1f')}x)", file=sys.stderr)
            out.append(row)
    text = "# Benchmarks\n\nGenerated by `make bench` (`bench/bench.py --markdown docs/benchmarks.md`).\n\n" + \
        table(rows, a.opset, a.repeat, base) + "\n\n" + (scaling_table(scaling) + "\n" if scaling else "")
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline_rss_mb": base, "models": rows, "scaling": scaling}, f, indent=1)


if __name__ == "__main__":
    main()
