"""Opsets 23 to 28 side by side (issue 45): which opsets each exporter writes correctly, and the node counts at
23 and 28, on the same models in one run.

    PYTHONPATH=build/python build/venv/bin/python bench/bench_opsets.py [--models silu_mlp,llama+cache]
        [--opsets 23,24,26,28] [--markdown docs/benchmarks.md]

Exporters: torch2onnx and torch.onnx, each with dynamo=False and dynamo=True, called in this process with the
opset asked for. A file counts as correct when the ONNX checker passes it (full check, strict shape inference), it
declares the opset asked for, and ONNX Runtime runs it and matches eager PyTorch on the example
(1e-4 * (1 + max |torch|)). A refused export (an error) is not correct.
"""
import argparse
import collections
import io
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "transformers"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import harness  # noqa: E402
from bench import OPSETS_HEADING as HEADING, write_section  # noqa: E402

EXPORTERS = ["t2o-ts", "t2o-dynamo", "onnx-ts", "onnx-dynamo"]
LABELS = {"t2o-ts": "torch2onnx TS", "t2o-dynamo": "torch2onnx dynamo", "onnx-ts": "torch.onnx TS",
          "onnx-dynamo": "torch.onnx dynamo"}


class SiluMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, x):
        return self.b(F.silu(self.a(x)))


class Cumprod(nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1)


class ViewInt32(nn.Module):
    def forward(self, x):
        return x.view(torch.int32)


class CausalGqa(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _plain(make):
    """(model, args, kwargs, dynamic_shapes, dynamic_axes, input_names) of a module without dynamic dims."""
    def build():
        model, args = make()
        return model.eval(), args, {}, None, None, None
    return build


def _corpus(name):
    def build():
        import corpus

        case = next(c for c in corpus.CASES if c.name == name)
        model, inputs, shapes, axes, names = case.make()
        args, kwargs = inputs(*corpus.SIZES[case.kind][0])
        return model, args, kwargs, shapes, axes, names
    return build


def _tv(name, size):
    def make():
        import torchvision

        torch.manual_seed(0)
        return getattr(torchvision.models, name)(), (torch.randn(1, 3, size, size),)
    return _plain(make)


def _groupnorm_cnn():
    from test_opsets_24_28 import GroupNormCnn

    torch.manual_seed(0)
    return GroupNormCnn(), (torch.randn(2, 3, 12, 12),)


MODELS = {
    "silu_mlp": _plain(lambda: (SiluMlp(), (torch.randn(4, 16),))),
    "cumprod": _plain(lambda: (Cumprod(), (torch.rand(3, 6) + 0.5,))),
    "view_int32": _plain(lambda: (ViewInt32(), (torch.randn(3, 4),))),
    "causal_gqa_sdpa": _plain(lambda: (CausalGqa(), (torch.randn(1, 8, 5, 16), torch.randn(1, 2, 5, 16),
                                                     torch.randn(1, 2, 5, 16)))),
    "llama+cache": _corpus("llama+cache"),
    "bert": _corpus("bert"),
    "resnet50": _tv("resnet50", 64),
    "vit_b_16": _tv("vit_b_16", 224),
    "swin_t": _tv("swin_t", 64),
    "groupnorm_cnn": _plain(_groupnorm_cnn),
}


def export(which, model, args, kwargs, shapes, axes, names, opset):
    import torch2onnx

    exporter = torch2onnx if which.startswith("t2o") else torch.onnx
    f = io.BytesIO()
    if which.endswith("-ts"):
        exporter.export(model, args + ((kwargs,) if kwargs else ()), f, dynamo=False, opset_version=opset,
                        input_names=names, dynamic_axes=axes)
        return f.getvalue()
    program = exporter.export(model, args, kwargs=kwargs, dynamo=True, opset_version=opset, dynamic_shapes=shapes)
    return program.model_proto.SerializeToString()


def verdict(data, opset, args, kwargs, expected):
    """(nodes, None) for a correct file, (nodes or None, why) otherwise."""
    proto = onnx.load_from_string(data)
    nodes = len(proto.graph.node)
    declared = {o.domain: o.version for o in proto.opset_import}.get("", 1)
    if declared != opset:
        return nodes, f"declares opset {declared}"
    try:
        onnx.checker.check_model(proto, full_check=True)
        onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    except Exception as e:
        return nodes, "checker: " + str(e).splitlines()[0][:60]
    try:
        session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        flat = harness.flatten(list(args) + list(kwargs.values()))
        out = session.run(None, {i.name: t.numpy() for i, t in zip(session.get_inputs(), flat)})
    except Exception as e:
        return nodes, "ONNX Runtime: " + str(e).splitlines()[0][:60]
    for o, e in zip(out, expected):
        e = e.numpy()
        if o.shape != e.shape or np.max(np.abs(o - e), initial=0) > 1e-4 * (1 + np.max(np.abs(e), initial=0)):
            return nodes, "differs from PyTorch"
    return nodes, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=None, help="names from MODELS (default: all)")
    p.add_argument("--opsets", default="23,24,26,28")
    p.add_argument("--markdown", default=None)
    a = p.parse_args()
    warnings.filterwarnings("ignore")
    opsets = [int(o) for o in a.opsets.split(",")]
    names = [m for m in MODELS if a.models is None or m in a.models.split(",")]
    rows = []
    for name in names:
        model, args, kwargs, shapes, axes, inames = MODELS[name]()
        with torch.no_grad():
            expected = harness.flatten(model(*args, **kwargs))
        row = {"model": name}
        # (the dynamo paths first: a trace may leave attributes behind that torch.export then fails on)
        for which in sorted(EXPORTERS, key=lambda w: w.endswith("-ts")):
            for opset in opsets:
                try:
                    with torch.no_grad():
                        data = export(which, model, args, kwargs, shapes, axes, inames, opset)
                    row[which, opset] = verdict(data, opset, args, kwargs, expected)
                except Exception as e:  # (a refusal: reported, the others still run)
                    row[which, opset] = (None, "refused: " + (str(e).splitlines() or [type(e).__name__])[0][:60])
                print(name, which, opset, row[which, opset], flush=True)
        rows.append(row)
    lo, hi = opsets[0], opsets[-1]
    lines = [HEADING, "",
             f"`bench/bench_opsets.py`: each model exported by each exporter at opsets {', '.join(map(str, opsets))} "
             "in one process. *Correct at* lists the opsets whose file passes the ONNX checker (full, strict shape "
             "inference), declares the opset asked for, and matches eager PyTorch in ONNX Runtime on the example; "
             f"*nodes {lo} / {hi}* counts the graph's nodes there (✗: written but not correct; -: refused).", "",
             "| model | " + " | ".join(f"{LABELS[w]} correct at" for w in EXPORTERS) + " | "
             + " | ".join(f"{LABELS[w]} nodes {lo} / {hi}" for w in EXPORTERS) + " |",
             "|---|" + "---|" * len(EXPORTERS) + "---:|" * len(EXPORTERS)]
    totals = collections.Counter()
    for r in rows:
        ok_cells, node_cells = [], []
        for w in EXPORTERS:
            good = [o for o in opsets if r[w, o][1] is None]
            totals[w] += len(good)
            ok_cells.append(" ".join(map(str, good)) or "none")

            def cell(o):
                n, why = r[w, o]
                return "-" if n is None else f"{n}" + ("" if why is None else " ✗")
            node_cells.append(f"{cell(lo)} / {cell(hi)}")
        lines.append(f"| {r['model']} | " + " | ".join(ok_cells) + " | " + " | ".join(node_cells) + " |")
    lines += ["", "Correct files of " + str(len(rows) * len(opsets)) + ": "
              + ", ".join(f"{LABELS[w]} {totals[w]}" for w in EXPORTERS) + ".", "", "Why the others are not:", ""]
    for r in rows:
        for w in EXPORTERS:
            whys = collections.OrderedDict()
            for o in opsets:
                if r[w, o][1] is not None:
                    whys.setdefault(r[w, o][1], []).append(str(o))
            for why, os_ in whys.items():
                lines.append(f"- {r['model']}, {LABELS[w]} at {', '.join(os_)}: {why}")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        write_section(a.markdown, HEADING, text)


if __name__ == "__main__":
    main()
