"""Shared test machinery: trace a model to a TorchScript archive, export it
with the torch2onnx CLI, check it with the ONNX checker (full check) and run
it in ONNX Runtime (the onnxruntime package), comparing with PyTorch.

Run with Debian's /usr/bin/python3 (torch, torchvision, onnx, numpy).
"""
import os
import re
import struct
import subprocess
import tempfile
import time
import zipfile

import numpy as np
import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("T2O_CLI", os.path.join(ROOT, "build", "torch2onnx"))


# Long corpora are cut in two (issue 42: no test over 5 minutes, `make test`
# within 45): `make test` runs the sample part, `make test-full` (ctest label
# `full`) the rest, with T2O_FULL=1. (T2O_SHARD="k/n" slices any test file:
# tests/conftest.py.)
FULL = os.environ.get("T2O_FULL") == "1"


class Mismatch(AssertionError):
    pass


class Lambda(torch.nn.Module):
    """Wraps a function of tensors as a module (for tracing and torch.export)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


_max_opset = None


def max_opset():
    """The newest opset the CLI exports (23 on the default build, 17 on the
    1.13 build with Debian's ONNX 1.12): from `torch2onnx version`."""
    global _max_opset
    if _max_opset is None:
        out = subprocess.run([CLI, "version"], capture_output=True, text=True).stdout
        m = re.search(r"opsets (\d+)-(\d+)", out)
        assert m, f"no opset range in `torch2onnx version`: {out!r}"
        _max_opset = int(m.group(2))
    return _max_opset


def flatten(value, numbers=False, none=False):
    """Tensors of a (nested) output or input, in order: what the graph's outputs are.
    numbers=True keeps Python numbers too (inputs of scripted forward(x, n: int));
    none=True keeps None (an optional output's place: see align_optional).
    A quantized tensor is three outputs, as torch.onnx exports it: its
    integers, its scale (float32) and its zero point (of the integers' dtype);
    a complex tensor is its real view [..., 2], as torch2onnx exports it."""
    if isinstance(value, torch.Tensor):
        if value.is_quantized:
            ints = value.int_repr()
            return [ints, torch.tensor(value.q_scale(), dtype=torch.float32),
                    torch.tensor(value.q_zero_point(), dtype=ints.dtype)]
        if value.is_complex():  # exported as its real view [..., 2]
            return [torch.view_as_real(value.resolve_conj())]
        return [value]
    if numbers and isinstance(value, (bool, int, float)):
        return [value]
    if none and value is None:
        return [None]
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(flatten(v, numbers, none))
        return out
    if isinstance(value, dict):
        out = []
        for v in value.values():
            out.extend(flatten(v, numbers, none))
        return out
    return []


def optional_outputs(proto):
    """Which graph outputs of a ModelProto are ONNX optionals."""
    return [o.type.HasField("optional_type") for o in proto.graph.output]


def align_optional(expected, optional):
    """PyTorch's flat outputs with None kept (flatten(none=True)) as the graph
    returns them: a None stays where the graph has an optional output (ONNX
    Runtime returns None for an empty one) and is left out elsewhere (exporters
    drop outputs that are always None)."""
    out = []
    for e in expected:
        if e is not None or (len(out) < len(optional) and optional[len(out)]):
            out.append(e)
    return out


def quantization_steps(value, step):
    """compare's per-output steps for the outputs flatten(value, numbers=True)
    gives: a quantized tensor's integers may differ by one, its scale and
    zero point not at all; other outputs by `step`."""
    if isinstance(value, torch.Tensor) and value.is_quantized:
        return [step, None, None]
    if isinstance(value, (torch.Tensor, bool, int, float)):
        return [step]
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in quantization_steps(v, step)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in quantization_steps(v, step)]
    return []


def trace(module, args, path, strict=True):
    """Traces `module` under no_grad (as users save models) and saves the archive."""
    with torch.no_grad():
        traced = torch.jit.trace(module, args, strict=strict, check_trace=False)
    traced.save(path)
    return traced


def export(model_path, out_path, args_path=None, inputs=(), extra=(), expect_ok=True):
    cmd = [CLI, "export", model_path, "-o", out_path]
    if args_path:
        cmd += ["--args", args_path]
    for spec in inputs:
        cmd += ["--input", spec]
    cmd += list(extra)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)  # a hang fails the test
    if expect_ok and proc.returncode != 0:
        raise AssertionError(f"export failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return proc


def unused_inputs(stderr):
    """The indices of the example inputs an export dropped because the model
    does not read them (the CLI names each on stderr)."""
    return {int(k) for k in re.findall(r"does not read input '.*?' \(example input (\d+)\)", stderr)}


def run_ort(onnx_path, inputs, workdir=None, bench=0):
    """Runs the model in ONNX Runtime (CPU, all graph optimizations) on
    `inputs` (numpy arrays, in graph input order). Returns (outputs, summary):
    the summary holds the output names and, with bench=N, the median latency
    of N more runs in milliseconds (`latency_ms`). The test oracle is kept
    apart from the package's own verification code."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # (the tests' thread budget: tests/CMakeLists.txt sets OMP_NUM_THREADS=1 where CTest runs them side by side)
    options.intra_op_num_threads = int(os.environ.get("OMP_NUM_THREADS", "0"))
    try:
        session = onnxruntime.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        declared = session.get_inputs()
        if len(declared) != len(inputs):
            raise AssertionError(f"the model has {len(declared)} inputs, {len(inputs)} values were given")
        feeds = {d.name: np.asarray(a) for d, a in zip(declared, inputs)}
        outs = session.run(None, feeds)
    except Exception as e:
        raise AssertionError(f"ONNX Runtime failed on {onnx_path}:\n{e}") from e
    summary = {"outputs": [o.name for o in session.get_outputs()]}
    if bench:
        times = []
        for _ in range(bench):
            start = time.perf_counter()
            session.run(None, feeds)
            times.append((time.perf_counter() - start) * 1e3)
        summary["latency_ms"] = sorted(times)[len(times) // 2]
    return outs, summary


def custom_domain_foo_function():
    """custom_domain::Foo(input1, input2; attr1: float, attr2: int) =
    input1 * attr1 + input2 * attr2 as an ONNX local function: the
    implementation a runtime needs for the documented custom op foo_forward."""
    import onnx.helper as oh

    body = [
        oh.make_node("Constant", [], ["a1"], value_float=0.0),
        oh.make_node("Constant", [], ["a2"], value_int=0),
        oh.make_node("Cast", ["a2"], ["a2f"], to=onnx.TensorProto.FLOAT),
        oh.make_node("Mul", ["input1", "a1"], ["p"]),
        oh.make_node("Mul", ["input2", "a2f"], ["q"]),
        oh.make_node("Add", ["p", "q"], ["out"]),
    ]
    body[0].attribute[0].ref_attr_name = "attr1"
    body[1].attribute[0].ref_attr_name = "attr2"
    return oh.make_function("custom_domain", "Foo", ["input1", "input2"], ["out"], body,
                            [oh.make_opsetid("", 17)], ["attr1", "attr2"])


def full_check(onnx_path):
    onnx.checker.check_model(onnx_path, full_check=True)
    return onnx.load(onnx_path)


def op_types(onnx_path):
    """The op types of a model's nodes, its subgraphs' and its functions' included."""
    model = onnx.load(onnx_path, load_external_data=False)
    found = set()

    def walk(graph):
        for n in graph.node:
            found.add(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for g in a.graphs:
                    walk(g)

    walk(model.graph)
    for f in model.functions:
        for n in f.node:
            found.add(n.op_type)
    return found


def compare(expected, actual, names=None, rtol_scale=1e-4, quantization_step=None, model=False):
    """|ort - torch| <= 1e-4 * (1 + |torch|) element by element; integers and bools exactly.

    model: the outputs of a whole (deep) model, whose float error builds up through its layers with the
    scale of its activations (inception_v3's outputs from two valid ONNX files differ by 2e-4 where they
    are 0.05): the bound gains 1e-4 * max |torch| per output, the per-tensor criterion.

    quantization_step: a quantized model's outputs may differ by one step of
    the output's quantization (its integers by one, its dequantized values by
    the given scale): requantizing rounds once PyTorch's integer kernels and
    ONNX Runtime's computations land on either side of a half step. One step
    for every output, or a list with one per output (None: compared as
    usual; see quantization_steps)."""
    if len(expected) != len(actual):
        raise Mismatch(f"{len(actual)} outputs from ONNX Runtime, {len(expected)} from PyTorch")
    steps = quantization_step if isinstance(quantization_step, list) else [quantization_step] * len(expected)
    report = []
    for k, (e, a) in enumerate(zip(expected, actual)):
        step = steps[k]
        if e is None or a is None:  # an optional output: empty on both sides or on neither
            if (e is None) != (a is None):
                raise Mismatch(f"{names[k] if names else f'output {k}'}: "
                               f"{'None' if a is None else 'a tensor'} from ONNX Runtime, "
                               f"{'None' if e is None else 'a tensor'} from PyTorch")
            report.append((names[k] if names else f"output {k}", 0.0, 0.0))
            continue
        e = e.detach().cpu().numpy() if isinstance(e, torch.Tensor) else np.asarray(e)
        if isinstance(expected[k], float):
            e = e.astype(np.float64)  # a Python float is a double
        label = names[k] if names else f"output {k}"
        if tuple(e.shape) != tuple(a.shape):
            raise Mismatch(f"{label}: shape {a.shape} from ONNX Runtime, {e.shape} from PyTorch")
        if e.dtype != a.dtype:
            raise Mismatch(f"{label}: dtype {a.dtype} from ONNX Runtime, {e.dtype} from PyTorch")
        if e.dtype.kind in "biu":
            diff = np.abs(e.astype(np.int64) - a.astype(np.int64)) if e.dtype.kind != "b" else (e != a)
            bad = int(np.count_nonzero(diff > (1 if step and e.dtype.kind != "b" else 0)))
            if bad:
                raise Mismatch(f"{label}: {bad} integer elements differ")
            report.append((label, 0.0, 0.0))
            continue
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        if np.isinf(e64).any() or np.isinf(a64).any():  # equal infinities match (inf - inf is NaN)
            if not np.array_equal(np.isposinf(e64), np.isposinf(a64)) or \
                    not np.array_equal(np.isneginf(e64), np.isneginf(a64)):
                raise Mismatch(f"{label}: infinities differ")
            finite = ~np.isinf(e64)
            e64, a64 = e64[finite], a64[finite]
        if np.isnan(e64).any() or np.isnan(a64).any():
            if not np.array_equal(np.isnan(e64), np.isnan(a64)):
                raise Mismatch(f"{label}: NaN positions differ")
            mask = ~np.isnan(e64)
            e64, a64 = e64[mask], a64[mask]
        if not e64.size:
            report.append((label, 0.0, 0.0))
            continue
        # element-wise, as torch.testing.assert_close: |ort - torch| <= atol + rtol |torch| for every element
        # (atol = rtol = rtol_scale), so one large element does not loosen the bound for the others
        diff = np.abs(e64 - a64)
        # (half precision: one rounding of an intermediate is ~1e-3 of the value, as assert_close's float16 rtol)
        rtol = max(rtol_scale, 1e-3) if e.dtype == np.float16 else rtol_scale
        bound = rtol * (1.0 + np.abs(e64) + (float(np.max(np.abs(e64))) if model else 0.0)) + (step or 0.0) * 1.0001
        over = ~(diff <= bound)
        worst = int(np.argmax(diff - bound))
        if over.any():
            raise Mismatch(f"{label}: {int(np.count_nonzero(over))} of {e64.size} elements differ by more than "
                           f"{rtol:g} (1 + |torch|); the worst: |ort - torch| = {diff.flat[worst]:.3g} where "
                           f"torch = {e64.flat[worst]:.6g}, ort = {a64.flat[worst]:.6g}")
        report.append((label, float(diff.flat[worst]), float(bound.flat[worst])))
    return report


def check_module(module, args, *, opset=None, workdir=None, extra=(), strict=True, expected=None, script=False,
                 quantization_step=None):
    """Trace, export with the CLI, full-check, run in ORT, compare with eager PyTorch.

    Returns (onnx ModelProto, report)."""
    own = workdir is None
    tmp = tempfile.TemporaryDirectory() if own else None
    workdir = tmp.name if own else workdir
    try:
        if not isinstance(args, tuple):
            args = (args,)
        with torch.no_grad():
            if expected is None:
                expected = flatten(module(*args), numbers=True)
        pt = os.path.join(workdir, "model.pt")
        if script:
            torch.jit.script(module).save(pt)
        else:
            trace(module, args, pt, strict=strict)
        args_pt = os.path.join(workdir, "args.pt")
        torch.save(args, args_pt)
        out = os.path.join(workdir, "model.onnx")
        flags = list(extra)
        if opset is not None:
            flags += ["--opset", str(opset)]
        unused = unused_inputs(export(pt, out, args_path=args_pt, extra=flags).stderr)
        model = full_check(out)
        inputs = [t.numpy() for k, t in enumerate(flatten(args)) if k not in unused]
        actual, _ = run_ort(out, inputs, workdir)
        return model, compare(expected, actual, quantization_step=quantization_step, model=True)
    finally:
        if own:
            tmp.cleanup()


def as_zip64(src_path, dst_path, intact=True):
    """The same archive in zip64 form, as writers make archives past 4 GiB:
    every central directory entry keeps its sizes and offset in a zip64 extra
    field, and a zip64 end record gives the directory's place."""
    data = open(src_path, "rb").read()
    end = data.rfind(b"PK\x05\x06")
    count, cd_size, cd_at = struct.unpack("<HLL", data[end + 10:end + 20])
    central, at = b"", cd_at
    for _ in range(count):
        h = bytearray(data[at:at + 46])
        nlen, elen, clen = struct.unpack("<3H", h[28:34])
        csize, usize = struct.unpack("<2L", h[20:28])
        offset = struct.unpack("<L", h[42:46])[0]
        name, extra = data[at + 46:at + 46 + nlen], data[at + 46 + nlen:at + 46 + nlen + elen]
        comment = data[at + 46 + nlen + elen:at + 46 + nlen + elen + clen]
        h[20:28] = struct.pack("<2L", 0xFFFFFFFF, 0xFFFFFFFF)
        h[42:46] = struct.pack("<L", 0xFFFFFFFF)
        extra += struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
        h[30:32] = struct.pack("<H", len(extra))
        central += bytes(h) + name + extra + comment
        at += 46 + nlen + elen + clen
    new_cd_at = cd_at
    end64_at = new_cd_at + len(central)
    end64 = struct.pack("<LQHHLLQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(central), new_cd_at)
    locator = struct.pack("<LLQL", 0x07064B50, 0, end64_at, 1)
    eocd = struct.pack("<LHHHHLLH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    open(dst_path, "wb").write(data[:cd_at] + central + end64 + locator + eocd)
    with zipfile.ZipFile(dst_path) as z:
        assert len(z.infolist()) == count and (z.testzip() is None) == intact
