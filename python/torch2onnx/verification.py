"""Runs exported models in ONNX Runtime (the `onnxruntime` Python package) and
compares them with PyTorch."""
import os
import time

import numpy as np
import torch

from . import errors

__all__ = ["VerificationError", "run_onnx_runtime", "verify", "ort_session", "compare", "compare_rows", "find_mismatch",
           "GraphInfo"]


class VerificationError(errors.OnnxExporterError, AssertionError):
    """ONNX Runtime's outputs differ from PyTorch's (or it could not run the model)."""


def _npy_array(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().contiguous().numpy()
    if isinstance(value, bool):
        return np.array(value, dtype=np.bool_)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)
    if isinstance(value, float):
        return np.array(value, dtype=np.float64)
    return np.asarray(value)


def ort_session(model):
    """An ONNX Runtime CPU session of the model (a path or serialized bytes),
    all graph optimizations on, as deployments run it."""
    try:
        import onnxruntime
    except ImportError as e:
        raise VerificationError("verify needs ONNX Runtime: `pip install onnxruntime`") from e
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: ORT's warnings are about its own fusions
    source = bytes(model) if isinstance(model, (bytes, bytearray)) else os.fspath(model)
    try:
        return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception classes
        raise VerificationError(f"ONNX Runtime could not load the model: {e}") from e


def run_onnx_runtime(model, inputs, bench=0):
    """Runs the ONNX model (a path, serialized bytes or an ort_session) on
    `inputs` (tensors, numbers or arrays, in graph input order); returns the
    outputs as numpy arrays. With bench=N, returns (outputs, median latency
    of N more runs in milliseconds)."""
    session = model if hasattr(model, "get_inputs") else ort_session(model)
    declared = session.get_inputs()
    if len(inputs) != len(declared):
        raise VerificationError(f"the model has {len(declared)} inputs, {len(inputs)} values were given")
    feeds = {d.name: _npy_array(v) for d, v in zip(declared, inputs)}
    try:
        outputs = session.run(None, feeds)
    except Exception as e:
        raise VerificationError(f"ONNX Runtime could not run the model: {e}") from e
    if not bench:
        return outputs
    times = []
    for _ in range(bench):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return outputs, sorted(times)[len(times) // 2]


def _flatten(value, numbers, none=False):
    if isinstance(value, torch.Tensor):
        if value.is_complex():  # the graph output is its real view [..., 2]
            return [torch.view_as_real(value.resolve_conj())]
        return [value]
    if numbers and isinstance(value, (bool, int, float)):
        return [value]
    if none and value is None:
        return [None]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v, numbers, none)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v, numbers, none)]
    return []


def _as_graph_outputs(flat, optional):
    """PyTorch's flat outputs (None kept) as the graph returns them: a None
    stays where the graph has an optional output (empty there), and is left
    out elsewhere (an output that is always None is not a graph output)."""
    out = []
    for v in flat:
        if v is not None or (len(out) < len(optional) and optional[len(out)]):
            out.append(v)
    return out


def compare_rows(expected, actual, rtol=1e-4):
    """One row per output: {output, shape, dtype, max_abs, max_rel, bound, ok, why}: integers and bools
    exactly, floats within rtol * (1 + max |expected|); inf/nan where PyTorch has them."""
    if len(expected) != len(actual):
        raise VerificationError(f"ONNX Runtime gave {len(actual)} outputs, PyTorch {len(expected)}")
    rows = []
    for k, (e, a) in enumerate(zip(expected, actual)):
        row = dict(output=k, shape=None, dtype=None, max_abs=0.0, max_rel=0.0, bound=0.0, ok=True, why="")
        rows.append(row)
        if e is None or a is None:  # an optional output
            if (e is None) != (a is None):
                row.update(ok=False, why=f"{'empty' if a is None else 'a tensor'} in ONNX Runtime, "
                                         f"{'None' if e is None else 'a tensor'} in PyTorch")
            continue
        e = _npy_array(e)
        row.update(shape=list(e.shape), dtype=str(e.dtype))
        if e.shape != a.shape:
            row.update(ok=False, why=f"shape {list(a.shape)} in ONNX Runtime, {list(e.shape)} in PyTorch")
            continue
        if e.dtype.kind in "biu" or e.dtype == np.bool_:
            wrong = int((e != a).sum())
            if wrong:
                diff = np.abs(e.astype(np.float64) - a.astype(np.float64))
                row.update(max_abs=float(diff.max()), ok=False, why=f"integer values differ ({wrong} elements)")
            continue
        if e.size == 0:
            continue
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        finite = np.isfinite(e64)
        if not np.array_equal(finite, np.isfinite(a64)) or not np.array_equal(e64[~finite], a64[~finite]):
            row.update(ok=False, why="inf/nan positions differ")
            continue
        if finite.any():
            diff = np.abs(e64[finite] - a64[finite])
            scale = float(np.abs(e64[finite]).max())
            row.update(max_abs=float(diff.max()), max_rel=float(diff.max()) / max(scale, 1e-30),
                       bound=rtol * (1.0 + scale))
        if row["max_abs"] > row["bound"]:
            row.update(ok=False, why=f"max |onnxruntime - pytorch| = {row['max_abs']:.3g} > {row['bound']:.3g}")
    return rows


def compare(expected, actual, rtol=1e-4):
    """Raises VerificationError unless each output matches: integers and bools
    exactly, floats within rtol * (1 + max |expected|). Returns the rows of compare_rows."""
    return _raise_on_mismatch(compare_rows(expected, actual, rtol))


def _raise_on_mismatch(rows):
    """The rows, unless one does not match: then VerificationError with its reason."""
    for row in rows:
        if not row["ok"]:
            raise VerificationError(f"output {row['output']}: {row['why']}")
    return rows


def rows_markdown(rows):
    """The comparison as a Markdown table."""
    lines = ["| output | shape | dtype | max abs error | max rel error | bound | match |", "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        shape = "×".join(str(d) for d in r["shape"]) if r["shape"] else ("scalar" if r["shape"] == [] else "-")
        lines.append(f"| {r['output']} | {shape} | {r['dtype'] or '-'} | {r['max_abs']:.3g} | {r['max_rel']:.3g} | "
                     f"{r['bound']:.3g} | {'yes' if r['ok'] else 'NO: ' + r['why'].replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


def _verify_export(model, args, kwargs, onnx_model, values, scripted, rtol=1e-4, unused=(), report=None):
    """Runs `model` in PyTorch and the exported `onnx_model` (path or bytes) in
    ONNX Runtime on the same example args and compares the outputs. `values`
    are what the core was given (scripted models take numbers as inputs too);
    `unused`: the indices of the flattened values the graph does not take;
    `report`: a Markdown report to append the comparison table to. Returns
    the table's rows (compare_rows)."""
    from ._args import clone_tensors

    with torch.no_grad():  # on copies: forward() may write into its inputs
        expected = model(*clone_tensors(tuple(args)), **clone_tensors(dict(kwargs or {})))
    feeds = [v for k, v in enumerate(_flatten(list(values), numbers=scripted)) if k not in set(unused)]
    session = ort_session(onnx_model)
    actual = run_onnx_runtime(session, feeds)
    optional = [o.type.startswith("optional(") for o in session.get_outputs()]
    rows = compare_rows(_as_graph_outputs(_flatten(expected, numbers=True, none=True), optional), actual, rtol)
    if report:
        with open(report, "a") as out:
            out.write("\n## Verification\n\nONNX Runtime against PyTorch on the example inputs "
                      f"(floats within {rtol:g} · (1 + max |torch|), integers exactly):\n\n" + rows_markdown(rows) + "\n")
    _raise_on_mismatch(rows)
    # Dynamic axes: random inputs along them too (verify()), where the graph's
    # inputs are the args' tensors in order.
    all_values = _flatten(list(values), numbers=scripted)
    dynamic = any(isinstance(d, str) for i in session.get_inputs() for d in i.shape)
    if dynamic and not unused and len(all_values) == len(_flatten(list(values), numbers=False)):
        try:
            runs = verify(model, clone_tensors(tuple(args)), onnx_model, clone_tensors(dict(kwargs or {})) or None,
                          rtol=rtol, quiet=True)
        except VerificationError as e:
            if report:
                with open(report, "a") as out:
                    out.write(f"\nAlong the dynamic axes: **{e}**\n")
            raise
        if report:
            with open(report, "a") as out:
                for label, run_rows in runs[1:]:
                    out.write(f"\nRandom inputs, {label}:\n\n" + rows_markdown(run_rows) + "\n")
    return rows


def _replace_tensors(value, fresh):
    """`value` with each tensor replaced by the next of `fresh` (an iterator), in _flatten's order."""
    if isinstance(value, torch.Tensor):
        return next(fresh)
    if isinstance(value, tuple):
        return tuple(_replace_tensors(v, fresh) for v in value)
    if isinstance(value, list):
        return [_replace_tensors(v, fresh) for v in value]
    if isinstance(value, dict):
        return {k: _replace_tensors(v, fresh) for k, v in value.items()}
    return value


def _random_like(t, shape, generator):
    """A random tensor of t's dtype and the given shape; integers within t's range (indices stay valid)."""
    if t.dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if t.is_floating_point():
        return torch.randn(shape, generator=generator).to(t.dtype)
    lo, hi = (int(t.min()), int(t.max())) if t.numel() else (0, 1)
    return torch.randint(lo, hi + 1, shape, generator=generator, dtype=t.dtype)


def verify(model, args, onnx_model, kwargs=None, rtol=1e-4, atol=0.0, sizes=(None, 1), seed=0, quiet=False):
    """Runs `model` in PyTorch and the exported `onnx_model` (a path or bytes)
    in ONNX Runtime on `args` and, for a model with dynamic axes (symbolic
    dims of its inputs), on random inputs along them: each symbolic dim set
    to each of `sizes` (None: the example's size + 3), the others as in the
    example. Compares every output (floats within atol + rtol * (1 + max
    |torch|), integers exactly), prints a table per run unless quiet, and
    raises VerificationError on a mismatch. Returns the rows of every run.
    The model's tensor inputs must be the ONNX graph's inputs, in order.
    `model` may be an nn.Module, a ScriptModule, an ExportedProgram or the
    path of a .pt2 program (torch.export.save); for a program, `args` may
    be None: the example inputs it holds serve."""
    if isinstance(model, str) and model.endswith(".pt2"):
        model = torch.export.load(model)
    if isinstance(model, getattr(getattr(torch, "export", None), "ExportedProgram", ())):
        if args is None:
            args, kwargs = model.example_inputs
        model = model.module()
    args = args if isinstance(args, tuple) else (args,)
    session = ort_session(onnx_model)
    declared = session.get_inputs()
    tensors = [t for t in _flatten(list(args) + [kwargs or {}], numbers=False)]
    if len(tensors) != len(declared):
        raise VerificationError(f"the ONNX model has {len(declared)} inputs, the args hold {len(tensors)} tensors")
    symbolic = sorted({d for i in declared for d in i.shape if isinstance(d, str)})
    runs = [("example", args, kwargs)]
    generator = torch.Generator().manual_seed(seed)
    for size in (sizes if symbolic else ()):
        chosen = {}
        for i, t in zip(declared, tensors):
            for d, n in zip(i.shape, t.shape):
                if isinstance(d, str):
                    chosen.setdefault(d, n + 3 if size is None else size)
        fresh = [_random_like(t, [chosen[d] if isinstance(d, str) else n for d, n in zip(i.shape, t.shape)], generator)
                 for i, t in zip(declared, tensors)]
        it = iter(fresh)
        new_args, new_kwargs = _replace_tensors(args, it), _replace_tensors(kwargs, it)
        runs.append((", ".join(f"{d}={chosen[d]}" for d in symbolic), new_args, new_kwargs))
    all_rows, failures = [], []
    for label, a, k in runs:
        with torch.no_grad():
            expected = model(*a, **(k or {}))
        inputs = _flatten(list(a) + [k or {}], numbers=False)
        actual = run_onnx_runtime(session, inputs)
        optional = [o.type.startswith("optional(") for o in session.get_outputs()]
        exp = _as_graph_outputs(_flatten(expected, numbers=True, none=True), optional)
        rows = compare_rows(exp, actual, rtol)
        for r in rows:  # atol on top of the relative bound
            if not r["ok"] and r["why"].startswith("max |onnxruntime") and r["max_abs"] <= r["bound"] + atol:
                r.update(ok=True, why="")
        if not quiet:
            print(f"{label}:\n{rows_markdown(rows)}")
        all_rows.append((label, rows))
        failures += [f"{label}: output {r['output']}: {r['why']}" for r in rows if not r["ok"]]
    if failures:
        raise VerificationError("; ".join(failures))
    return all_rows


def find_mismatch(model, input_args, do_constant_folding=True, training=None, opset_version=None,
                  keep_initializers_as_inputs=True, verbose=False, options=None):
    """torch.onnx.verification.find_mismatch: bisects the model's graph down to the smallest
    parts whose ONNX export differs from PyTorch in ONNX Runtime; prints the tree and the
    mismatching operators and returns the GraphInfo tree (see _mismatch)."""
    from . import _mismatch

    return _mismatch.find_mismatch(model, input_args, do_constant_folding, training, opset_version,
                                   keep_initializers_as_inputs, verbose, options)


def __getattr__(name):
    if name == "GraphInfo":
        from . import _mismatch

        return _mismatch.GraphInfo
    raise AttributeError(name)
