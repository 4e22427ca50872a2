"""torch2onnx.export vs torch.onnx.export called from Python in one process
(issue 39): seconds per call, side by side in one run.

    PYTHONPATH=build/python build/venv/bin/python bench/bench_inprocess.py [--models mlp,resnet18]
        [--repeat 3] [--first] [--markdown docs/benchmarks.md]

Later calls: in this process, one thread, each exporter warmed up once on the
model, then --repeat rounds of alternating calls (torch2onnx, torch.onnx
dynamo=False, torch.onnx dynamo=True, each writing to memory); the median.
First call (--first): each exporter's first export() in a fresh Python
process (the model built before the clock starts; imports the call does
itself are counted), one process per exporter and model.
"""
import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "transformers"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench import INPROCESS_HEADING as HEADING, write_section  # noqa: E402

EXPORTERS = ("t2o", "onnx-ts", "onnx-dynamo", "t2o-dynamo")
LABELS = {"t2o": "torch2onnx", "onnx-ts": "torch.onnx TS", "onnx-dynamo": "torch.onnx dynamo",
          "t2o-dynamo": "torch2onnx dynamo=True"}


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 128)
        self.b = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _conv(cin, cout, k=3, s=1):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, s, k // 2, bias=False), torch.nn.BatchNorm2d(cout),
                               torch.nn.SiLU())


class _C2f(torch.nn.Module):
    """YOLOv8's C2f: split, a chain of bottlenecks, concat of every stage."""

    def __init__(self, c, n=1):
        super().__init__()
        self.cv1 = _conv(c, c, 1)
        self.m = torch.nn.ModuleList(torch.nn.Sequential(_conv(c // 2, c // 2), _conv(c // 2, c // 2))
                                     for _ in range(n))
        self.cv2 = _conv(c // 2 * (2 + n), c, 1)

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class YoloLike(torch.nn.Module):
    """A YOLO-like CNN (Conv/BN/SiLU, C2f blocks, SPPF-like pooling, an upsampled
    neck and two heads), 320x320 input."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(_conv(3, 16, 3, 2), _conv(16, 32, 3, 2), _C2f(32), _conv(32, 64, 3, 2),
                                        _C2f(64, 2))
        self.down = torch.nn.Sequential(_conv(64, 128, 3, 2), _C2f(128, 2))
        self.pool = torch.nn.MaxPool2d(5, 1, 2)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.neck = _C2f(192)
        self.head1 = torch.nn.Conv2d(192, 84, 1)
        self.head2 = torch.nn.Conv2d(128, 84, 1)

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down(p3)
        p4 = p4 + self.pool(self.pool(p4))
        n3 = self.neck(torch.cat([self.up(p4), p3], 1))
        a, b = self.head1(n3), self.head2(p4)
        return torch.cat([a.flatten(2), b.flatten(2)], 2).sigmoid()


def _tv(name, size=224):
    import torchvision

    torch.manual_seed(0)
    return getattr(torchvision.models, name)().eval(), (torch.randn(1, 3, size, size),)


def _hf(case_name):
    import corpus

    case = next(c for c in corpus.CASES if c.name == case_name)
    model, inputs, _, _, names = case.make()
    args, kwargs = inputs(*corpus.SIZES[case.kind][0])
    # (positionally, in forward()'s order: torch.onnx's TorchScript exporter fails on these models' kwargs)
    return model, tuple(args) + tuple(kwargs.values()), {}, names


def _llama():
    import transformers as T

    torch.manual_seed(0)
    config = T.LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, use_cache=False)
    model = T.LlamaModel(config).eval()
    ids = torch.randint(0, 1000, (2, 16))
    return model, (ids, torch.ones(2, 16, dtype=torch.int64)), {}, None


MODELS = {
    "mlp": lambda: (MLP().eval(), (torch.randn(8, 64),)),
    "resnet18": lambda: _tv("resnet18"),
    "mobilenet_v3_small": lambda: _tv("mobilenet_v3_small"),
    "yolo-like": lambda: (YoloLike().eval(), (torch.randn(1, 3, 320, 320),)),
    "bert-2": lambda: _hf("bert"),
    "llama-2": _llama,
    "vgg16": lambda: _tv("vgg16"),
    "vit_b_16": lambda: _tv("vit_b_16"),
}


def build(name):
    made = MODELS[name]()
    if len(made) == 2:
        model, args = made
        return model, args, {}, None
    return made


def call(which, model, args, kwargs, names):
    """One export() to memory; its seconds."""
    import torch2onnx

    f = io.BytesIO()
    start = time.perf_counter()
    if which == "t2o":
        torch2onnx.export(model, args, f, kwargs=kwargs or None, input_names=names, dynamo=False)
    elif which == "onnx-ts":
        torch.onnx.export(model, args, f, kwargs=kwargs or None, input_names=names, dynamo=False)
    elif which == "t2o-dynamo":
        torch2onnx.export(model, args, kwargs=kwargs or None, dynamo=True)
    else:
        torch.onnx.export(model, args, kwargs=kwargs or None, dynamo=True, verbose=False)
    return time.perf_counter() - start


def trace_alone(model, args, kwargs):
    """Seconds of the JIT tracer alone on the model (torch.jit._get_trace_graph: what torch.onnx's
    TorchScript exporter traces with, no module tree or method graphs): the floor of an exporter
    that captures with torch.jit's tracer."""
    start = time.perf_counter()
    with torch.no_grad():
        torch.jit._get_trace_graph(model, tuple(args) + tuple(kwargs.values()))
    return time.perf_counter() - start


def later_calls(name, repeat, exporters):
    model, args, kwargs, names = build(name)
    times = {w: [] for w in exporters}
    traces = []
    failed = {}
    for w in exporters:  # warm-up
        try:
            call(w, model, args, kwargs, names)
        except Exception as e:  # reported in the table; the others still run
            failed[w] = f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
    trace_alone(model, args, kwargs)
    for _ in range(repeat):
        for w in exporters:
            if w not in failed:
                times[w].append(call(w, model, args, kwargs, names))
        traces.append(trace_alone(model, args, kwargs))
    out = {w: (statistics.median(times[w]) if w not in failed else failed[w]) for w in exporters}
    out["trace"] = statistics.median(traces)
    return out


def first_call(name, which):
    """Seconds of `which`'s first export() in a fresh process (-1 if it failed)."""
    code = (f"import sys, json, warnings; sys.argv = ['x']; warnings.filterwarnings('ignore'); "
            f"sys.path.insert(0, {os.path.join(ROOT, 'bench')!r}); import torch; torch.set_num_threads(1); "
            f"import bench_inprocess as b; m, a, k, n = b.build({name!r}); "
            f"print(json.dumps(b.call({which!r}, m, a, k, n)))")
    if which.startswith("t2o"):
        code = code.replace("import torch;", "import torch, torch2onnx;")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return -1.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--first", action="store_true", help="also each exporter's first call in a fresh process")
    p.add_argument("--exporters", default=",".join(EXPORTERS))
    p.add_argument("--markdown", default=None)
    a = p.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    exporters = a.exporters.split(",")
    rows = []
    for name in a.models.split(","):
        row = {"model": name, "later": later_calls(name, a.repeat, exporters)}
        if a.first:
            row["first"] = {w: first_call(name, w) for w in exporters}
        rows.append(row)
        print(json.dumps(row), flush=True)

    def cell(v):
        return f"{v:.3f}" if isinstance(v, float) and v >= 0 else "failed"

    def ratio(r, key, ours, theirs):
        v, w = r[key].get(ours), r[key].get(theirs)
        ok = isinstance(v, float) and isinstance(w, float) and v > 0 and w > 0
        return f"{w / v:.1f}x" if ok else ""

    lines = [HEADING, "",
             f"`bench/bench_inprocess.py`: each exporter's `export()` to memory, in one Python process on one thread; "
             f"later calls: the median of {a.repeat} alternating calls after one warm-up each"
             + ("; first call: each exporter's first `export()` in a fresh process" if a.first else "")
             + ". Ratios: torch.onnx's seconds over torch2onnx's (above 1: torch2onnx faster). Tracer alone: "
             "`torch.jit._get_trace_graph` on the model (the cheapest capture torch.jit's tracer gives: what "
             "torch.onnx's TorchScript exporter traces with), the floor of any exporter that traces with it; "
             "where it is above a fifth of torch.onnx's TS seconds, 5x is out of reach by tracing.", ""]
    for key in (["later", "first"] if a.first else ["later"]):
        lines += [f"**{'Later calls' if key == 'later' else 'First call in a fresh process'}**", "",
                  "| model | " + " | ".join(f"{LABELS[w]} s" for w in exporters)
                  + " | TS: torch.onnx / torch2onnx | dynamo: torch.onnx / torch2onnx |"
                  + (" tracer alone s | torch.onnx TS / tracer alone |" if key == "later" else ""),
                  "|---|" + "---:|" * (len(exporters) + 2 + (2 if key == "later" else 0))]
        for r in rows:
            line = (f"| {r['model']} | " + " | ".join(cell(r[key].get(w)) for w in exporters) + " | "
                    + ratio(r, key, "t2o", "onnx-ts") + " | " + ratio(r, key, "t2o-dynamo", "onnx-dynamo") + " |")
            if key == "later":
                line += f" {cell(r[key]['trace'])} | {ratio(r, key, 'trace', 'onnx-ts')} |"
            lines.append(line)
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        write_section(a.markdown, HEADING, text)


if __name__ == "__main__":
    main()
