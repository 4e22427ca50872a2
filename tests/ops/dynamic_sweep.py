"""Every operator case exported with all of its input dims dynamic, then run
in ONNX Runtime at other sizes and compared with PyTorch there.

A lowering that bakes an example's size into the graph (a loop unrolled to
the example's length, a constant shaped like the example) exports fine and
matches on the example, and is wrong at any other size. With every dim
dynamic it must either be right at the new sizes or refuse the export with
a message naming dynamic_axes; anything else is a silently wrong model.

New sizes: every dim > 1 grows by 3 (dims of 1 and 0 keep their size, so
broadcasting and empty cases stay what they were); the new values are drawn
from the example's own values (so domains hold: positive, integers in range,
bools). A case PyTorch rejects at the new sizes is skipped (sizes that must
relate differently, e.g. n and 2n).

    python dynamic_sweep.py [--axes=all|first] [--sizes=grow|one|from_one] [family ...]
                                                  # all families by default

prints one line per case that is wrong, a summary, exit 1 if any is.
test_dynamic_sweep.py runs it over every family.
"""
import copy
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import signal
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402
import optest  # noqa: E402

GROWTH = 3
CHILD_TIMEOUT_S = 60
# One thread: the PyTorch runs happen in forked children, and a fork of a
# process with an intra-op thread pool can deadlock in the child.
torch.set_num_threads(1)
# "all": every dim of every input dynamic; "first": dim 0 only (a batch axis),
# the other dims keep the example's sizes.
MODE = "all"
# How the dynamic dims change: "grow" (every dim > 1 grows by GROWTH),
# "one" (every dim > 1 becomes 1: PyTorch's run-time tests of a size being 1
# -- squeeze, broadcasting -- must not keep the example's answer), "from_one"
# (every dim of 1 becomes 1 + GROWTH, the other way round).
SIZES = "grow"
# Cases whose inputs carry invariants values drawn at random break (sorted
# boundaries, LAPACK pivots, factorizations): PyTorch's own result at the
# grown sizes means nothing there. Matched as name prefixes.
INVARIANT_INPUTS = ("searchsorted", "bucketize", "lu_solve", "lu_unpack", "ldl_solve", "cholesky_solve",
                    "cholesky_inverse", "ormqr", "householder_product", "orgqr",
                    "embedding_bag",  # offsets: sorted
                    "native_batch_norm",  # (PyTorch's kernel does not check the channel count against the weight)
                    "reshape_alias",  # (a view by strides: PyTorch does not check the element count)
                    "topk_int", "kthvalue_int",  # integer ties: equal values' order is unspecified
                    "pow_half",
                    "nms", "batched_nms",  # boxes: (x1, y1) below (x2, y2)
                    "cholesky",  # symmetric positive definite matrices
                    # Known limit: chunk of a dynamic dim returned as the list itself: the
                    # ONNX graph has the example's number of pieces as outputs (where the
                    # pieces are unpacked, as traces do, PyTorch fixes that number too).
                    "chunk_fewer")  # float16 values drawn anew: float16's rounding exceeds the float32 tolerance
# At sizes of 1 (SIZES "one", "from_one"), inputs whose values or shapes
# must fit another input's sizes no longer do (indices drawn for a longer
# axis, offsets, weight_norm's g shaped by v's dim), and what PyTorch returns
# there is no reference (its kernels do not check them): skipped there.
SIZE_ONE_INVALID = ("take_along_dim", "segment_reduce", "weight_norm",
                    "dropout_train",  # (a rate measured on one element)
                    # a window that covers only padding: PyTorch's -inf, ONNX Runtime's lowest float
                    "max_pool2d_dilation_ceil")
# Known run-time rules kept at the example's answer, each warned at export
# (docs/runtime_rules.md): skipped in the sizes that show them.
SIZE_ONE_KNOWN = ("write_into_contiguous_copy",)  # contiguous() of x.t() is a view where a dim is 1
# Families with nothing to sweep (no tensor inputs whose size matters) or
# whose cases are sweeps of their own.
SKIP_FAMILIES = {"test_coverage", "test_dynamic_axes", "test_dynamic_sweep", "test_runner_sweep"}
DYNAMIC_REFUSAL = "dynamic"  # what a refusal's message must mention


def families():
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.startswith("test_") and f.endswith(".py") and f[:-3] not in SKIP_FAMILIES)


def grown(value, gen):
    """The args at grown sizes, values drawn from the example's."""
    if isinstance(value, torch.Tensor):
        if value.is_quantized or value.is_complex() or value.dim() == 0:
            return value.clone()
        sizes = [new_size(s) if MODE == "all" or d == 0 else s for d, s in enumerate(value.shape)]
        flat = value.reshape(-1)
        if flat.numel() == 0:
            return torch.zeros(sizes, dtype=value.dtype)
        n = int(np.prod(sizes)) if sizes else 1
        finite = flat[torch.isfinite(flat)] if value.is_floating_point() else flat
        if value.is_floating_point() and finite.numel() > 1 and finite.min() < finite.max():
            # (continuous values in the example's range: no ties for sorts to order differently)
            lo, hi = float(finite.min()), float(finite.max())
            return torch.from_numpy(gen.uniform(lo, hi, size=n)).to(value.dtype).reshape(sizes)
        idx = torch.from_numpy(gen.integers(0, flat.numel(), size=n))
        return flat[idx].reshape(sizes).clone()
    if isinstance(value, tuple):
        return tuple(grown(v, gen) for v in value)
    if isinstance(value, list):
        return [grown(v, gen) for v in value]
    return value


def new_size(s):
    if SIZES == "grow":
        return s + GROWTH if s > 1 else s
    if SIZES == "one":
        return 1 if s > 1 else s
    return s + GROWTH if s == 1 else s


def pytorch_isolated(runs, workdir):
    """For each (module, model_path, args) of runs, the module's flat outputs
    on args, eager and from the TorchScript model that was exported (a trace
    fixes what the example decided, e.g. how many pieces a chunk makes; eager
    PyTorch promotes Python scalars its own way): the list of those that ran,
    or None when eager PyTorch rejects the args. Run in forked children, one
    for the whole list (a fork of this process costs ~30 ms, as much as the
    runs): values drawn at random may be invalid (LAPACK pivots) and crash
    PyTorch's kernels, or hang; a child that dies or overruns
    CHILD_TIMEOUT_S on a run leaves None for it and the next child goes on
    from the run after."""
    paths = [os.path.join(workdir, f"expected_{k}.pt") for k in range(len(runs))]
    results = [None] * len(runs)
    start = 0
    while start < len(runs):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for k in range(start, len(runs)):
                    module, model_path, args = runs[k]
                    signal.alarm(CHILD_TIMEOUT_S)  # (SIGALRM's default action ends a run that hangs)
                    with torch.no_grad():
                        try:
                            torch.manual_seed(0)
                            out = [harness.flatten(module.eval()(*copy.deepcopy(args)), numbers=True)]
                        except Exception:
                            out = None
                        if out is not None:
                            try:
                                torch.manual_seed(0)
                                out.append(harness.flatten(torch.jit.load(model_path)(*copy.deepcopy(args)),
                                                           numbers=True))
                            except Exception:
                                pass
                    signal.alarm(0)
                    torch.save(out, paths[k] + ".part")
                    os.rename(paths[k] + ".part", paths[k])  # (a run is done once its file is there)
                code = 0
            finally:
                os._exit(code)
        deadline = time.monotonic() + (CHILD_TIMEOUT_S + 5) * (len(runs) - start)
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        while start < len(runs) and os.path.exists(paths[start]):
            results[start] = torch.load(paths[start])
            os.remove(paths[start])
            start += 1
        start += 1  # (the run the child died on, if any: None)
    return results


def export_in_process(case, job):
    """A batch job line run through torch2onnx.export, reported as the batch does."""
    import torch2onnx
    words = job.split()
    out, opset = words[words.index("-o") + 1], int(words[words.index("--opset") + 1])
    names = words[words.index("--input-names") + 1].split(",")
    axes = json.loads(words[words.index("--dynamic-axes") + 1])
    try:
        torch2onnx.export(optest.to_torchscript(case), copy.deepcopy(case.args), out, opset_version=opset,
                          input_names=names, dynamic_axes=axes)
    except Exception as e:
        return f"ERROR {e}".replace("\n", " ")
    import onnx
    graph_inputs = {i.name for i in onnx.load(out, load_external_data=False).graph.input}
    unused = [str(k) for k, n in enumerate(names) if n not in graph_inputs]
    return "OK" + (" unused=" + ",".join(unused) if unused else "")


def dynamic_flags(case):
    flat = harness.flatten(case.args, numbers=case.script)
    names = [f"i{k}" for k in range(len(flat))]
    axes = {n: list(range(t.dim() if MODE == "all" else 1)) for n, t in zip(names, flat)
            if isinstance(t, torch.Tensor) and t.dim() > 0 and not t.is_quantized and not t.is_complex()}
    if not axes:
        return None
    return ["--input-names", ",".join(names), "--dynamic-axes", json.dumps(axes, separators=(",", ":"))]


def sweep(family, workdir):
    """(case name, verdict, detail) for every case of a family."""
    mod = importlib.import_module(family)
    cases = [c for c in getattr(mod, "CASES", []) if c.torchscript and c.inputs is None and c.check == "values"]
    jobs, pending, verdicts = [], [], []
    for case in cases:
        flags = dynamic_flags(case)
        if case.name.startswith(INVARIANT_INPUTS) or (SIZES != "grow" and case.name.startswith(SIZE_ONE_INVALID)):
            verdicts.append((case.name, "skip", "inputs with invariants"))
            continue
        if SIZES != "grow" and case.name.startswith(SIZE_ONE_KNOWN):
            verdicts.append((case.name, "skip", "a run-time rule kept at the example's answer, warned at export"))
            continue
        opsets = [o for o in case.opsets if o not in case.error_below]
        if flags is None or not opsets:
            continue
        d = os.path.join(workdir, family, case.name)
        if os.environ.get("SWEEP_TRACE"):
            print("case", case.name, flush=True)
        os.makedirs(d, exist_ok=True)
        try:
            torch.manual_seed(0)
            with torch.no_grad():
                expected = harness.flatten(case.module.eval()(*copy.deepcopy(case.args)), numbers=True)
            gen = np.random.default_rng(0)
            big = grown(case.args, gen)
            pt, args_pt = os.path.join(d, "model.pt"), os.path.join(d, "args.pt")
            optest.to_torchscript(case).save(pt)
            torch.save(case.args, args_pt)
        except Exception as e:
            verdicts.append((case.name, "skip", f"case not built: {e}"))
            continue
        out = os.path.join(d, "dynamic.onnx")
        jobs.append(" ".join([pt, "--args", args_pt, "-o", out, "--opset", str(opsets[-1]), *case.extra, *flags]))
        pending.append((case, out, expected, big, pt))
    if not jobs:
        return drop_passed(workdir, family, verdicts)
    # (PyTorch at the new sizes, for every case in one forked child)
    bigs = pytorch_isolated([(case.module, pt, big) for case, _, _, big, pt in pending],
                            os.path.join(workdir, family))
    pending = [(case, out, expected, big, big_expected)
               for (case, out, expected, big, _), big_expected in zip(pending, bigs)]
    if "in_process=True" in open(mod.__file__).read():
        # (operators whose library only a Python process has loaded: the Python API exports them)
        lines = [export_in_process(case, job) for (case, *_), job in zip(pending, jobs)]
    else:
        job_file = os.path.join(workdir, family + ".jobs")
        with open(job_file, "w") as f:
            f.write("\n".join(jobs) + "\n")
        proc = subprocess.run([harness.CLI, "batch", job_file], capture_output=True, text=True,
                              timeout=optest.BATCH_TIMEOUT_S)
        lines = proc.stdout.splitlines()
        if len(lines) != len(jobs):
            return verdicts + [(c.name, "BAD", f"batch crashed: {proc.stderr[-500:]}") for c, *_ in pending]
    for line, (case, out, expected, big, big_expected) in zip(lines, pending):
        if not line.startswith("OK"):
            # (an export error that does not say why dynamic axes matter is an "error")
            verdicts.append((case.name, "refused" if DYNAMIC_REFUSAL in line else "error", line))
            continue
        unused = {int(k) for k in line.split(" unused=")[1].split(",")} if " unused=" in line else set()
        runs = []
        for label, args, want in (("example", case.args, [expected]), ("grown", big, big_expected)):
            inputs = [optest.onnx_input(t) for k, t in enumerate(harness.flatten(args, numbers=case.script))
                      if k not in unused]
            runs.append((label, inputs, want))
        verdicts.append((case.name, *judge_isolated(out, runs, case.atol_scale)))
    return drop_passed(workdir, family, verdicts)


def drop_passed(workdir, family, verdicts):
    """Removes the files of the family's cases that are neither BAD nor an
    error as soon as judged: only those stay for a look (issue 46; a sweep
    of every family otherwise holds every case's models at once). Returns
    the verdicts."""
    keep = {name for name, verdict, _ in verdicts if verdict in ("BAD", "error")}
    root = os.path.join(workdir, family)
    for name in os.listdir(root) if os.path.isdir(root) else []:
        if name not in keep:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return verdicts


_pool = None


def judge_isolated(out, runs, atol_scale):
    """judge() in a worker process: ONNX Runtime may crash on a model whose
    baked sizes disagree with its inputs (a crash is a BAD verdict)."""
    global _pool
    import concurrent.futures
    import multiprocessing
    if _pool is None:
        _pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return _pool.submit(judge, out, runs, atol_scale).result()
    except concurrent.futures.process.BrokenProcessPool:
        _pool = None
        return "BAD", "ONNX Runtime crashed"


def judge(out, runs, atol_scale):
    for label, inputs, want in runs:
        if want is None:
            return "ok-example", "PyTorch rejects the grown sizes"
        try:
            actual, _ = harness.run_ort(out, [np.asarray(a, order="C") for a in inputs])
        except AssertionError as e:
            if optest.ort_lacks_kernel(str(e)):
                return "skip", "ONNX Runtime has no kernel at this opset"
            if label == "grown" and len(want) == 1:
                # (only eager PyTorch ran: the exported TorchScript fails at these sizes too, e.g. a trace
                # unpacking the example's number of pieces; the ONNX model refuses them at run time)
                return "refused", "fails at the grown sizes, as the traced model does"
            return "BAD", f"{label} sizes: ONNX Runtime fails: {str(e)[:300]}"
        if label == "grown" and len(want) == 1 and len(actual) != len(want[0]):
            # (only eager PyTorch ran, and it returns another number of values: the traced model, which
            # unpacks the example's number, fails at these sizes; ONNX Runtime's extra value is no answer
            # a PyTorch caller of the trace could get)
            return "refused", "another number of outputs where the traced model fails"
        errors = []
        for w in want:  # (right when it matches eager PyTorch or the exported TorchScript)
            try:
                harness.compare(w, actual, rtol_scale=atol_scale)
                break
            except AssertionError as e:
                errors.append(str(e)[:300])
        else:
            return "BAD", f"{label} sizes: {errors[0]}"
    return "ok", ""


def main(argv):
    global MODE, SIZES
    while argv and argv[0].startswith("--"):
        key, value = argv.pop(0)[2:].split("=", 1)
        if key == "axes":
            MODE = value
            assert MODE in ("all", "first"), MODE
        else:
            assert key == "sizes" and value in ("grow", "one", "from_one"), key
            SIZES = value
    fams = [a if a.startswith("test_") else "test_" + a for a in argv] or families()
    bad = 0
    counts = {}
    with tempfile.TemporaryDirectory() as workdir:
        for fam in fams:
            for name, verdict, detail in sweep(fam, workdir):
                counts[verdict] = counts.get(verdict, 0) + 1
                if verdict in ("BAD", "error") or os.environ.get("SWEEP_VERBOSE"):
                    print(f"{fam}:{name}: {verdict}: {detail}", flush=True)
                bad += verdict in ("BAD", "error")
    print("summary:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
