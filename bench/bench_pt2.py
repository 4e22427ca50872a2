"""torch2onnx vs torch.onnx's dynamo exporter on the same torch.export program
(.pt2), side by side on this machine: bench.py's --pt2 mode.

    build/venv/bin/python bench/bench.py --pt2 [--models resnet50,swin_t] [--repeat 3] [--markdown docs/benchmarks.md]

For each model the program is made once, with a dynamic batch:

  ep = torch.export.export(module, args, dynamic_shapes=...)   # Dim("batch", min=1, max=1024)
  torch.export.save(ep, 'model.pt2')

the batch being dim 0 of every input (BATCH_DIM names the models whose batch
is elsewhere: sequence-first ones). An example of batch 1 is traced at batch 2
(its inputs regenerated with the same dtypes): torch.export specializes a dim
of size 1 to the constant 1. Where the dynamic batch does not export, the
program is static (the example's shapes) and its row says so; a model
torch.export cannot capture at all is left out, with a note. Then each
exporter runs as a separate process on that file, --repeat times, alternating:

  torch2onnx:          torch2onnx export model.pt2 -o t2o.onnx --opset OPSET
  torch.onnx (dynamo): ep = torch.export.load('model.pt2')
                       torch.onnx.export(ep, (), 'dyn.onnx', dynamo=True, opset_version=OPSET)

Both write --opset (default 20, the .pt2 default of both; the dynamo exporter
writes 18 when asked for less). The table has bench.py's
columns: end to end (median of --repeat runs; dynamo: the export call alone in
parentheses), peak RSS, nodes, file size, whether each file matches eager
PyTorch in ONNX Runtime (on the example and, with a dynamic batch, on inputs of
batch 1 and 3 too), ONNX Runtime latency on the example. A program torch2onnx
refuses is a row that says so, with the first line of its error.
"""
import json
import os
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import harness  # noqa: E402  (bench puts tests/ on the path)

MODELS = ("resnet50,vit_b_16,transformer_encoder_12,densenet121,inception_v3,alexnet,vgg16,swin_t,dcgan_generator,"
          "word_lm_lstm")
# The batch dim where it is not dim 0 (None: the model has no batch dim for
# every input, e.g. word_lm_transformer's causal mask; its program is static).
BATCH_DIM = {"transformer_encoder_12": 1, "word_lm_lstm": 1, "word_lm_gru": 1, "word_lm_rnn_tanh": 1,
             "word_lm_transformer": None}
CHECK_BATCHES = (1, 3)
DYNAMO_MIN_OPSET = 18  # (torch.onnx's dynamo exporter writes at least this)
EXPORTERS = ("t2o", "dyn")

DYNAMO_PT2 = r"""
import sys, time, warnings, torch
warnings.simplefilter("ignore")
program, out, opset = sys.argv[1], sys.argv[2], int(sys.argv[3])
ep = torch.export.load(program)
t0 = time.time()
torch.onnx.export(ep, (), out, dynamo=True, opset_version=opset)
print("T2O_CALL_SECONDS", time.time() - t0)
print(open("/proc/self/status").read(), file=sys.stderr)
"""


def first_line(text):
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no message)")


def error_line(exporter, err):
    """What a failed run said: torch2onnx's first line of error (its timing
    lines aside), Python's last line (the exception)."""
    lines = [line.strip() for line in err.splitlines()[1:] if line.strip()]  # line 0: "<command> failed:"
    if exporter == "t2o":
        lines = [line for line in lines if not line.startswith("[t2o]")]
        return lines[0] if lines else "(no message)"
    return lines[-1] if lines else "(no message)"


def batch_size(args, dim):
    return next((t.shape[dim] for t in harness.flatten(args) if t.dim() > dim), None)


def with_batch(value, dim, n, gen):
    """`value` (nested inputs) with each tensor's batch dim resized to n: new
    random values of the same dtype (integers within the example's range)."""
    if isinstance(value, torch.Tensor):
        if value.dim() <= dim:
            return value
        shape = list(value.shape)
        shape[dim] = n
        if value.is_floating_point():
            return torch.randn(shape, generator=gen, dtype=value.dtype)
        if value.dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).bool()
        return torch.randint(int(value.min()), int(value.max()) + 1, shape, generator=gen, dtype=value.dtype)
    if isinstance(value, (tuple, list)):
        return type(value)(with_batch(v, dim, n, gen) for v in value)
    return value


def batch_spec(value, dim, batch):
    """torch.export's dynamic_shapes for `value`: `batch` at dim of every tensor."""
    if isinstance(value, torch.Tensor):
        return {dim: batch} if value.dim() > dim else None
    if isinstance(value, (tuple, list)):
        return type(value)(batch_spec(v, dim, batch) for v in value)
    return None


def make_program(name, module, args, path):
    """Saves module's program at `path`; returns (batch dim or None if static,
    what the row says about the program). Raises if torch.export fails."""
    dim = BATCH_DIM.get(name, 0)
    ep, note = None, "static (no batch dim on every input)"
    if dim is not None:
        batch = torch.export.Dim("batch", min=1, max=1024)
        traced = args
        if batch_size(args, dim) == 1:  # torch.export would make a size-1 batch the constant 1
            traced = with_batch(args, dim, 2, torch.Generator().manual_seed(2))
        try:
            ep = torch.export.export(module, traced, dynamic_shapes=batch_spec(args, dim, batch))
            note = f"dynamic batch (dim {dim}" + (", traced at batch 2)" if traced is not args else ")")
        except Exception as err:  # noqa: BLE001 (any failure: static instead)
            note = f"static: dynamic batch failed ({type(err).__name__}: {first_line(str(err))})"
            print(f"{name}: {note}", file=sys.stderr)
            dim = None
    if ep is None:
        ep = torch.export.export(module, args)
    torch.export.save(ep, path)
    return dim, note


def bench_program(name, cli, repeat, opset, work, ort_runs, timeout=900):
    module, args = bench.MODELS[name]()
    module.eval()
    program = os.path.join(work, f"{name}.pt2")
    try:
        dim, note = make_program(name, module, args, program)
    except Exception as err:  # noqa: BLE001
        reason = f"torch.export failed: {type(err).__name__}: {first_line(str(err))}"
        print(f"{name}: skipped, {reason}", file=sys.stderr)
        return {"model": name, "skipped": reason}
    weights_mb = sum(t.numel() * t.element_size() for t in module.state_dict().values()) / 1e6
    cases = [("example", args)]
    if dim is not None:
        cases += [(f"batch {n}", with_batch(args, dim, n, torch.Generator().manual_seed(n))) for n in CHECK_BATCHES]
    with torch.no_grad():  # (label, ONNX Runtime inputs, eager PyTorch's outputs)
        checks = [(label, [t.numpy() for t in harness.flatten(a)], harness.flatten(module(*a))) for label, a in cases]
    del module
    dirs = {e: os.path.join(work, f"{name}.{e}") for e in EXPORTERS}
    outs = {e: os.path.join(d, "model.onnx") for e, d in dirs.items()}
    commands = {
        "t2o": ([cli, "export", program, "-o", outs["t2o"], "--opset", str(opset)], dict(os.environ, T2O_TIMING="1")),
        "dyn": ([sys.executable, "-c", DYNAMO_PT2, program, outs["dyn"], str(max(opset, DYNAMO_MIN_OPSET))], None),
    }
    errors = {}

    def failed(e, err):
        errors[e] = error_line(e, str(err))
        print(f"{name}: {'torch2onnx refused' if e == 't2o' else 'dynamo failed'}: {errors[e]}", file=sys.stderr)

    runs = bench.run_alternating(commands, dirs, repeat, timeout, failed)
    row = {"model": name, "weights_mb": weights_mb, "batch_dim": dim, "program": note,
           "checked": [label for label, _, _ in checks]}
    for e in EXPORTERS:
        ok = bool(runs[e])
        row[f"{e}_error"] = errors.get(e)
        row[f"{e}_s"] = bench.median([w for w, _, _ in runs[e]])
        row[f"{e}_call_s"] = bench.median([bench.call_seconds(o) for _, _, o in runs[e]]) if e == "dyn" else None
        row[f"{e}_rss_mb"] = max((r for _, r, _ in runs[e]), default=None)
        row[f"{e}_nodes"] = bench.node_count(outs[e]) if ok else None
        row[f"{e}_mb"] = bench.dir_size_mb(outs[e]) if ok else None
        # the checks the file failed ([] : it matches on all)
        row[f"{e}_mismatches"] = [label for label, inputs, expected in checks
                                  if not bench.ort_matches(f"{name} ({label})", outs[e], inputs, expected)] \
            if ok else None
    latencies = bench.ort_rounds({e: outs[e] if runs[e] else None for e in EXPORTERS}, checks[0][1], work, ort_runs)
    for e in EXPORTERS:
        row[f"{e}_ort_ms"] = latencies[e]
    row["speedup"] = row["dyn_s"] / row["t2o_s"] if row["dyn_s"] and row["t2o_s"] else None
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
    os.remove(program)
    return row


def cell(text):
    return text.replace("|", "\\|")


def pt2_table(rows, opset, repeat):
    lines = [
        f"Each model's program is exported once by `torch.export.export` with a dynamic batch "
        f"(`torch.export.Dim(\"batch\", min=1, max=1024)` on the batch dim of every input: dim 0, or dim 1 for the "
        f"sequence-first models; an example of batch 1 is traced at batch 2, as torch.export makes a dim of size 1 "
        f"the constant 1), saved by `torch.export.save`, and that same `.pt2` goes to both exporters, each in a "
        f"process of its own, runs alternating: `torch2onnx export model.pt2 -o out.onnx --opset {opset}` and "
        f"`torch.onnx.export(torch.export.load('model.pt2'), (), out, dynamo=True, "
        f"opset_version={max(opset, DYNAMO_MIN_OPSET)})`: torch2onnx writes opset {opset}, the dynamo exporter "
        f"{max(opset, DYNAMO_MIN_OPSET)}. "
        f"*End to end* is the whole process (median of {repeat} runs), from the "
        f"`.pt2` on disk to the written model; for dynamo the `torch.onnx.export` call alone in parentheses "
        f"(`torch.export.load` excluded). *Speedup* is dynamo's end to end over torch2onnx's. *Peak RSS* is the "
        f"process's high-water mark. *Matches*: each file run in ONNX Runtime against eager PyTorch (the module the "
        f"program was exported from), max |ort - torch| <= 1e-4 (1 + max |torch|), on the example inputs and, "
        f"with a dynamic batch, on inputs of batch 1 and 3 (new random values, same dtypes); *yes* is all of them. "
        f"*ORT ms*: ONNX Runtime latency on the example inputs, as in the table above.",
        "",
        "| model | weights MB | program | torch2onnx s | dynamo s (call) | speedup | peak RSS MB t2o / dynamo "
        "| nodes t2o / dynamo | file MB t2o / dynamo | matches t2o / dynamo | ORT ms t2o / dynamo |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|:-:|---:|",
    ]

    def two(r, key, spec):
        return " / ".join(bench.fmt(r[f"{e}_{key}"], spec, "-") for e in EXPORTERS)

    def match(bad):
        return "-" if bad is None else ("yes" if not bad else "NO (" + ", ".join(bad) + ")")

    for r in rows:
        if "skipped" in r:
            continue
        t2o = f"refused: {cell(r['t2o_error'])}" if r["t2o_error"] else f"{r['t2o_s']:.2f}"
        dyn = f"failed: {cell(r['dyn_error'])}" if r["dyn_error"] else f"{r['dyn_s']:.2f} ({r['dyn_call_s']:.2f})"
        speedup = f"{r['speedup']:.1f}x" if r["speedup"] else "-"
        lines.append(
            f"| {r['model']} | {r['weights_mb']:.1f} | {cell(r['program'])} | {t2o} | {dyn} | {speedup} "
            f"| {two(r, 'rss_mb', '.0f')} | {two(r, 'nodes', 'd')} | {two(r, 'mb', '.1f')} "
            f"| {' / '.join(match(r[f'{e}_mismatches']) for e in EXPORTERS)} | {two(r, 'ort_ms', '.2f')} |")
    skipped = [r for r in rows if "skipped" in r]
    if skipped:
        lines += ["", "Not in the table (torch.export cannot capture them): "
                  + "; ".join(f"{r['model']} ({cell(r['skipped'])})" for r in skipped) + "."]
    return "\n".join(lines)


def versions():
    import onnx
    import onnxruntime
    import onnxscript

    return (f"torch {torch.__version__}, onnxscript {onnxscript.__version__}, onnx {onnx.__version__}, "
            f"onnxruntime {onnxruntime.__version__}")


def run(a):
    """bench.py --pt2: a.cli, a.models, a.repeat, a.opset, a.ort_runs, a.markdown, a.json."""
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in (a.models or MODELS).split(","):
            if not name:
                continue
            row = bench_program(name, a.cli, a.repeat, a.opset, work, a.ort_runs)
            if "skipped" not in row:
                print(f"{name}: torch2onnx {row['t2o_error'] and 'refused' or bench.fmt(row['t2o_s'], '.2f')}, "
                      f"dynamo {row['dyn_error'] and 'failed' or bench.fmt(row['dyn_s'], '.2f')} s", file=sys.stderr)
            rows.append(row)
    command = " ".join(["bench/bench.py"] + [arg if arg else "''" for arg in sys.argv[1:]])
    body = (f"{bench.PT2_HEADING}\n\nThis run: `{command}`, on this machine ({os.cpu_count()} cores; "
            f"{versions()}).\n\n" + pt2_table(rows, a.opset, a.repeat) + "\n")
    print(body)
    if a.markdown:
        bench.write_section(a.markdown, bench.PT2_HEADING, body)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"pt2": rows}, f, indent=1)


if __name__ == "__main__":
    sys.argv.insert(1, "--pt2")
    bench.main()
