"""Every operator case that runs through torch.export, exported from its .pt2
program with `--verify`: torch2onnx's own runner (src/verify/program_runner.cpp)
runs the program in LibTorch on the sample inputs torch.export.save stored, ONNX
Runtime runs the export, and they must agree. The op tests have already checked
each export against PyTorch itself, so a disagreement here is the runner's
(an operator it calls with the wrong arguments, a list of the wrong type, a
number where the schema takes a tensor ...).
    python runner_sweep.py [family ...]   # all families by default
prints one line per case that fails, a summary, exit 1 if any does.
test_runner_sweep.py runs it over every family.
"""
import copy
import logging
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402
import optest  # noqa: E402

logging.disable(logging.WARNING)  # (torch.export's notes on each capture)

# What the op tests accept that verification cannot: ONNX Runtime without a
# kernel for the opset 23 form of an operator.
ORT_LACKS = ("NOT_IMPLEMENTED", "Could not find an implementation")
# Cases whose program's metadata disagrees with PyTorch's own kernel: the
# export follows the program (a 1-D input's loss with reduction="none" is
# [1] there), the runner the kernel (0-d), as ep.module() does.
META_DIFFERS = ("multilabel_margin_1d", "multi_margin_1d_scalar_target")
# Programs the CLI refuses on purpose, each with what its message must say. Any other refusal is BAD: the family's
# case exports (a refusal here was counted as one of many "refused" and hid valid programs refused).
KNOWN_REFUSALS = {
    # a write into an element of chunk's result: the CLI asks for the functional program (Python retries with it)
    "chunk_piece": "save the functional program instead",
    # aten::sym_storage_offset (a view's offset, read by run-time asserts only here): not converted yet
    "tensor_split_tensor": "aten::sym_storage_offset",
}


def static_flags(extra):
    """The case's CLI flags without --dynamic-axes: the program was captured with static shapes (a dim it has
    static cannot be named dynamic: a usage error, tested in tests/cli/test_pt2.py)."""
    out, skip = [], False
    for flag in extra:
        if skip:
            skip = False
        elif flag == "--dynamic-axes":
            skip = True
        else:
            out.append(flag)
    return out


def families():
    return sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py")
                  and f not in ("test_dynamic_sweep.py", "test_runner_sweep.py", "test_coverage.py"))


def operator_libraries(family):
    """The environment of the CLI: for torchvision's operators, their library
    preloaded (the runner calls what this process registers, as a user would)."""
    env = dict(os.environ)
    if family == "test_torchvision":
        import glob

        import torchvision

        libs = glob.glob(os.path.join(os.path.dirname(torchvision.__file__), "_C*.so"))
        if libs:
            torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
            env["LD_PRELOAD"] = libs[0]
            env["LD_LIBRARY_PATH"] = torch_lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    return env


def sweep(family, workdir):
    """(case name, verdict, detail) for each pt2 case of the family: verdict ok,
    refused (one of KNOWN_REFUSALS, with its message), ort lacks a kernel, or BAD (a wrong model, or any other
    refusal)."""
    try:
        mod = importlib.import_module(family)
    except BaseException as e:  # noqa: BLE001 (pytest.importorskip: the family needs what is not here)
        if type(e).__name__ != "Skipped":
            raise
        return []
    # every case torch.export may capture (not only those the family runs through the .pt2 frontend)
    cases = [c for c in getattr(mod, "CASES", []) if c.pt2 is not False and c.check == "values" and c.inputs is None]
    jobs, keys = [], []
    for case in cases:
        d = os.path.join(workdir, family, case.name)
        os.makedirs(d, exist_ok=True)
        program = os.path.join(d, "model.pt2")
        try:
            torch.manual_seed(0)
            with torch.no_grad():
                ep = torch.export.export(case.module.eval(), copy.deepcopy(case.args))
            torch.export.save(ep, program)
            with torch.no_grad():
                ep.module()(*copy.deepcopy(case.args))
        except Exception:  # noqa: BLE001 (torch.export cannot capture it, or its program rejects its own example)
            continue
        if case.name in META_DIFFERS:
            continue
        # (operators defined in Python, as transformers' torch.library.custom_op: the CLI's runner has no Python)
        if any(isinstance(n.target, torch._ops.OpOverload) and n.target.namespace not in ("aten", "prims", "torchvision")
               for n in ep.graph.nodes):
            continue
        if not case.opsets:
            continue
        opset = 18 if 18 in case.opsets else case.opsets[-1]
        jobs.append(" ".join([program, "-o", os.path.join(d, "out.onnx"), "--opset", str(opset), *static_flags(case.extra),
                              "--verify", "--rtol", str(case.atol_scale)]))  # (the op tests' tolerance)
        keys.append(case.name)
    if not jobs:
        return []
    job_file = os.path.join(workdir, family + "_jobs.txt")
    with open(job_file, "w") as f:
        f.write("\n".join(jobs) + "\n")
    proc = subprocess.run([harness.CLI, "batch", job_file], capture_output=True, text=True, timeout=1500,
                          env=operator_libraries(family))
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("OK ", "ERROR "))]
    if len(lines) != len(jobs):
        return [("(batch)", "BAD", f"torch2onnx batch ended early (exit {proc.returncode}): {proc.stderr[-2000:]}")]
    out = []
    for name, line in zip(keys, lines):
        if line.startswith("OK "):
            out.append((name, "ok", ""))
        elif "verification failed" in line or "running the program" in line:
            out.append((name, "BAD", line))
        elif any(s in line for s in ORT_LACKS):
            out.append((name, "ort lacks a kernel", line))
        elif name in KNOWN_REFUSALS and KNOWN_REFUSALS[name] in line:
            out.append((name, "refused", line))
        else:
            out.append((name, "BAD", line))
    # Only the BAD cases' programs and models stay for a look (issue 46).
    keep = {name for name, verdict, _ in out if verdict == "BAD"}
    root = os.path.join(workdir, family)
    for name in os.listdir(root):
        if name not in keep:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return out


def main(argv):
    fams = [a if a.startswith("test_") else "test_" + a for a in argv] or families()
    counts, bad = {}, 0
    with tempfile.TemporaryDirectory() as workdir:
        for fam in fams:
            for name, verdict, detail in sweep(fam, workdir):
                counts[verdict] = counts.get(verdict, 0) + 1
                if verdict == "BAD" or os.environ.get("SWEEP_VERBOSE"):
                    print(f"{fam}:{name}: {verdict}: {detail[:600]}", flush=True)
                bad += verdict == "BAD"
    print("summary:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
