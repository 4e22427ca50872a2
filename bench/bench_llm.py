"""A large decoder (transformers' Llama, random weights, no cache, dynamic batch
and sequence, opset 20, external data), exported by each exporter in a process
of its own: the export() call's seconds and the process's peak RSS during it,
against the RSS of the model alone (issue 38's "big models" figures).

    build/venv/bin/python bench/bench_llm.py [--hidden 2048 --layers 14 --vocab 32000]
                                             [--exporters t2o-ts,t2o-dynamo,onnx-ts,onnx-dynamo]
                                             [--markdown docs/benchmarks.md]

Each child builds the model from the same config and seed, records its RSS,
resets the kernel's peak-RSS mark (/proc/self/clear_refs), calls export(),
and reports the seconds, the peak (VmHWM) and the size of what it wrote
(the .onnx and its external data files). The defaults give ~0.85 B
parameters (3.4 GB of fp32 weights): expect several minutes per exporter.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

EXPORTERS = {
    "t2o-ts": "torch2onnx `dynamo=False`",
    "t2o-dynamo": "torch2onnx `dynamo=True`",
    "onnx-ts": "torch.onnx `dynamo=False`",
    "onnx-dynamo": "torch.onnx `dynamo=True`",
}


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(a):
    """One exporter, in this process: prints one JSON line."""
    import time

    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.hidden * 11 // 4,
                                      num_hidden_layers=a.layers, num_attention_heads=a.hidden // 128,
                                      num_key_value_heads=a.hidden // 128, max_position_embeddings=2048,
                                      use_cache=False)
    config._attn_implementation = "sdpa"
    model = transformers.LlamaForCausalLM(config).eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, a.vocab, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    path = os.path.join(a.out, "model.onnx")
    kw = dict(input_names=["input_ids", "attention_mask"], output_names=["logits"], opset_version=20)
    if a.exporter.endswith("dynamo"):
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
        kw["dynamic_shapes"] = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    else:
        kw["dynamic_axes"] = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    if a.exporter.startswith("t2o"):
        import torch2onnx as exporter
        kw["external_data"] = True
    else:
        exporter = torch.onnx
        if a.exporter == "onnx-dynamo":
            kw["external_data"] = True
    model_rss = status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # the peak from here on
        f.write("5")
    start = time.perf_counter()
    with torch.no_grad():
        exporter.export(model, (ids, mask), path, dynamo=a.exporter.endswith("dynamo"), **kw)
    seconds = time.perf_counter() - start
    peak = status_kb("VmHWM")
    files = os.listdir(a.out)
    written = sum(os.path.getsize(os.path.join(a.out, n)) for n in files)
    # The floor every exporter shares: writing the weights' bytes alone, into
    # the same directory, as one file (what a disk takes for them, now).
    floor_path = os.path.join(a.out, "weights.bin")
    start = time.perf_counter()
    with open(floor_path, "wb") as f:
        for p in model.parameters():
            f.write(memoryview(p.detach().contiguous().numpy()).cast("B"))
    floor = time.perf_counter() - start
    os.remove(floor_path)
    print(json.dumps({"exporter": a.exporter, "params": params, "seconds": seconds, "write_floor": floor,
                      "model_rss_kb": model_rss,
                      "peak_kb": peak, "files": len(files), "written": written,
                      "weights_bytes": sum(p.numel() * p.element_size() for p in model.parameters())}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=14)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--exporters", default=",".join(EXPORTERS))
    p.add_argument("--markdown", default=None)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        a.exporter = a.child
        child(a)
        return
    from bench import LLM_HEADING as HEADING, write_section  # (the parent only: children measure their RSS)

    rows = []
    for name in a.exporters.split(","):
        work = tempfile.mkdtemp(prefix="t2o-bench-llm-")
        try:
            cmd = [sys.executable, __file__, "--child", name, "--out", work, "--hidden", str(a.hidden),
                   "--layers", str(a.layers), "--vocab", str(a.vocab)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            line = next((l for l in r.stdout.splitlines() if l.startswith("{")), None)
            if r.returncode != 0 or not line:
                err = (r.stderr.strip().splitlines() or ["?"])[-1]
                rows.append({"exporter": name, "error": err[:200]})
            else:
                rows.append(json.loads(line))
            print(json.dumps(rows[-1]), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    done = [r for r in rows if "error" not in r]
    if not done:
        sys.exit("every exporter failed")
    first = done[0]
    gb = lambda kb: f"{kb / 2**20:.2f} GB"  # noqa: E731
    lines = [HEADING, "",
             f"transformers' Llama from a config (hidden {a.hidden}, {a.layers} layers, vocabulary {a.vocab}: "
             f"{first['params'] / 1e9:.2f} B parameters, {first['weights_bytes'] / 2**30:.2f} GiB of fp32 weights), "
             "random weights, no cache, dynamic batch and sequence, opset 20, external data; each exporter in a "
             "process of its own (`bench/bench_llm.py`). Peak: the process's peak RSS during the `export()` call; "
             "over the model: that peak less the RSS of the model alone, in units of its weights. Writing the "
             "weights alone: the seconds the same process then takes to write the weights' bytes into one file "
             "beside the export (the disk's floor for every exporter).", "",
             "| exporter | `export()` s | writing the weights alone s | peak RSS | over the model | files written |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        label = EXPORTERS.get(r["exporter"], r["exporter"])
        if "error" in r:
            lines.append(f"| {label} | failed: {r['error']} | | | | |")
            continue
        over = (r["peak_kb"] - r["model_rss_kb"]) * 1024 / r["weights_bytes"]
        lines.append(f"| {label} | {r['seconds']:.1f} | {r['write_floor']:.1f} | {gb(r['peak_kb'])} | {over:+.2f}× "
                     f"| {r['files']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        write_section(a.markdown, HEADING, text)


if __name__ == "__main__":
    main()
