"""Operator tests: small modules exported at several opsets and compared with
PyTorch in ONNX Runtime.

A family test file (tests/ops/test_<family>.py) lists its cases and hands
them to this module:

    CASES = [
        Case("relu", lambda x: torch.relu(x), (randn(2, 3),)),
        Case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), (randn(4),), opsets=(9, 17)),
        Case("cumsum", lambda x: x.cumsum(1), (randn(2, 5),), min_opset=11),
    ]
    results = optest.results_fixture(CASES)
    test_case = optest.case_test(CASES)

Each (case, opset) is one pytest test. All exports of a file run in one
`torch2onnx batch` process and ONNX Runtime runs in the test process, so
hundreds of cases take seconds.
"""
import copy
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

# (18, 23 and 28 only where the CLI exports them: not on the 1.13 build)
DEFAULT_OPSETS = (9, 11, 13, 17, 18, 23, 28)
BATCH_TIMEOUT_S = 900


Lambda = harness.Lambda  # (the family files use optest.Lambda)


class Case:
    """One module and its example args.

    opsets: opsets to test (default 9, 11, 13, 17, 18, 23, 28), restricted to >=
        min_opset and to what the CLI exports.
    script: export torch.jit.script(module) instead of a trace.
    error_below: {opset: text} exports at these opsets must fail with `text`
        in the message (operators ONNX cannot express there).
    extra: more CLI flags.
    atol_scale: the tolerance factor (1e-4 by default: |ort - torch| <= 1e-4 * (1 + |torch|) per element).
    check: "values" (default) compares outputs; "shape" compares only shapes
        and dtypes (random operators).
    inputs: ONNX Runtime inputs (numpy), when they differ from the tensors of `args`.
    more_args: further argument tuples: the exported model must also match
        PyTorch on these (other branches, trip counts, sizes of dynamic axes).
    pt2: also export the module with torch.export and convert the saved .pt2
        program (the second frontend) at PT2_OPSETS (those of `opsets` from 18
        on, or the highest); None takes the file's default (enable_pt2), False
        says the case cannot be captured by torch.export (data-dependent
        shapes) or is TorchScript-only.
    expect_ops: {opset: op types}: the model exported at that opset (both
        frontends) holds a node of each (the operator made for the pattern).
    torchscript: False for operators only torch.export records (PyTorch's
        tracer and scripting fail on them): the case runs through the .pt2
        frontend only (at its opsets if given, else at PT2_OPSETS; from min_opset on).
    """

    def __init__(self, name, module, args, *, opsets=DEFAULT_OPSETS, min_opset=9, script=False,
                 error_below=None, extra=(), atol_scale=1e-4, inputs=None, check="values", more_args=(), pt2=None,
                 torchscript=True, expect_ops=None):
        self.name = name
        self.expect_ops = {o: tuple(ops) for o, ops in (expect_ops or {}).items()}
        self.module = module if isinstance(module, nn.Module) else Lambda(module)
        self.args = args if isinstance(args, tuple) else (args,)
        self.opsets = tuple(o for o in opsets if min_opset <= o <= harness.max_opset())
        if 9 < min_opset <= 17 and 17 not in self.opsets:
            self.opsets += (17,)
        self.script = script
        self.error_below = {o: text for o, text in (error_below or {}).items() if o <= harness.max_opset()}
        self.extra = tuple(extra)
        self.atol_scale = atol_scale
        # ONNX Runtime inputs when they differ from the flattened tensor args.
        self.inputs = inputs
        assert check in ("values", "shape")
        self.check = check
        self.more_args = [a if isinstance(a, tuple) else (a,) for a in more_args]
        self.pt2 = pt2
        self.torchscript = torchscript
        if not torchscript:
            self.pt2 = True
            self.opsets = tuple(o for o in (PT2_OPSETS if opsets is DEFAULT_OPSETS else opsets)
                                if min_opset <= o <= harness.max_opset())
            self.error_below = {}

    def pt2_opsets(self):
        if not self.pt2 or not pt2_available():
            return ()
        if not self.torchscript:
            return self.opsets
        high = tuple(o for o in self.opsets if o in PT2_OPSETS)
        return high or self.opsets[-1:]

    def keys(self):
        ts = [f"{self.name}@{o}" for o in self.opsets] + [f"{self.name}@{o}!" for o in self.error_below]
        return (ts if self.torchscript else []) + [f"{self.name}@pt2-{o}" for o in self.pt2_opsets()]


# The opsets a case also runs at through torch.export and the .pt2 frontend.
PT2_OPSETS = (18, 23, 28)


def pt2_available():
    return hasattr(torch, "export") and hasattr(torch.export, "save")


TORCH_VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


def needs_torch2(cases, names):
    """The cases without those named when this torch is older than 2.0 (the
    1.13 build): PyTorch 1.13 computes them differently (older kernels'
    rounding and edge cases, operators' older schemas), so they test 2.x only."""
    if TORCH_VERSION >= (2, 0):
        return cases
    unknown = set(names) - {c.name for c in cases}
    assert not unknown, f"needs_torch2 names unknown cases: {sorted(unknown)}"
    return [c for c in cases if c.name not in names]


def enable_pt2(cases):
    """Every case of a family file whose `pt2` is not False also runs through
    torch.export and the .pt2 frontend. Returns the cases."""
    for case in cases:
        if case.pt2 is None:
            case.pt2 = True
    return cases


def graph_ops(scripted):
    """aten::/prim:: operator kinds in a TorchScript module's inlined forward graph."""
    g = scripted.forward.graph.copy() if hasattr(scripted, "forward") else scripted.graph.copy()
    torch._C._jit_pass_inline(g)
    kinds = set()

    def walk(block):
        for n in block.nodes():
            kinds.add(n.kind())
            for b in n.blocks():
                walk(b)

    walk(g)
    return kinds


def program_ops(case):
    """aten:: operator kinds a torch.export program of the case records."""
    with torch.no_grad():
        ep = torch.export.export(case.module.eval(), copy.deepcopy(case.args))
    kinds = set()
    for n in ep.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            kinds.add(f"{n.target.namespace}::{n.target._opname}")
    return kinds


def to_torchscript(case):
    module = case.module.eval()
    with torch.no_grad():
        if case.script:
            return torch.jit.script(module)
        return torch.jit.trace(module, copy.deepcopy(case.args), check_trace=False)


class Results:
    def __init__(self):
        self.status = {}  # key -> (ok, message)

    def check(self, key):
        ok, message = self.status[key]
        if not ok:
            pytest.fail(message, pytrace=False)


def export_in_process(case, opset, out):
    """One export through the Python API (operators whose library only a
    Python process has loaded, e.g. torchvision's), reported as a batch line."""
    import torch2onnx

    flat = harness.flatten(case.args, numbers=case.script)
    names = [f"i{k}" for k in range(len(flat))]
    try:
        torch2onnx.export(to_torchscript(case), copy.deepcopy(case.args), out, opset_version=opset,
                          input_names=names)
    except Exception as e:
        return f"ERROR {e}"
    import onnx

    graph_inputs = {i.name for i in onnx.load(out, load_external_data=False).graph.input}
    unused = [str(k) for k, n in enumerate(names) if n not in graph_inputs]
    return "OK" + (" unused=" + ",".join(unused) if unused else "")


def run(cases, workdir, in_process=False):
    """Exports every case at its opsets (with the CLI's batch command, or the
    Python API with in_process=True) and checks each model in ONNX Runtime."""
    workdir = str(workdir)
    results = Results()
    jobs, pending = [], []
    for case in cases:
        d = os.path.join(workdir, case.name)
        os.makedirs(d, exist_ok=True)
        try:
            torch.manual_seed(0)
            # In-place modules may write into their inputs: PyTorch runs on copies.
            with torch.no_grad():
                expected = harness.flatten(case.module.eval()(*copy.deepcopy(case.args)), numbers=True)
                more_expected = [harness.flatten(case.module.eval()(*copy.deepcopy(a)), numbers=True)
                                 for a in case.more_args]
            pt, args_pt = os.path.join(d, "model.pt"), os.path.join(d, "args.pt")
            if case.torchscript:
                to_torchscript(case).save(pt)
                torch.save(case.args, args_pt)
        except Exception as e:  # a broken test case, not an exporter failure
            for k in case.keys():
                results.status[k] = (False, f"could not build the case: {type(e).__name__}: {e}")
            continue
        inputs = case.inputs if case.inputs is not None else [onnx_input(t) for t in harness.flatten(case.args, numbers=case.script)]
        runs = [(expected, inputs)] + [(e, [onnx_input(t) for t in harness.flatten(a, numbers=case.script)])
                                       for e, a in zip(more_expected, case.more_args)]
        for opset in (list(case.opsets) + list(case.error_below)) if case.torchscript else []:
            out = os.path.join(d, f"opset{opset}.onnx")
            jobs.append(" ".join([pt, "--args", args_pt, "-o", out, "--opset", str(opset), *case.extra]))
            key = f"{case.name}@{opset}" + ("!" if opset in case.error_below else "")
            pending.append((key, case, opset, out, runs))
        if case.pt2_opsets():
            program = os.path.join(d, "model.pt2")
            try:
                with torch.no_grad():
                    ep = torch.export.export(case.module.eval(), copy.deepcopy(case.args))
                torch.export.save(ep, program)
            except Exception as e:
                for o in case.pt2_opsets():
                    results.status[f"{case.name}@pt2-{o}"] = (
                        False, f"torch.export cannot capture the case (give it pt2=False): {type(e).__name__}: {e}")
                continue
            # A program's inputs are its tensors (numbers are specialized into it).
            pt2_inputs = [onnx_input(t) for t in harness.flatten(case.args, numbers=False) if isinstance(t, torch.Tensor)]
            for opset in case.pt2_opsets():
                out = os.path.join(d, f"pt2_opset{opset}.onnx")
                jobs.append(" ".join([program, "-o", out, "--opset", str(opset), *case.extra]))
                pending.append((f"{case.name}@pt2-{opset}", case, opset, out, [(expected, pt2_inputs)]))
    if not jobs:
        return results
    if in_process:
        lines = [export_in_process(case, opset, out) for _, case, opset, out, _ in pending]
    else:
        job_file = os.path.join(workdir, "jobs.txt")
        with open(job_file, "w") as f:
            f.write("\n".join(jobs) + "\n")
        try:  # no export may hang: a batch that does not end fails its cases
            proc = subprocess.run([harness.CLI, "batch", job_file], capture_output=True, text=True,
                                  timeout=BATCH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for key, *_ in pending:
                results.status[key] = (False, f"torch2onnx batch did not finish in {BATCH_TIMEOUT_S} s (a hang)")
            return results
        lines = proc.stdout.splitlines()
        if len(lines) != len(jobs):
            for key, *_ in pending:
                results.status[key] = (False, f"torch2onnx batch crashed (exit {proc.returncode}): {proc.stderr[-2000:]}")
            return results

    for line, (key, case, opset, out, runs) in zip(lines, pending):
        if key.endswith("!"):
            want = case.error_below[opset]
            if line.startswith("OK"):
                results.status[key] = (False, f"export at opset {opset} should fail ({want!r}) but succeeded")
            elif want not in line:
                results.status[key] = (False, f"export at opset {opset} failed without {want!r}: {line}")
            else:
                results.status[key] = (True, "")
            continue
        if not line.startswith("OK"):
            results.status[key] = (False, f"export failed at opset {opset}: {line}")
            continue
        try:
            harness.full_check(out)
        except Exception as e:
            results.status[key] = (False, f"ONNX checker rejects the opset {opset} model: {e}")
            continue
        missing = [op for op in case.expect_ops.get(opset, ()) if op not in harness.op_types(out)]
        if missing:
            results.status[key] = (False, f"the opset {opset} model has no {', '.join(missing)} node")
            continue
        unused = {int(k) for k in line.split(" unused=")[1].split(",")} if " unused=" in line else set()
        for r, (expected, inputs) in enumerate(runs):
            inputs = [a for k, a in enumerate(inputs) if k not in unused]  # what the graph does not read is not an input
            if key in results.status and not results.status[key][0]:
                break  # an earlier input set already failed
            where = f"opset {opset}" + (f", argument set {r}" if r else "")
            try:
                actual, _ = harness.run_ort(out, [np.asarray(a, order="C") for a in inputs])
            except AssertionError as e:
                if ort_lacks_kernel(str(e)):
                    results.status[key] = (True, "")  # valid ONNX (the checker passed) that ORT cannot run yet
                    break
                results.status[key] = (False, f"ONNX Runtime fails on the {where} model: {e}")
                continue
            try:
                if case.check == "shape":
                    compare_shapes(expected, actual)
                else:
                    harness.compare(expected, actual, rtol_scale=case.atol_scale)
                results.status[key] = (True, "")
            except AssertionError as e:
                results.status[key] = (False, f"{where}: {e}")
    # A case's models, archives and programs go once all of it passed: only
    # the failing cases' stay for a look (issue 46).
    for case in cases:
        if all(results.status.get(k, (False, ""))[0] for k in case.keys()):
            shutil.rmtree(os.path.join(workdir, case.name), ignore_errors=True)
    return results


# Operator versions ONNX Runtime (1.32) has no kernel for: the opset-22
# versions (22 added bfloat16) of the random operators and MaxRoiPool, the
# opset-28 QuantizeLinear / DequantizeLinear and Optional / OptionalHasElement /
# OptionalGetElement (a scripted module's Optional[Tensor] argument). A model that uses them passes the
# checker, and ORT refuses it with this message. Those cases are checked, not
# run (docs/supported_ops.md says so).
ORT_WITHOUT = [(op, 22) for op in ("RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike",
                                   "Bernoulli", "Multinomial", "MaxRoiPool")] + \
    [(op, 28) for op in ("QuantizeLinear", "DequantizeLinear", "Optional", "OptionalHasElement", "OptionalGetElement")]


def ort_lacks_kernel(message):
    return any(f"Could not find an implementation for {op}({v})" in message for op, v in ORT_WITHOUT)


def onnx_input(t):
    """A graph input as ONNX Runtime gets it (Python numbers become 0-d arrays)."""
    if isinstance(t, torch.Tensor):
        return t.numpy()
    return np.array(t)


def compare_shapes(expected, actual):
    if len(expected) != len(actual):
        raise AssertionError(f"{len(actual)} outputs from ONNX Runtime, {len(expected)} from PyTorch")
    for k, (e, a) in enumerate(zip(expected, actual)):
        e = e.numpy()
        if tuple(e.shape) != tuple(a.shape) or e.dtype != a.dtype:
            raise AssertionError(f"output {k}: {a.dtype}{list(a.shape)} from ONNX Runtime, "
                                 f"{e.dtype}{list(e.shape)} from PyTorch")


def results_fixture(cases, in_process=False):
    @pytest.fixture(scope="module")
    def results(tmp_path_factory):
        return run(cases, tmp_path_factory.mktemp("ops"), in_process)

    return results


def case_test(cases):
    keys = [k for c in cases for k in c.keys()]
    dup = {k for k in keys if keys.count(k) > 1}
    assert not dup, f"duplicate case names: {sorted(dup)}"

    @pytest.mark.parametrize("key", keys)
    def test_case(results, key):
        results.check(key)

    return test_case
