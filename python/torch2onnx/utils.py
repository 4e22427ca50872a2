"""torch2onnx.export and the functions around it (torch.onnx.utils' API)."""
import contextlib
import io
import os
import re
import time
import warnings

import torch

from . import _args, _logging, _modes, _translation, errors
from ._modes import OperatorExportTypes, TrainingMode

__all__ = [
    "export",
    "export_to_pretty_string",
    "unconvertible_ops",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
]

DEFAULT_OPSET = 17  # torch.onnx's default (dynamo=False); dynamo=True: 20 (_C.DEFAULT_PROGRAM_OPSET)

# torch 1.13's positional order after (model, args, f), for calls written
# against the older signature.
_LEGACY_POSITIONAL = (
    "export_params", "verbose", "training", "input_names", "output_names", "operator_export_type",
    "opset_version", "do_constant_folding", "dynamic_axes", "keep_initializers_as_inputs", "custom_opsets",
    "export_modules_as_functions",
)


def _C():
    from . import _C as core

    return core


def _options(opset_version, export_params, verbose, training, input_names, output_names, operator_export_type,
             do_constant_folding, dynamic_axes, keep_initializers_as_inputs, custom_opsets, external_data,
             export_modules_as_functions, default_opset=DEFAULT_OPSET, optimize=True):
    operator_export_type = _modes._coerce(operator_export_type, OperatorExportTypes, "operator_export_type")
    if keep_initializers_as_inputs is None:
        keep_initializers_as_inputs = operator_export_type != OperatorExportTypes.ONNX
    opset = default_opset if opset_version is None else opset_version
    if not isinstance(opset, int) or isinstance(opset, bool):
        raise errors.ExportUsageError(f"opset_version must be an int, not {opset!r}")
    if export_modules_as_functions and opset < 15:
        raise errors.ExportUsageError(
            "export_modules_as_functions needs opset_version 15 or above (ONNX local functions), "
            f"not {opset}")

    def names(value, what):
        if value is None:
            return None
        if isinstance(value, str) or not all(isinstance(n, str) for n in value):
            raise errors.ExportUsageError(f"{what} must be a list of str, not {value!r}")
        return list(value)

    if dynamic_axes is not None and not isinstance(dynamic_axes, dict):
        raise errors.ExportUsageError(f"dynamic_axes must be a dict, not {type(dynamic_axes).__name__}")
    if custom_opsets is not None and not isinstance(custom_opsets, dict):
        raise errors.ExportUsageError(f"custom_opsets must be a dict, not {type(custom_opsets).__name__}")
    return {
        "opset_version": opset,
        "export_params": bool(export_params),
        "verbose": bool(verbose),
        "training": int(training),
        "input_names": names(input_names, "input_names"),
        "output_names": names(output_names, "output_names"),
        "operator_export_type": int(operator_export_type),
        "do_constant_folding": bool(do_constant_folding),
        "optimize": bool(optimize),
        "dynamic_axes": dynamic_axes,
        "keep_initializers_as_inputs": bool(keep_initializers_as_inputs),
        "custom_opsets": dict(custom_opsets or {}),
        "external_data": bool(external_data),
    }


def _target(f):
    """(path or None, file-like or None) for export's `f`."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return path, None
    if f is not None and hasattr(f, "write"):
        return None, f
    raise errors.ExportUsageError(
        f"f must be a file path or a binary file-like object (with write()), not {type(f).__name__}")


def _prepare(model, args, kwargs, training):
    positional, keyword = _args.split_args(args, kwargs)
    module, values = _args.prepare(model, positional, keyword)
    return module, values, positional, keyword


def export(model, args=(), f=None, *legacy, kwargs=None, export_params=True, verbose=False,
           training=TrainingMode.EVAL, input_names=None, output_names=None,
           operator_export_type=OperatorExportTypes.ONNX, opset_version=None, do_constant_folding=True,
           dynamic_axes=None, keep_initializers_as_inputs=None, custom_opsets=None,
           export_modules_as_functions=False, external_data=False, verify=False, autograd_inlining=True,
           **other):
    """Exports `model` to ONNX at `f`, as torch.onnx.export does, with the work done in C++.

    model: an nn.Module (traced with `args`), a ScriptModule or a ScriptFunction.
    args: a tensor, or a tuple of args; a trailing dict holds keyword args (add an
        empty dict to pass a dict as the last positional arg). Tensors become
        graph inputs, in order; other values are baked into a traced model
        (scripted models take int/float/bool arguments as 0-d inputs).
    f: a path, or a binary file-like object.
    opset_version: 9 to 28 (default 17; 20 with dynamo=True, as torch.onnx; the build on ONNX 1.12 stops at 17).
    verify: run the exported model in ONNX Runtime and compare it with PyTorch.
    report: True (or a path) writes a Markdown report of the export: stages
        with time and memory, PyTorch operators and the ONNX operators they
        became, opset and IR version, operators that cannot be converted,
        the verification table (verify=True) and the graph picture; True
        writes <artifacts_dir or f's folder>/<f's name>_report.md.
    graph: a path: also draw the exported graph there (SVG, Graphviz's dot),
        nodes grouped by module scope, shapes on the edges.
    autograd_inlining: False keeps every torch.autograd.Function call as one
        node (it then needs a `symbolic`).
    The other options have torch.onnx.export's meaning. Options of older and
    newer torch.onnx versions are accepted too (example_outputs,
    strip_doc_string, use_external_data_format, aten, dynamo...), with a
    warning where they change nothing.
    """
    if legacy:
        if len(legacy) > len(_LEGACY_POSITIONAL):
            raise TypeError(f"export() takes at most {3 + len(_LEGACY_POSITIONAL)} positional arguments")
        local = locals()
        named = {k: local[k] for k in _LEGACY_POSITIONAL}
        for name, value in zip(_LEGACY_POSITIONAL, legacy):
            if named[name] is not export.__kwdefaults__[name]:
                raise TypeError(f"export() got multiple values for argument '{name}'")
            named[name] = value
        return export(model, args, f, kwargs=kwargs, external_data=external_data, verify=verify,
                      autograd_inlining=autograd_inlining, **named, **other)
    if other.get("dynamo") or _is_exported_program(model):
        return _export_dynamo(model, args, f, kwargs, verbose, input_names, output_names, opset_version,
                              dynamic_axes, custom_opsets, external_data, verify, export_params, other,
                              training=training, operator_export_type=operator_export_type,
                              do_constant_folding=do_constant_folding,
                              keep_initializers_as_inputs=keep_initializers_as_inputs)
    keep_doc_strings = _legacy_options(other)
    if other.get("aten"):
        operator_export_type = OperatorExportTypes.ONNX_ATEN
    if other.get("use_external_data_format"):
        external_data = True
    if f is None:
        raise errors.ExportUsageError("export() needs f: a file path or a binary file-like object")
    path, stream = _target(f)
    if stream is not None:
        # Weights go next to a model file; into a stream they are embedded,
        # as torch.onnx (dynamo=False) does whatever external_data says.
        external_data = False
    training = _modes._coerce(training, TrainingMode, "training")
    effective = _modes._training_of(model, training)
    options = _options(opset_version, export_params, verbose, effective, input_names, output_names,
                       operator_export_type, do_constant_folding, dynamic_axes, keep_initializers_as_inputs,
                       custom_opsets, external_data, export_modules_as_functions,
                       optimize=other.get("optimize", True))
    options["keep_doc_strings"] = keep_doc_strings
    options["inline_autograd"] = bool(autograd_inlining)
    table = other.get("custom_translation_table")
    if other.get("graph"):
        options["graph_picture"] = os.fspath(other["graph"])
    report = _report_path(other.get("report"), other.get("artifacts_dir"), path, model)
    if report:
        options["report"] = report
    if export_modules_as_functions:
        options["modules_as_functions"] = _function_classes(model, export_modules_as_functions)
    start = time.perf_counter()
    with _modes._exporting(options["opset_version"]), _modes.select_model_mode_for_export(model, training), \
            _logging._core_log():
        with _modes.keep_module_attributes(model):
            module, values, positional, keyword = _prepare(model, args, kwargs, training)
        _logging.log(f"traced {type(model).__name__} in {time.perf_counter() - start:.3f} s")
        # (into a stream piece by piece, unless verify needs the bytes)
        with _translation.applied(table, options["opset_version"]):
            data, unused = _C().export(module, values, path, options,
                                       stream if stream is not None and not verify else None)
    if stream is not None:
        if data is not None:
            stream.write(data)
        if hasattr(stream, "flush"):
            stream.flush()
    _logging.log(f"exported {type(model).__name__} (opset {options['opset_version']}) in "
                 f"{time.perf_counter() - start:.3f} s")
    if verify:
        from . import verification

        onnx_bytes = data if path is None else None
        with _modes.select_model_mode_for_export(model, training):
            verification._verify_export(model, positional, keyword, path if path is not None else onnx_bytes,
                                        values,
                                        scripted=isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)),
                                        unused=unused, report=report)
    return None


def _export_part(fn, args, opset_version, do_constant_folding):
    """A graph part (a ScriptFunction, for find_mismatch) exported to bytes:
    returns (bytes, the flattened values it was given, the indices of those
    the graph does not take)."""
    options = _options(opset_version, True, False, TrainingMode.EVAL, None, None, OperatorExportTypes.ONNX,
                       do_constant_folding, None, False, None, False, False)
    options["keep_doc_strings"] = False
    options["inline_autograd"] = True
    with _modes._exporting(options["opset_version"]):
        module, values, _, _ = _prepare(fn, args, None, TrainingMode.EVAL)
        data, unused = _C().export(module, values, None, options)
    return data, values, unused


def _report_path(report, artifacts_dir, path, model):
    """Where report=... writes: a path as given, or for True
    <artifacts_dir>/<model file name>_report.md (the model's class name when
    exported to a stream)."""
    if not report:
        return None
    if report is not True:
        return os.fspath(report)
    stem = os.path.splitext(os.path.basename(path))[0] if path else type(model).__name__
    directory = artifacts_dir or (os.path.dirname(path) if path else ".") or "."
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, f"{stem}_report.md")


def _is_exported_program(model):
    export = getattr(torch, "export", None)
    return export is not None and isinstance(model, getattr(export, "ExportedProgram", ()))


# torch.onnx.export(dynamo=True)'s keywords besides export()'s own.
_DYNAMO_KEYWORDS = {"dynamo", "dynamic_shapes", "report", "optimize", "artifacts_dir", "profile",
                    "dump_exported_program", "fallback", "custom_translation_table"}


def _export_dynamo(model, args, f, kwargs, verbose, input_names, output_names, opset_version, dynamic_axes,
                   custom_opsets, external_data, verify, export_params, other, training=TrainingMode.EVAL,
                   operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True,
                   keep_initializers_as_inputs=None):
    """export(..., dynamo=True) or an ExportedProgram: see _dynamo.

    optimize=False leaves out the ONNX-side optimizations (fusions, common
    subexpressions, ...; ExportOptions::optimize), as torch.onnx's leaves out
    its optimizer. Unlike torch.onnx 2.14 (which ignores them there), training,
    operator_export_type and do_constant_folding do on this path what they do
    with dynamo=False: the module is captured in the training mode asked for
    (an ExportedProgram's mode was fixed when it was captured: TRAINING is an
    error for one), operators are kept as ATen / passthrough nodes as asked,
    and constant folding can be turned off. keep_initializers_as_inputs as torch.onnx."""
    from . import _dynamo

    if not hasattr(torch, "export"):
        raise errors.ExportUsageError(f"dynamo=True captures the model with torch.export, which torch "
                                      f"{torch.__version__} does not have (PyTorch 2.x does): use dynamo=False")
    for name, value in other.items():
        if name not in _DYNAMO_KEYWORDS:
            raise TypeError(f"export() got an unexpected keyword argument '{name}' (with dynamo=True)")
        if name == "fallback" and value:  # (torch.onnx 2.11 removed it)
            warnings.warn(f"torch2onnx.export ignores {name}={value!r}", stacklevel=3)
    training = _modes._coerce(training, TrainingMode, "training")
    program_given = _is_exported_program(model)
    if program_given and training == TrainingMode.TRAINING:
        raise errors.ExportUsageError(
            "training=TrainingMode.TRAINING with an ExportedProgram: its training mode was fixed when torch.export "
            "captured it (capture the module in training mode, or pass the module with dynamo=True)")
    effective = TrainingMode.EVAL if program_given else _modes._training_of(model, training)
    options = _options(opset_version, export_params, verbose, effective, input_names, output_names,
                       operator_export_type, do_constant_folding, dynamic_axes,
                       bool(keep_initializers_as_inputs), custom_opsets, external_data, False,
                       default_opset=_C().DEFAULT_PROGRAM_OPSET, optimize=other.get("optimize", True))
    mode = contextlib.nullcontext() if program_given else _modes.select_model_mode_for_export(model, training)
    with mode, _translation.applied(other.get("custom_translation_table"), options["opset_version"]):
        return _dynamo.export(model, args, f, kwargs, options, other.get("dynamic_shapes"), verify,
                              other.get("report", False), other.get("artifacts_dir", "."),
                              profile=bool(other.get("profile")),
                              dump_exported_program=bool(other.get("dump_exported_program")))


# Options of other torch.onnx versions: what they do here.
_IGNORED = {
    "example_outputs": "torch2onnx runs the model on args to learn the outputs",
    "_retain_param_name": "parameter names are always kept",
    "enable_onnx_checker": "the ONNX checker always runs",
    "dynamo": "torch2onnx exports as torch.onnx's TorchScript exporter (dynamo=False) does",
    "profile": None, "dump_exported_program": None, "fallback": None,
    # torch.onnx.utils._export's keywords: node names are always added, ONNX
    # shape inference always runs; the batch size is the example's unless
    # dynamic_axes frees it, which is what fixed_batch_size asks for RNNs.
    "export_type": None, "add_node_names": "nodes are always named",
    "onnx_shape_inference": "ONNX shape inference always runs", "fixed_batch_size": None,
}
# torch 2.x options whose default (or any value) changes nothing here: no warning.
_QUIET = {"dynamo": (False, None), "report": (False,), "profile": (False,), "dump_exported_program": (False,),
          "optimize": (True, False), "artifacts_dir": None,
          "_retain_param_name": None, "enable_onnx_checker": None, "export_type": None,
          "add_node_names": (True,), "onnx_shape_inference": (True,), "fixed_batch_size": None}
_HANDLED = {"strip_doc_string", "aten", "use_external_data_format", "export_raw_ir", "graph", "report",
            "artifacts_dir", "custom_translation_table"}


def _export(model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL, input_names=None,
            output_names=None, operator_export_type=OperatorExportTypes.ONNX, export_type=None, opset_version=None,
            do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None, fixed_batch_size=False,
            custom_opsets=None, add_node_names=True, onnx_shape_inference=True, export_modules_as_functions=False,
            autograd_inlining=True):
    """torch.onnx.utils._export's signature (what torch.onnx's own helpers and
    tests call): exports as export() does and returns the model's outputs on
    `args`, as torch.onnx's returns them."""
    export(model, args, f, export_params=export_params, verbose=verbose, training=training, input_names=input_names,
           output_names=output_names, operator_export_type=operator_export_type, export_type=export_type,
           opset_version=opset_version, do_constant_folding=do_constant_folding, dynamic_axes=dynamic_axes,
           keep_initializers_as_inputs=keep_initializers_as_inputs, fixed_batch_size=fixed_batch_size,
           custom_opsets=custom_opsets, add_node_names=add_node_names, onnx_shape_inference=onnx_shape_inference,
           export_modules_as_functions=export_modules_as_functions, autograd_inlining=autograd_inlining)
    from ._args import clone_tensors, split_args

    positional, keyword = split_args(args if isinstance(args, tuple) else (args,), None)
    with torch.no_grad(), _modes.select_model_mode_for_export(model, training):
        return model(*clone_tensors(tuple(positional)), **clone_tensors(dict(keyword or {})))


def _legacy_options(other):
    """Checks export()'s extra keyword options; returns keep_doc_strings."""
    for name, value in other.items():
        if name in _HANDLED or name == "optimize":
            continue
        if name == "dynamic_shapes":
            if value:  # what torch.onnx.export(dynamo=False) says
                raise ValueError("The exporter only supports dynamic shapes through parameter dynamic_axes when "
                                 "dynamo=False.")
            continue
        if name not in _IGNORED:
            raise TypeError(f"export() got an unexpected keyword argument '{name}'")
        quiet = _QUIET.get(name, (None, False))
        if quiet is not None and not any(value is q for q in quiet):
            why = _IGNORED[name] or "it is an option of torch.onnx's dynamo exporter"
            warnings.warn(f"torch2onnx.export ignores {name}={value!r}: {why}", stacklevel=3)
    if other.get("export_raw_ir"):
        raise errors.ExportUsageError("export_raw_ir is not supported: torch2onnx always exports ONNX operators")
    return not other.get("strip_doc_string", True)


def _function_classes(model, spec):
    """Qualified names of the module classes whose calls become ONNX functions."""
    if spec is True:
        if not isinstance(model, torch.nn.Module):
            return ["*"]
        return sorted({_qualname(type(m)) for _, m in model.named_modules() if m is not model})
    if isinstance(spec, (set, list, tuple, frozenset)):
        out = []
        for cls in spec:
            if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
                raise errors.ExportUsageError(
                    f"export_modules_as_functions must be a bool or a set of nn.Module classes, got {cls!r}")
            out.append(_qualname(cls))
        return sorted(out)
    raise errors.ExportUsageError(
        f"export_modules_as_functions must be a bool or a set of nn.Module classes, not {spec!r}")


def _qualname(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def export_to_pretty_string(model, args=(), export_params=True, verbose=False, training=TrainingMode.EVAL,
                            input_names=None, output_names=None, operator_export_type=OperatorExportTypes.ONNX,
                            export_type=None, google_printer=False, opset_version=None,
                            keep_initializers_as_inputs=None, custom_opsets=None, add_node_names=True,
                            do_constant_folding=True, dynamic_axes=None, *, kwargs=None):
    """The exported model as readable text instead of a file: the graph as
    verbose=True prints it, or (google_printer=True) the ModelProto in protobuf
    text format."""
    training = _modes._coerce(training, TrainingMode, "training")
    options = _options(opset_version, export_params, verbose, _modes._training_of(model, training), input_names,
                       output_names, operator_export_type, do_constant_folding, dynamic_axes,
                       keep_initializers_as_inputs, custom_opsets, False, False)
    with _modes._exporting(options["opset_version"]), _modes.select_model_mode_for_export(model, training):
        module, values, _, _ = _prepare(model, args, kwargs, training)
        if google_printer:
            import onnx

            return str(onnx.load_from_string(_C().export(module, values, None, options)[0]))
        return _C().export_to_pretty_string(module, values, options)


def unconvertible_ops(model, args, training=TrainingMode.EVAL, opset_version=None):
    """(graph, names): the TorchScript graph torch2onnx converts, and every
    operator in it that has no conversion at `opset_version` (all at once)."""
    training = _modes._coerce(training, TrainingMode, "training")
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    with _modes._exporting(opset), _modes.select_model_mode_for_export(model, training):
        module, values, _, _ = _prepare(model, args, None, training)
        return _C().unconvertible_ops(module, values, opset)


_NAME = re.compile(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$")


def _check_symbolic_name(name):
    if not isinstance(name, str) or not _NAME.match(name):
        raise errors.OnnxExporterError(
            f"Failed to register operator {name}. The symbolic name must match the format domain::name, "
            "and should start with a letter and contain only alphanumerical characters")
    if name.split("::")[0] == "onnx":
        raise ValueError(f"Failed to register operator {name}. onnx domain cannot be modified.")


def _opset_for_registration(opset_version):
    core = _C()
    if not isinstance(opset_version, int) or opset_version > core.MAX_OPSET:
        raise errors.ExportUsageError(
            f"opset_version must be an int up to {core.MAX_OPSET}, not {opset_version!r}")
    # Declared "from opset N on": below the lowest exported opset it means from that one.
    return max(opset_version, core.MIN_OPSET)


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Converts operator `symbolic_name` ("custom_ops::foo", or "aten::relu" to
    replace a built-in) with `symbolic_fn(g, *inputs)` from `opset_version` on.
    The function builds ONNX with g.op("Foo", x, alpha_f=1.0) and returns the
    values it made."""
    _check_symbolic_name(symbolic_name)
    if not callable(symbolic_fn):
        raise TypeError(f"symbolic_fn must be callable, not {type(symbolic_fn).__name__}")
    _C().register_symbolic(symbolic_name, _opset_for_registration(opset_version), symbolic_fn)


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Removes what register_custom_op_symbolic(symbolic_name, ..., opset_version) registered."""
    _check_symbolic_name(symbolic_name)
    _C().unregister_symbolic(symbolic_name, _opset_for_registration(opset_version))
