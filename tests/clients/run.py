"""make test-clients: the programs that call torch.onnx.export for most
users, run as shipped and again with torch.onnx.export swapped for
torch2onnx.export (tests/clients/common.py says where and how).

    optimum      optimum-onnx's main_export on ~44 small model/task pairs
    ultralytics  YOLO(...).export(format="onnx") for 9 models x dynamic x simplify

Each client runs in one worker process (all its exports, both exporters, in
that process, so in-process state effects show); a case's failure is
recorded and the worker goes on. A worker that dies (crash, hard timeout)
is started again for the cases left, its running case recorded as failed.

Writes a Markdown table to build/clients/report.md (and prints it), the raw
results to build/clients/results.json and the workers' logs to
build/clients/<client>.log. Exits 1 if any torch2onnx export fails or fails
validation; torch.onnx failures are recorded, not fatal.

    python tests/clients/run.py [--client optimum|ultralytics] [--only SUBSTRING]
                                [--skip-torch-onnx | --skip-torch2onnx]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from cases import CLIENTS  # noqa: E402

WORKERS = {"optimum": "optimum_worker.py", "ultralytics": "ultralytics_worker.py"}
BUILDS = set()  # the torch2onnx extension(s) the workers imported


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--client", choices=sorted(CLIENTS), action="append",
                   help="run only this client (repeatable; default: all)")
    p.add_argument("--only", action="append", default=[],
                   help="run only the cases whose name contains SUBSTRING (repeatable)")
    p.add_argument("--skip-torch-onnx", action="store_true", help="skip the reference runs with torch.onnx")
    p.add_argument("--skip-torch2onnx", action="store_true", help="run the reference (torch.onnx) only")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "clients"), help="report folder")
    p.add_argument("--soft-timeout", type=float, default=240, help="per export, seconds")
    p.add_argument("--hard-timeout", type=float, default=420, help="per export: the worker is ended")
    return p.parse_args()


def child_env(tmp):
    env = dict(os.environ)
    env.update({
        # nothing from a hub, nothing installed at run time
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": os.path.join(tmp, "hf-home"),
        "YOLO_OFFLINE": "1", "YOLO_AUTOINSTALL": "False", "YOLO_CONFIG_DIR": os.path.join(tmp, "ultralytics-config"),
        "MPLCONFIGDIR": os.path.join(tmp, "matplotlib"),
        "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1",
    })
    env.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 2))  # ultralytics would set 1
    return env


def run_client(client, todo, args, tmp, log_path):
    """Runs the worker until every (case, mode) has a result; returns {(case, mode): result}."""
    results = {}
    res_path = os.path.join(tmp, f"{client}.results.jsonl")
    if os.path.exists(res_path):
        os.remove(res_path)
    left = list(todo)
    restarts = 0
    seen = 0  # lines of the results file read (kept across worker restarts)
    running = None
    with open(log_path, "w") as log:
        while left:
            cases_path = os.path.join(tmp, f"{client}.cases.json")
            with open(cases_path, "w") as f:
                json.dump(left, f)
            wtmp = os.path.join(tmp, client)
            os.makedirs(wtmp, exist_ok=True)
            cmd = [sys.executable, os.path.join(HERE, WORKERS[client]), "--cases", cases_path,
                   "--results", res_path, "--tmp", wtmp, "--soft-timeout", str(args.soft_timeout),
                   "--hard-timeout", str(args.hard_timeout)]
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            log_start = log.tell()
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=child_env(tmp), cwd=wtmp)
            running = None
            while True:
                done = proc.poll() is not None
                with open(res_path) if os.path.exists(res_path) else open(os.devnull) as f:
                    lines = f.readlines()
                for line in lines[seen:]:
                    if not line.endswith("\n"):
                        break
                    seen += 1
                    ev = json.loads(line)
                    if ev["event"] == "info":
                        if ev.get("torch2onnx"):
                            BUILDS.add(ev["torch2onnx"])
                        continue
                    key = (ev["case"], ev["mode"])
                    if ev["event"] == "start":
                        running = key
                    else:
                        running = None
                        results[key] = ev
                        print(status_line(client, ev), flush=True)
                if done:
                    break
                time.sleep(0.5)
            left = [k for k in left if tuple(k) not in results]
            if proc.returncode != 0 or left:
                if running is None and left:
                    running = tuple(left[0])
                if running is not None:
                    tail = log_since(log_path, log_start)
                    why = "hard timeout" if "Timeout (" in tail else f"worker died (exit {proc.returncode})"
                    ev = {"case": running[0], "mode": running[1], "ok": False,
                          "error": f"{why}; log: {tail_summary(tail)}"}
                    results[running] = ev
                    print(status_line(client, ev), flush=True)
                    left = [k for k in left if tuple(k) != running]
                restarts += 1
                if restarts > 20:
                    for k in left:
                        results[tuple(k)] = {"case": k[0], "mode": k[1], "ok": False, "error": "not run: too many worker restarts"}
                    break
    if os.path.exists(res_path):
        os.remove(res_path)
    return results


def log_since(path, offset):
    """What the worker wrote to its log since it started (the last 200 lines)."""
    with open(path, errors="replace") as f:
        f.seek(offset)
        return "".join(f.readlines()[-200:])


def tail_summary(tail):
    lines = [l.strip() for l in tail.splitlines() if l.strip()]
    keep = [l for l in lines if "Error" in l or "Fatal" in l or "Segmentation" in l or "Timeout (" in l or "Abort" in l]
    return " | ".join((keep or lines)[-3:])[:400]


def status_line(client, ev):
    if ev.get("ok"):
        d = ev.get("max_diff")
        return f"[{client}] {ev['case']:<50} {ev['mode']:<10} ok    diff {fmt_diff(d)}  {fmt_s(ev.get('export_seconds'))}"
    return f"[{client}] {ev['case']:<50} {ev['mode']:<10} FAIL  {str(ev.get('error'))[:200]}"


def fmt_diff(d):
    if d is None:
        return "-"
    if d != d:
        return "nan"
    return f"{d:.1e}"


def fmt_s(s):
    return "-" if s is None else f"{s:.2f} s"


def fmt_nodes(ev):
    nodes = ev.get("nodes")
    if not nodes:
        return "-"
    return "+".join("?" if n is None else str(n) for n in nodes)


def cell(ev, client):
    if ev is None:
        return ["", "", "", ""]
    if ev.get("ok"):
        status = "ok"
    else:
        status = "**FAIL**"
    diff = fmt_diff(ev.get("max_diff"))
    if client == "optimum" and ev.get("max_diff_other") is not None:
        diff += f" / {fmt_diff(ev.get('max_diff_other'))}"
    return [status, diff, fmt_s(ev.get("export_seconds")), fmt_nodes(ev)]


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def report(results_by_client, args, started):
    out = []
    out.append("# torch2onnx under its clients (make test-clients)\n")
    out.append(f"Run {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, "
               f"{time.time() - started:.0f} s. Versions: {versions()}\n")
    out.append("torch2onnx: " + ("; ".join(sorted(BUILDS)) if BUILDS else "not imported") + "\n")
    for client, results in results_by_client.items():
        cases = [c[0] for c in CLIENTS[client] if any(k[0] == c[0] for k in results)]
        if client == "optimum":
            out.append("## optimum-onnx `main_export`\n")
            out.append("diff: optimum's validation, max |PyTorch - ONNX Runtime| on its dummy inputs "
                       "(batch 2, sequence 16) / again at batch 3, sequence 9; atol is optimum's "
                       "(1e-5 unless the model's OnnxConfig says otherwise). s: the export calls. "
                       "nodes: each ONNX file the export calls wrote.\n")
        else:
            out.append("## Ultralytics `YOLO(...).export(format=\"onnx\")`\n")
            out.append("diff: max |PyTorch - ONNX Runtime| over the outputs, random images at batch 1 "
                       "(dynamic: also batch 2 and +32 px), bound 1e-6 + 1e-4 * max|PyTorch| (RT-DETR's "
                       "top-300 rows compared as a set); "
                       "then `YOLO(file).predict(image)`. s: the export call. nodes: the file "
                       "torch.onnx.export wrote (before onnxslim).\n")
        out.append("| case | torch.onnx | diff | s | nodes | torch2onnx | diff | s | nodes |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for case in cases:
            ref = results.get((case, "torch.onnx"))
            t2o = results.get((case, "torch2onnx"))
            out.append("| " + " | ".join([md_escape(case)] + cell(ref, client) + cell(t2o, client)) + " |")
        n = {m: [results[k] for k in results if k[1] == m] for m in ("torch.onnx", "torch2onnx")}
        out.append("")
        for m in ("torch.onnx", "torch2onnx"):
            if n[m]:
                ok = sum(1 for ev in n[m] if ev.get("ok"))
                out.append(f"- {m}: {ok} of {len(n[m])} ok")
        out.append("")
        fails = [(case, mode, results[(case, mode)]) for case in cases for mode in ("torch.onnx", "torch2onnx")
                 if (case, mode) in results and not results[(case, mode)].get("ok")]
        if fails:
            out.append("### Failures\n")
            for case, mode, ev in fails:
                out.append(f"- `{case}` [{mode}]: {md_escape(ev.get('error'))[:1200]}")
            out.append("")
    return "\n".join(out) + "\n"


def versions():
    try:
        from importlib.metadata import version
        names = ["torch", "onnx", "onnxruntime", "optimum-onnx", "optimum", "transformers", "ultralytics", "onnxslim"]
        return ", ".join(f"{n} {version(n)}" for n in names)
    except Exception as e:
        return f"? ({e})"


def main():
    args = parse_args()
    started = time.time()
    clients = args.client or list(CLIENTS)
    os.makedirs(args.out, exist_ok=True)
    tmp = os.path.join(args.out, "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    modes = tuple(m for m, skip in (("torch.onnx", args.skip_torch_onnx), ("torch2onnx", args.skip_torch2onnx))
                  if not skip)
    results_by_client = {}
    try:
        for client in clients:
            todo = [[c[0], m] for c in CLIENTS[client]
                    if not args.only or any(s in c[0] for s in args.only) for m in modes]
            if not todo:
                continue
            print(f"== {client}: {len(todo)} exports (log: {os.path.join(args.out, client + '.log')})", flush=True)
            results_by_client[client] = run_client(client, todo, args, tmp, os.path.join(args.out, f"{client}.log"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = report(results_by_client, args, started)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({c: [dict(ev, case=k[0], mode=k[1]) for k, ev in r.items()] for c, r in results_by_client.items()},
                  f, indent=1, default=str)
    print()
    print(text)
    failed = [(c, k) for c, r in results_by_client.items() for k, ev in r.items()
              if k[1] == "torch2onnx" and not ev.get("ok")]
    total = sum(1 for r in results_by_client.values() for k in r if k[1] == "torch2onnx")
    print(f"test-clients: {total - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
