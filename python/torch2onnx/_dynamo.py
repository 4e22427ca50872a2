"""export(..., dynamo=True): the model captured with torch.export (non-strict,
then strict, as torch.onnx does: sizes 0 and 1 not specialized, the model's
checks on dynamic sizes deferred to run-time asserts, dynamic_shapes refined
from torch.export's suggested fixes where the model bounds a dim), the
ExportedProgram handed to the C++ core
in memory (a .pt2 in an anonymous in-memory file, never on disk), converted
by the same .pt2 frontend as `torch2onnx export model.pt2`.

Returns an ONNXProgram, as torch.onnx.export(dynamo=True) does."""
import contextlib
import dataclasses
import datetime
import inspect
import io
import os
import time

import torch

from . import _logging, _modes, errors
from ._onnx_program import ONNXProgram  # noqa: F401  (torch2onnx.ONNXProgram)


def _split(args, kwargs):
    """torch.onnx's args convention: a tensor, or a tuple whose trailing dict holds keyword args."""
    if isinstance(args, torch.Tensor):
        args = (args,)
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _param_names(model, count):
    try:
        params = list(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(count)]


def _shapes_from_axes(model, args, kwargs, input_names, dynamic_axes):
    """torch.onnx's dynamic_axes as torch.export dynamic_shapes. The graph's
    inputs are the tensors of args and kwargs however nested (tuples, lists,
    dicts: a KV cache as a list of (key, value) tuples), in order; input_names
    names them, and a top-level tensor without one goes by its parameter name.
    Each axis dynamic_axes lists for a name is Dim.DYNAMIC: torch.export finds
    how the dims relate (one batch size for every input, a mask as long as
    past + sequence), and the names of dynamic_axes label the ONNX dims
    (_axes_from_shapes leaves them to the converter)."""
    names = list(input_names or [])
    params = _param_names(model, len(args))
    count = [0]

    def dims(value, axes):
        keys = axes.keys() if isinstance(axes, dict) else axes
        return {int(a) % max(value.dim(), 1): _dynamic_dim(axes, a) for a in keys}

    def spec(value, default):
        if isinstance(value, torch.Tensor):
            k = count[0]
            count[0] += 1
            name = names[k] if k < len(names) else default
            axes = dynamic_axes.get(name) if name is not None else None
            return dims(value, axes) if axes else None
        if isinstance(value, (list, tuple)):
            items = [spec(v, None) for v in value]
            return items if isinstance(value, list) else tuple(items)
        if isinstance(value, dict):
            return {k: spec(v, None) for k, v in value.items()}
        return None

    positional = [spec(a, params[i]) for i, a in enumerate(args)]
    keyword = {k: spec(v, k) for k, v in kwargs.items()}
    if not keyword:
        return tuple(positional)
    # (with keyword args: a dict by parameter name)
    return {**{params[i]: s for i, s in enumerate(positional)}, **keyword}


def _dynamic_dim(axes, axis):
    """A dynamic dim for torch.export: Dim.DYNAMIC where torch has it (its
    relations to other dims inferred), else a Dim named as dynamic_axes names it."""
    hint = getattr(torch.export.Dim, "DYNAMIC", None)
    if hint is not None:
        return hint
    name = str(axes[axis]) if isinstance(axes, dict) else f"dim_{axis}"
    name = "".join(c if c.isalnum() else "_" for c in name)
    return torch.export.Dim(name if name.isidentifier() else f"d_{name}")


def _axes_from_shapes(ep, input_names, dynamic_shapes):
    """The names dynamic_shapes gives (Dim("batch")) as dynamic_axes of the
    ONNX inputs, so the graph's dims carry them."""
    if dynamic_shapes is None:
        return {}
    specs = [s for s in ep.graph_signature.input_specs if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    flat = []

    def walk(spec):
        if isinstance(spec, dict) and all(isinstance(k, int) for k in spec):
            flat.append(spec)
        elif isinstance(spec, dict):
            for v in spec.values():
                walk(v)
        elif isinstance(spec, (list, tuple)) and spec and not all(isinstance(k, int) or k is None for k in spec):
            for v in spec:
                walk(v)
        elif isinstance(spec, (list, tuple)):  # per-axis list: [Dim, None, ...]
            flat.append({k: d for k, d in enumerate(spec) if d is not None})
        else:
            flat.append(None)

    walk(dynamic_shapes)
    axes = {}
    for k, spec in enumerate(flat):
        if not spec or k >= len(specs):
            continue
        name = input_names[k] if input_names and k < len(input_names) else specs[k].arg.name
        named = {int(a): d.__name__ for a, d in spec.items()
                 if isinstance(a, int) and hasattr(d, "__name__") and d.__name__.isidentifier()}
        if named:
            axes[name] = named
    return axes


def _capture(model, args, kwargs, dynamic_shapes, timings):
    if isinstance(model, torch.export.ExportedProgram):
        return model, "given"
    if isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
        raise errors.ExportUsageError("dynamo=True captures the model with torch.export, which takes an nn.Module "
                                      "or an ExportedProgram, not TorchScript: export it with dynamo=False")
    if not isinstance(model, torch.nn.Module):
        if not callable(model):
            raise errors.ExportUsageError(f"model must be an nn.Module or an ExportedProgram, not {type(model).__name__}")
        fn = model

        class _Function(torch.nn.Module):
            def forward(self, *a, **k):
                return fn(*a, **k)

        model = _Function()
    failures = []
    for strict in (False, True):
        start = time.perf_counter()
        try:
            ep, refined = _export_as_torch_onnx(model, args, kwargs, dynamic_shapes, strict, oblivious=True)
            if (_grown(args, kwargs or {}, dynamic_shapes, _param_names(model, len(args))) is not None
                    and not _agrees_on_example(ep, model, args, kwargs)):
                # Sizes of 1 taken as "any size" made a program that differs from the model at the
                # example itself (x.squeeze(0) of a batch of 1): captured as torch.export does by default
                # instead, at size 2 below, which then fails on the example with a clear error.
                ep, refined = _export_as_torch_onnx(model, args, kwargs, dynamic_shapes, strict, oblivious=False)
            how = "strict" if strict else "non-strict"
            if refined is not None:
                how += f", dynamic_shapes refined from torch.export's suggested fixes to {refined}"
                _logging.log(f"torch.export bounded dynamic dims the model checks: dynamic_shapes {refined}")
            timings.append((f"torch.export ({how})", time.perf_counter() - start))
            return ep, how
        except Exception as e:  # torch.export raises many kinds
            failures.append((strict, e))
            if _specialized(e):
                grown = _grown(args, kwargs or {}, dynamic_shapes, _param_names(model, len(args)))
                if grown is not None:  # torch.export fixes dims whose example size is 0 or 1
                    try:
                        ep = torch.export.export(model, grown[0], kwargs=grown[1] or None,
                                                 dynamic_shapes=dynamic_shapes, strict=strict)
                        timings.append((f"torch.export ({'strict' if strict else 'non-strict'}, dynamic dims of "
                                        "size 1 captured at size 2)", time.perf_counter() - start))
                        return ep, ("strict" if strict else "non-strict") + ", example grown to size 2"
                    except Exception:
                        pass
    def first_lines(e):
        lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
        return " ".join(lines[:2])

    message = "; ".join(f"{'strict' if s else 'non-strict'}: {type(e).__name__}: {first_lines(e)}"
                        for s, e in failures if str(e).strip())
    raise errors.OnnxExporterError(f"torch.export could not capture the model ({message})") from failures[0][1]


def _agrees_on_example(ep, model, args, kwargs):
    """Whether the captured program computes what the model does on the example (shapes and values)."""
    try:
        with torch.no_grad():
            expected = torch.utils._pytree.tree_leaves(model(*args, **(kwargs or {})))
            actual = torch.utils._pytree.tree_leaves(ep.module()(*args, **(kwargs or {})))
    except Exception:
        return False
    if len(expected) != len(actual):
        return False
    for e, a in zip(expected, actual):
        if isinstance(e, torch.Tensor) != isinstance(a, torch.Tensor):
            return False
        if isinstance(e, torch.Tensor):
            if e.shape != a.shape or e.dtype != a.dtype:
                return False
            if e.is_floating_point() and not torch.allclose(e, a, rtol=1e-4, atol=1e-4, equal_nan=True):
                return False
            if not e.is_floating_point() and not torch.equal(e, a):
                return False
        elif e != a:
            return False
    return True


def _makes_static(original, refined):
    """Whether refining turned a dim the caller made dynamic into a number (the model needs that size)."""
    if isinstance(original, dict) and isinstance(refined, dict):
        return any(_makes_static(v, refined.get(k)) for k, v in original.items())
    if isinstance(original, (list, tuple)) and isinstance(refined, (list, tuple)):
        return any(_makes_static(o, r) for o, r in zip(original, refined))
    return original is not None and not isinstance(original, int) and isinstance(refined, int)


def _export_as_torch_onnx(model, args, kwargs, dynamic_shapes, strict, oblivious=True):
    """torch.export.export as torch.onnx calls it: sizes 0 and 1 are not
    specialized (backed_size_oblivious), the model's checks on dynamic sizes
    become run-time asserts in the program rather than guards that fail the
    capture, RNNs with dynamic shapes decompose to while loops, and a capture
    that fails on a dim the model bounds (`seq <= max_position_embeddings`) is
    retried with dynamic_shapes refined from torch.export's suggested fixes
    (unless they fix a dim the caller made dynamic to a number: the error
    stays). oblivious=False: sizes 0 and 1 specialized, as torch.export does.
    Returns the program and the refined dynamic_shapes (None if unchanged)."""
    extra = {}
    if "prefer_deferred_runtime_asserts_over_guards" in inspect.signature(torch.export.export).parameters:
        extra["prefer_deferred_runtime_asserts_over_guards"] = True
    with contextlib.ExitStack() as stack:
        config = getattr(getattr(torch.fx, "experimental", None), "_config", None)
        if oblivious and config is not None and hasattr(config, "backed_size_oblivious"):
            stack.enter_context(config.patch(backed_size_oblivious=True))
        if dynamic_shapes:
            try:
                from torch.export._patches import (register_gru_while_loop_decomposition,
                                                   register_lstm_while_loop_decomposition)
            except ImportError:
                pass
            else:
                stack.enter_context(register_lstm_while_loop_decomposition())
                stack.enter_context(register_gru_while_loop_decomposition())

        def capture(shapes):
            return torch.export.export(model, args, kwargs=kwargs or None, dynamic_shapes=shapes, strict=strict, **extra)

        try:
            return capture(dynamic_shapes), None
        except Exception as e:
            user_error = getattr(getattr(getattr(torch, "_dynamo", None), "exc", None), "UserError", None)
            refine = getattr(torch.export.dynamic_shapes, "refine_dynamic_shapes_from_suggested_fixes", None)
            if dynamic_shapes is None or user_error is None or refine is None or not isinstance(e, user_error):
                raise
            try:
                refined = refine(e.msg, dynamic_shapes)
            except Exception:
                raise e from None
            if _makes_static(dynamic_shapes, refined):  # (torch.onnx exports it static, without a word)
                raise
            return capture(refined), refined


def _specialized(e):
    return "specialized" in str(e) or "Constraints violated" in str(e)


def _grown(args, kwargs, dynamic_shapes, params):
    """(args, kwargs) with each dynamic dim (dynamic_shapes' dict per tensor,
    however nested; a tuple by position or a dict by parameter name) of size 0
    or 1 repeated to size 2, or None if there is none."""
    changed = [False]

    def grow(value, spec):
        if isinstance(value, torch.Tensor):
            if isinstance(spec, dict):
                for axis in spec:
                    if isinstance(axis, int) and value.dim() > axis and value.shape[axis] == 1:
                        value = torch.cat([value, value], dim=axis)
                        changed[0] = True
            return value
        if isinstance(value, (list, tuple)) and isinstance(spec, (list, tuple)) and len(spec) == len(value):
            items = [grow(v, s) for v, s in zip(value, spec)]
            return items if isinstance(value, list) else type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, dict) and isinstance(spec, dict):
            return {k: grow(v, spec.get(k)) for k, v in value.items()}
        return value

    if isinstance(dynamic_shapes, (tuple, list)) and len(dynamic_shapes) == len(args) and not kwargs:
        grown_args, grown_kwargs = tuple(grow(a, s) for a, s in zip(args, dynamic_shapes)), kwargs
    elif isinstance(dynamic_shapes, dict):
        grown_args = tuple(grow(a, dynamic_shapes.get(params[i])) for i, a in enumerate(args))
        grown_kwargs = {k: grow(v, dynamic_shapes.get(k)) for k, v in kwargs.items()}
    else:
        return None
    return (grown_args, grown_kwargs) if changed[0] else None


def _program_ops(ep):
    counts = {}

    def walk(gm):
        for node in gm.graph.nodes:
            if node.op == "call_function":
                name = str(node.target)
                counts[name] = counts.get(name, 0) + 1
            elif node.op == "get_attr":
                sub = getattr(gm, node.target, None)
                if isinstance(sub, torch.fx.GraphModule):
                    walk(sub)

    walk(ep.graph_module)
    return counts


def _write_report(directory, model_name, status, ep, strategy, options, timings, model_proto, verified, error,
                  profiled=None):
    os.makedirs(directory, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
    path = os.path.join(directory, f"onnx_export_{stamp}_{status}.md")
    lines = [f"# torch2onnx export report: {model_name}", "",
             f"- status: **{status}**", f"- torch {torch.__version__}, capture: {strategy}",
             f"- opset {options['opset_version']}", ""]
    if error is not None:
        lines += ["## Error", "", "```", str(error), "```", ""]
    lines += ["## Stages", "", "| stage | seconds |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.3f} |" for name, seconds in timings]
    if ep is not None:
        lines += ["", "## Program operators", "", "| operator | count |", "|---|---:|"]
        lines += [f"| `{op}` | {n} |" for op, n in sorted(_program_ops(ep).items())]
    if model_proto is not None:
        counts = {}
        for n in model_proto.graph.node:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
        lines += ["", f"## ONNX graph (IR version {model_proto.ir_version})", "",
                  f"{len(model_proto.graph.node)} nodes, {len(model_proto.graph.initializer)} initializers.", "",
                  "| ONNX op | count |", "|---|---:|"]
        lines += [f"| {op} | {n} |" for op, n in sorted(counts.items())]
    if verified is not None:
        lines += ["", "## Verification (ONNX Runtime against PyTorch on the example inputs)", "", verified]
    if profiled is not None:
        lines += ["", "## Profile (pyinstrument)", "", "```", profiled, "```"]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path


def _in_memory(ep):
    """(program JSON, {name: tensor}) to hand the C++ core the program with its
    own weights and constants, read in place (no copy of the weights: issue
    38); None where the program has tensors it cannot take so (not on the CPU,
    quantized, sparse, complex, subclasses) or torch cannot serialize the
    program without its weights: the archive path then."""
    try:
        from torch._export.serde.serialize import serialize
    except ImportError:
        return None
    tensors = {}
    for name, t in list(ep.state_dict.items()) + list(ep.constants.items()):
        if not isinstance(t, torch.Tensor):
            continue  # (script objects: the archive path names them)
        if (type(t) not in (torch.Tensor, torch.nn.Parameter) or t.device.type != "cpu" or t.is_quantized
                or t.is_sparse or t.is_complex() or t.dtype not in _IN_MEMORY_DTYPES):
            return None
        tensors[name] = t.detach()
    program_json = _program_json(ep)
    if program_json is not None:
        return program_json, tensors
    try:
        artifact = serialize(ep, serialize_state_dict=False, serialize_constants=False,
                             serialize_example_inputs=False)
    except TypeError:  # (a torch whose serialize always writes the weights)
        return None
    return artifact.exported_program, tensors


def _program_json(ep):
    """The program's JSON as torch._export.serde.serialize.serialize(ep) writes it,
    without the check that serialize runs on a canonical copy of the program it
    then throws away (canonicalize: half of the call on a small model; issue
    39). Built from the same parts serialize uses; None where this torch's
    serializer is not made of them (serialize is then called as it is).
    tests/python/test_dynamo_capture.py compares the two."""
    try:
        from torch._export.serde import schema, serialize as serde

        ep.validate()
        with serde._enable_graph_inputs_of_type_nn_module(ep.example_inputs):
            graph_module = serde.GraphModuleSerializer(ep.graph_signature, ep.module_call_graph).serialize(
                ep.graph_module)
        fields = {f.name for f in dataclasses.fields(schema.ExportedProgram)}
        values = dict(graph_module=graph_module, opset_version=serde.ExportedProgramSerializer().opset_version,
                      range_constraints=serde.serialize_range_constraints(ep.range_constraints),
                      schema_version=schema.SchemaVersion(major=schema.SCHEMA_VERSION[0],
                                                          minor=schema.SCHEMA_VERSION[1]),
                      verifiers=[v.dialect for v in ep.verifiers], torch_version=torch.__version__,
                      guards_code=getattr(ep, "_guards_code", None))
        if not set(values) - {"guards_code"} <= fields or not fields <= set(values):
            return None
        program = schema.ExportedProgram(**{k: v for k, v in values.items() if k in fields})
        return serde._to_json_bytes(program)
    except (ImportError, AttributeError, TypeError):
        return None


_IN_MEMORY_DTYPES = {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                     torch.int16, torch.int32, torch.int64, torch.bool}


def _convert(ep, path, options, timings, lazy=False):
    """The program exported by the C++ core: its JSON and its tensors handed
    over in memory, or (where that cannot be, _in_memory) saved into an
    anonymous in-memory file. With `lazy` (asked with no path and no stream),
    the converted model (serialized when the ONNXProgram is first asked for
    its bytes) where the tensors were handed over in memory, else the bytes."""
    from .utils import _C

    start = time.perf_counter()
    handed = _in_memory(ep)
    if handed is not None:
        program_json, tensors = handed
        timings.append(("torch.export serialize (the program, without its weights)", time.perf_counter() - start))
        start = time.perf_counter()
        data = _C().export_program_in_memory(program_json, tensors, path, options, lazy=lazy)
        done = "convert, write" if path is not None or isinstance(data, bytes) else "convert; serialized when asked"
        timings.append((f"torch2onnx (C++: {done})", time.perf_counter() - start))
        return data
    start = time.perf_counter()
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    timings.append(("torch.export.save (in memory)", time.perf_counter() - start))
    start = time.perf_counter()
    fd = os.memfd_create("program.pt2")
    try:
        view = buffer.getbuffer()
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:])
        del view, buffer
        data = _C().export_program(f"/proc/self/fd/{fd}", path, options)
    finally:
        os.close(fd)
    timings.append(("torch2onnx (C++: read, convert, write)", time.perf_counter() - start))
    return data


def _start_profiler(profile):
    """torch.onnx's profile=True: pyinstrument over the export (its text in the report, else printed)."""
    if not profile:
        return None
    try:
        import pyinstrument
    except ImportError as e:
        raise ImportError("profile=True profiles the export with pyinstrument: `pip install pyinstrument`") from e
    profiler = pyinstrument.Profiler(async_mode="disabled")
    profiler.start()
    return profiler


def export(model, args, f, kwargs, options, dynamic_shapes, verify, report, artifacts_dir, profile=False,
           dump_exported_program=False):
    """The dynamo=True path of torch2onnx.export; `options` as utils._options makes them.
    dump_exported_program writes the captured program to <artifacts_dir>/onnx_export_<time>.pt2, profile
    profiles the export (pyinstrument), as torch.onnx does."""
    from .utils import _target

    path, stream = _target(f) if f is not None else (None, None)
    if stream is not None or path is None:
        options["external_data"] = False
    args, kwargs = _split(args, kwargs)
    timings = []
    ep, strategy, model_proto, verified, error = None, "-", None, None, None
    name = type(model).__name__
    profiler = _start_profiler(profile)
    profiled = None
    try:
        if options.get("dynamic_axes") and dynamic_shapes is None and not isinstance(model, torch.export.ExportedProgram):
            dynamic_shapes = _shapes_from_axes(model, args, kwargs, options.get("input_names"),
                                               options["dynamic_axes"])
        with _modes._exporting(options["opset_version"]), _logging._core_log():
            ep, strategy = _capture(model, args, kwargs, dynamic_shapes, timings)
            if dump_exported_program:
                os.makedirs(artifacts_dir or ".", exist_ok=True)
                stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
                dumped = os.path.join(artifacts_dir or ".", f"onnx_export_{stamp}.pt2")
                try:
                    torch.export.save(ep, dumped)
                except Exception as e:  # (as torch.onnx: the export goes on)
                    _logging.log(f"could not save the exported program: {e}")
                else:
                    _logging.log(f"the exported program is saved to '{dumped}'")
            axes = _axes_from_shapes(ep, options.get("input_names"), dynamic_shapes)
            options["dynamic_axes"] = {**axes, **(options.get("dynamic_axes") or {})} or None
            lazy = stream is None and path is None
            try:
                data = _convert(ep, path, options, timings, lazy)
            except errors.OnnxExporterError as e:
                if "writes into" not in str(e):
                    raise
                # In-place writes into views (torch.export's training IR keeps
                # them): the functional program computes the same.
                start = time.perf_counter()
                ep = ep.run_decompositions({})
                timings.append(("functionalize (run_decompositions({}))", time.perf_counter() - start))
                strategy += ", functionalized"
                data = _convert(ep, path, options, timings, lazy)
        _logging.log(f"exported {name} via torch.export (opset {options['opset_version']}) in "
                     f"{sum(t for _, t in timings):.3f} s")
        if stream is not None:
            stream.write(data)
        program = ONNXProgram(data, path, ep)
        program._capture_strategy = strategy
        if report:
            model_proto = program.model_proto
        if verify or "grown" in strategy:
            # (a program captured from a grown example must still compute what
            # the model does on the example itself: checked, verify or not)
            from . import verification

            with torch.no_grad():
                expected = (model if isinstance(model, torch.nn.Module) else ep.module())(*args, **kwargs)
            actual = program(*args, **kwargs)
            try:
                verification.compare(verification._flatten(expected, numbers=True, none=False),
                                     [a.numpy() for a in actual])
            except verification.VerificationError as e:
                if verify:
                    raise
                if path is not None and os.path.exists(path):  # a wrong model is not left behind
                    os.remove(path)
                raise errors.OnnxExporterError(
                    "the model specializes on a dim dynamic_shapes makes dynamic: captured at size 2 (torch.export "
                    "fixes sizes 0 and 1), the program differs from the model on the example itself "
                    f"({e}); export it with an example of size >= 2 on its dynamic dims") from e
            verified = f"{len(actual)} output(s) match (max |ort - torch| <= 1e-4 (1 + max |torch|))."
        return program
    except Exception as e:
        error = e
        raise
    finally:
        if profiler is not None:
            profiler.stop()
            profiled = profiler.output_text(unicode=True)
            if not report:
                print(profiled)
        if report:
            status = "success" if error is None else "failure"
            _write_report(artifacts_dir or ".", name, status, ep, strategy, options, timings, model_proto,
                          verified, error, profiled)
