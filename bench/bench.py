"""torch2onnx vs torch.onnx.export, side by side on this machine.

For each model: a traced TorchScript archive, its example args and its
state_dict are made once; then each exporter runs as a separate process:

  torch2onnx:        torch2onnx export model.pt --args args.pt -o t2o.onnx
  torch.onnx (TS):   torch.onnx.export(torch.jit.load('model.pt'), args, 'ref.onnx', dynamo=False)
  torch.onnx (dynamo, torch 2.x with onnxscript): the eager model rebuilt from
                     its state_dict, torch.onnx.export(model, args, 'dyn.onnx', dynamo=True)

and the table shows end-to-end seconds (median of --repeat runs), the
torch.onnx.export call alone, peak RSS, node count, file size, ONNX Runtime
latency of each file, and whether each file matches eager PyTorch in ONNX
Runtime (max |ort - torch| <= 1e-4 * (1 + max |torch|)).

    build/venv/bin/python bench/bench.py [--models resnet50,vgg16] [--repeat 3] [--markdown docs/benchmarks.md]

Besides the models: the cost per node on generated graphs of 1k, 10k and
100k nodes (--scaling), and a model with 2.5 GiB of weights (--big), which
goes to ONNX external data.

--pt2 benchmarks torch.export programs instead (bench_pt2.py): torch2onnx and
torch.onnx's dynamo exporter on the same .pt2, in a section of --markdown of
its own (which the TorchScript run above keeps when it rewrites the file).
"""
import argparse
import inspect
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


def vit_b_16():
    """torchvision's ViT-B/16 at its full 224x224 size (random weights; its
    zero-initialized head randomized too, so that outputs are not all zero)."""
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.vit_b_16()
    zoo._randomize_zero_weights(model)
    return model.eval(), (torch.randn(1, 3, 224, 224),)


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


MODELS = {**zoo.MODELS, "swin_t": tv_zoo.MODELS["swin_t"], "vit_b_16": vit_b_16,
          "transformer_encoder_12": transformer_encoder_12,
          "big_2.5GiB": lambda: (zoo.Big().eval(), (torch.randn(2, 8192),))}
for _n in (1000, 10000, 100000):
    MODELS[f"chain_{_n // 1000}k"] = (lambda n: lambda: (Chain(n), (torch.randn(4, 4),)))(_n)

REFERENCE = r"""
import inspect, sys, time, warnings, torch
warnings.simplefilter("ignore")
pt, args_pt, out, opset = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.time()
m = torch.jit.load(pt)
args = torch.load(args_pt)
kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
torch.onnx.export(m, args, out, opset_version=opset, **kw)
print("T2O_CALL_SECONDS", time.time() - t0)
print(open("/proc/self/status").read(), file=sys.stderr)
"""

# torch.onnx's default exporter (torch.export + onnxscript) needs the eager
# module: rebuilt here, with the benchmark's weights.
DYNAMO = r"""
import sys, time, warnings, torch
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import bench
name, state, args_pt, out, opset = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
module, _ = bench.MODELS[name]()
module.load_state_dict(torch.load(state))
module.eval()
args = torch.load(args_pt)
t0 = time.time()
torch.onnx.export(module, args, out, dynamo=True, opset_version=opset)
print("T2O_CALL_SECONDS", time.time() - t0)
print(open("/proc/self/status").read(), file=sys.stderr)
"""


def has_dynamo_exporter():
    try:
        import onnxscript  # noqa: F401
    except ImportError:
        return False
    return "dynamo" in inspect.signature(torch.onnx.export).parameters


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


def run_alternating(commands, dirs, repeat, timeout, failed):
    """Each exporter's (cmd, env) in `commands` run `repeat` times, in turn, so
    all see the same machine state, each into its own empty directory (torch2onnx
    "t2o" without a timeout). An exporter that fails is not run again: failed(e,
    RuntimeError) is told, and its runs are []. Returns {exporter: [run_measured
    results]} for every exporter of EXPORTERS-like `dirs`."""
    runs, dead = {e: [] for e in dirs}, set()
    for _ in range(repeat):
        for e, (cmd, env) in commands.items():
            if e in dead:
                continue
            shutil.rmtree(dirs[e], ignore_errors=True)
            os.makedirs(dirs[e])
            try:
                runs[e].append(run_measured(cmd, env, timeout=None if e == "t2o" else timeout))
            except RuntimeError as err:
                failed(e, err)
                dead.add(e)
                runs[e] = []
    return runs


def graph_inputs(path, inputs):
    """The example inputs the model at `path` takes: exporters drop inputs the
    graph does not read (word_lm_transformer's causal mask, which torch 2.x's
    TransformerEncoder replaces by is_causal), so the declared inputs are
    matched in order, by dtype and static sizes, against the example's."""
    graph = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    declared = [i for i in graph.input if i.name not in inits]
    if len(declared) == len(inputs):
        return inputs

    def fits(d, a):
        t = d.type.tensor_type
        if onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) != a.dtype or len(t.shape.dim) != a.ndim:
            return False
        return all(not dim.HasField("dim_value") or dim.dim_value == n for dim, n in zip(t.shape.dim, a.shape))

    chosen, k = [], 0
    for d in declared:
        while k < len(inputs) and not fits(d, inputs[k]):
            k += 1
        if k == len(inputs):
            raise AssertionError(f"{path}: no example input fits graph input {d.name}")
        chosen.append(inputs[k])
        k += 1
    return chosen


def ort_latency(path, inputs, work, runs):
    _, summary = harness.run_ort(path, graph_inputs(path, inputs), work, bench=runs)
    return summary["latency_ms"]


def call_seconds(stdout):
    for line in stdout.splitlines():
        if line.startswith("T2O_CALL_SECONDS"):
            return float(line.split()[1])
    return float("nan")


def dir_size_mb(path):
    """The size of the files in `path`'s directory (each exporter writes into
    its own: torch.onnx puts external data beside the model)."""
    d = os.path.dirname(path)
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / 1e6


def node_count(path):
    return len(onnx.load(path, load_external_data=False).graph.node)


def median(xs):
    return statistics.median(xs) if xs else None


def ort_matches(label, path, inputs, expected):
    """Whether the file at `path` run in ONNX Runtime on `inputs` (numpy
    arrays) matches `expected` (eager PyTorch's flat outputs)."""
    try:
        actual, _ = harness.run_ort(path, graph_inputs(path, inputs))
        harness.compare(expected, actual)
        return True
    except AssertionError as err:
        print(f"{label}: {path} does not match PyTorch: {str(err).splitlines()[0][:300]}", file=sys.stderr)
        return False


def ort_rounds(paths, inputs, work, ort_runs):
    """ONNX Runtime latency of each file of `paths` (exporter -> path, None to
    skip) on the example inputs: 5 rounds alternating between the files, each
    the median of enough runs for about half a second (at least ort_runs); the
    median round (None where the file did not run)."""
    latencies = {e: [] for e in paths}
    live = {e: p for e, p in paths.items() if p}
    estimate = None
    for p in live.values() if ort_runs else ():
        try:
            estimate = ort_latency(p, inputs, work, 3)
            break
        except AssertionError:  # a file ONNX Runtime cannot run has no latency
            pass
    if estimate is not None:
        n = max(ort_runs, min(500, int(500 / max(estimate, 1e-3))))
        for _ in range(5):
            for e, p in live.items():
                try:
                    latencies[e].append(ort_latency(p, inputs, work, n))
                except AssertionError:
                    pass
    return {e: median(v) for e, v in latencies.items()}


EXPORTERS = ("t2o", "ref", "dyn")


def bench_model(name, cli, repeat, opset, work, ort_runs, ref_timeout=900, dynamo=True):
    module, args = MODELS[name]()
    pt, args_pt = os.path.join(work, f"{name}.pt"), os.path.join(work, f"{name}_args.pt")
    state = os.path.join(work, f"{name}_state.pt")
    harness.trace(module, args, pt)
    torch.save(args, args_pt)
    torch.save(module.state_dict(), state)
    weights_mb = sum(t.numel() * t.element_size() for t in module.state_dict().values()) / 1e6
    with torch.no_grad():
        expected = harness.flatten(module(*args))
    del module
    # Each exporter writes into its own directory (torch.onnx puts external
    # data in one file per tensor), whose files make the size.
    dirs = {e: os.path.join(work, f"{name}.{e}") for e in EXPORTERS}
    outs = {e: os.path.join(d, "model.onnx") for e, d in dirs.items()}
    commands = {
        "t2o": ([cli, "export", pt, "--args", args_pt, "-o", outs["t2o"], "--opset", str(opset)],
                dict(os.environ, T2O_TIMING="1")),
        "ref": ([sys.executable, "-c", REFERENCE, pt, args_pt, outs["ref"], str(opset)], None),
        "dyn": ([sys.executable, "-c", DYNAMO, os.path.dirname(os.path.abspath(__file__)), name, state, args_pt,
                 outs["dyn"], str(opset)], None),
    }
    if not dynamo:
        del commands["dyn"]

    def failed(e, err):
        if e == "t2o":
            raise err
        print(f"{name}: {e} failed: {str(err).strip().splitlines()[-1]}", file=sys.stderr)

    runs = run_alternating(commands, dirs, repeat, ref_timeout, failed)
    inputs = [t.numpy() for t in harness.flatten(args)]
    row = {"model": name, "weights_mb": weights_mb}
    for e in EXPORTERS:
        ok = bool(runs[e])
        row[f"{e}_s"] = median([w for w, _, _ in runs[e]])
        row[f"{e}_call_s"] = None if e == "t2o" or not ok else median([call_seconds(o) for _, _, o in runs[e]])
        row[f"{e}_rss_mb"] = max((r for _, r, _ in runs[e]), default=None)
        row[f"{e}_nodes"] = node_count(outs[e]) if ok else None
        row[f"{e}_mb"] = dir_size_mb(outs[e]) if ok else None
        row[f"{e}_match"] = ort_matches(name, outs[e], inputs, expected) if ok else None
    latencies = ort_rounds({e: outs[e] if runs[e] else None for e in EXPORTERS}, inputs, work, ort_runs)
    for e in EXPORTERS:
        row[f"{e}_ort_ms"] = latencies[e]
    fastest_ref = min((row[f"{e}_s"] for e in ("ref", "dyn") if row[f"{e}_s"] is not None), default=None)
    row["speedup"] = fastest_ref / row["t2o_s"] if fastest_ref else None
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
    for f in (pt, state):
        os.remove(f)
    return row


def fmt(v, spec, missing="failed"):
    return missing if v is None else format(v, spec)


def table(rows, opset, repeat, baseline_mb):
    lines = [
        f"Export to ONNX opset {opset}, median of {repeat} runs, on this machine ({os.cpu_count()} cores, "
        f"torch {torch.__version__}). Three exporters: torch2onnx, torch.onnx's TorchScript exporter "
        f"(`dynamo=False`, *TS*) and torch.onnx's default exporter (`dynamo=True`, *dynamo*; it writes opset 18 "
        f"whatever opset is asked for). *End to end* is the whole process, from the archive on disk (dynamo: from "
        f"the eager model, rebuilt in the process) to the written model; the export call alone in parentheses. "
        f"*Speedup* is torch2onnx's end to end against the faster torch.onnx. *Peak RSS* is the process's "
        f"high-water mark; *over baseline* is torch2onnx's peak minus its peak on a model with no weights to speak "
        f"of ({baseline_mb:.0f} MB: LibTorch loaded), in MB and as a multiple of the weights' size (models under "
        f"1 MB of weights: MB only). *Matches*: the file run in ONNX Runtime against eager PyTorch, "
        f"max |ort - torch| <= 1e-4 (1 + max |torch|). *ORT ms*: ONNX Runtime latency on the example inputs "
        f"(5 rounds alternating between the files, each the median of enough runs for about 0.5 s, at least "
        f"--ort-runs; the median round).",
        "",
        "| model | weights MB | torch2onnx s | TS s (call) | dynamo s (call) | speedup "
        "| peak RSS MB t2o / TS / dynamo | t2o over baseline MB (/ weights) | nodes t2o / TS / dynamo "
        "| file MB t2o / TS / dynamo | matches t2o / TS / dynamo | ORT ms t2o / TS / dynamo |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|",
    ]

    def three(r, key, spec, missing="-"):
        return " / ".join(fmt(r[f"{e}_{key}"], spec, missing) for e in EXPORTERS)

    def match(v):
        return "-" if v is None else ("yes" if v else "NO")

    for r in rows:
        over_mb = r["t2o_rss_mb"] - baseline_mb
        over = f"{over_mb:.0f} ({over_mb / r['weights_mb']:.2f}x)" if r["weights_mb"] >= 1 else f"{over_mb:.0f}"
        ref = {e: "failed" if r[f"{e}_s"] is None else f"{r[f'{e}_s']:.2f} ({r[f'{e}_call_s']:.2f})"
               for e in ("ref", "dyn")}
        lines.append(
            f"| {r['model']} | {r['weights_mb']:.1f} | {r['t2o_s']:.2f} | {ref['ref']} | {ref['dyn']} "
            f"| {fmt(r['speedup'], '.1f') + 'x' if r['speedup'] else '- (both failed)'} | {three(r, 'rss_mb', '.0f')} | {over} | {three(r, 'nodes', 'd')} "
            f"| {three(r, 'mb', '.1f')} | {' / '.join(match(r[f'{e}_match']) for e in EXPORTERS)} "
            f"| {three(r, 'ort_ms', '.2f')} |")
    return "\n".join(lines)


def scaling_table(rows):
    lines = [
        "Cost per node: a chain of n elementwise nodes (`tanh`, `add`), exported end to end (torch.onnx given at most "
        "300 s). "
        "µs/node is the end-to-end time over the exported node count (the process's fixed start-up cost included, "
        "so it falls as graphs grow while the cost stays linear).",
        "",
        "| graph | ONNX nodes | torch2onnx s | torch2onnx µs/node | torch.onnx TS s | torch.onnx TS µs/node |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r["t2o_nodes"]
        ref_us = None if r["ref_s"] is None else 1e6 * r["ref_s"] / n  # the TorchScript exporter
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


PT2_HEADING = "## .pt2 programs: torch2onnx vs torch.onnx dynamo"
# The sections the other benchmarks write into the same page (bench_llm.py,
# bench_graphs.py): this one's run keeps them, as it keeps the .pt2 one.
LLM_HEADING = "## A large decoder: torch2onnx vs torch.onnx (seconds and peak memory)"
GRAPHS_HEADING = "## transformers models: graph size and ONNX Runtime latency"
INPROCESS_HEADING = "## In process from Python: torch2onnx.export vs torch.onnx.export (seconds per call)"
OPSETS_HEADING = "## Opsets 23 to 28: torch2onnx vs torch.onnx"
OTHER_HEADINGS = (PT2_HEADING, LLM_HEADING, GRAPHS_HEADING, INPROCESS_HEADING, OPSETS_HEADING)


def section(text, heading):
    """(start, end) of the section of markdown `text` under the line
    `heading`, up to the next heading of its level or the end; None if absent."""
    lines = text.splitlines(keepends=True)
    level = heading.split(" ")[0] + " "
    starts = [sum(map(len, lines[:k])) for k in range(len(lines) + 1)]
    for k, line in enumerate(lines):
        if line.rstrip("\n") == heading:
            end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith(level)), len(lines))
            return starts[k], starts[end]
    return None


def write_section(path, heading, body):
    """Replaces the section of the markdown file at `path` under `heading`
    (from the heading to the next heading of its level) with `body`, which
    starts with that heading, or appends it; the rest stays."""
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    at = section(text, heading)
    if at:
        text = text[:at[0]] + body.rstrip("\n") + "\n" + ("\n" + text[at[1]:] if text[at[1]:] else "")
    else:
        text = text.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "torch2onnx"))
    p.add_argument("--pt2", action="store_true",
                   help="benchmark torch.export programs (.pt2): torch2onnx against torch.onnx's dynamo exporter "
                        "on the same program (bench_pt2.py); --markdown then writes or replaces only its section")
    p.add_argument("--models", default=None,
                   help="comma-separated names from MODELS (default: every model of the chosen mode)")
    p.add_argument("--scaling", default="chain_1k,chain_10k,chain_100k", help="generated graphs ('' to skip)")
    p.add_argument("--big", action=argparse.BooleanOptionalAction, default=True, help="the 2.5 GiB model")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--opset", type=int, default=None, help="default 17 (TorchScript), 20 with --pt2 (as torch.onnx)")
    p.add_argument("--ort-runs", type=int, default=20)
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    p.add_argument("--markdown", default=None, help="write the tables to this file (docs/benchmarks.md)")
    a = p.parse_args()
    if a.opset is None:
        a.opset = 20 if a.pt2 else 17
    if a.pt2:
        sys.modules.setdefault("bench", sys.modules[__name__])  # one copy of this module, not two
        import bench_pt2
        return bench_pt2.run(a)
    if a.models is None:
        a.models = ("vgg16,resnet50,swin_t,vit_b_16,transformer_encoder_12,alexnet,densenet121,inception_v3,"
                    "dcgan_generator,dcgan_discriminator,super_resolution,word_lm_lstm,word_lm_gru,word_lm_rnn_tanh,"
                    "word_lm_transformer")
    rows, scaling = [], []
    with tempfile.TemporaryDirectory() as work:
        base = baseline_rss(a.cli, work)
        dynamo = has_dynamo_exporter()
        jobs = [(m, a.repeat, a.ort_runs, rows, 900, dynamo) for m in a.models.split(",") if m]
        jobs += [(m, 1, 0, scaling, 300, False) for m in a.scaling.split(",") if m]
        if a.big:
            jobs.append(("big_2.5GiB", 1, 3, rows, 900, dynamo))
        for name, repeat, ort_runs, out, ref_timeout, dyn in jobs:
            row = bench_model(name, a.cli, repeat, a.opset, work, ort_runs, ref_timeout, dyn)
            print(f"{name}: torch2onnx {row['t2o_s']:.2f} s, torch.onnx TS {fmt(row['ref_s'], '.2f')} s, "
                  f"dynamo {fmt(row['dyn_s'], '.2f')} s ({fmt(row['speedup'], '.1f')}x)", file=sys.stderr)
            out.append(row)
    command = " ".join(["bench/bench.py"] + [arg if arg else "''" for arg in sys.argv[1:]])
    text = f"# Benchmarks\n\nGenerated by `make bench`; this run: `{command}`.\n\n" + \
        table(rows, a.opset, a.repeat, base) + "\n\n" + (scaling_table(scaling) + "\n" if scaling else "")
    print(text)
    if a.markdown:
        kept = ""  # the sections the other benchmarks wrote stay (.pt2 with --pt2, bench_llm, bench_graphs)
        if os.path.exists(a.markdown):
            with open(a.markdown) as f:
                old = f.read()
            for heading in OTHER_HEADINGS:
                at = section(old, heading)
                if at:
                    kept += "\n" + old[at[0]:at[1]].rstrip("\n") + "\n"
        with open(a.markdown, "w") as f:
            f.write(text.rstrip("\n") + "\n" + kept)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline_rss_mb": base, "models": rows, "scaling": scaling}, f, indent=1)


if __name__ == "__main__":
    main()
