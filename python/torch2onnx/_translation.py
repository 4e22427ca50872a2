"""custom_translation_table, as torch.onnx's dynamo exporter takes it (issue 41):
{torch.ops.<ns>.<op>.<overload> (or the op itself): an ONNX Script function,
or a list of them}. Each function's body (its FunctionProto) is inlined where
the operator is called, its inputs bound to the call's tensors and its
attributes to the call's constants, by parameter name (else in order). The
table's conversions win over built-in and registered ones, on both paths:
they are registered (as register_custom_op_symbolic registers, at the
export's opset) for the export and removed after it. ONNX Script is needed
only by this feature."""
import contextlib

import torch

from . import errors

# AttributeProto.type -> g.op's attribute suffix
_SUFFIX = {1: "f", 2: "i", 3: "s", 4: "t", 6: "fs", 7: "is", 8: "ss"}


def symbolics(table):
    """{operator name ("mylib::op"): symbolic(g, *values)} for the table (None for an empty one)."""
    if not table:
        return None
    if not isinstance(table, dict):
        raise errors.ExportUsageError(f"custom_translation_table must be a dict, not {type(table).__name__}")
    by_name = {}
    for key, fns in table.items():
        name = _op_name(key)
        fns = list(fns) if isinstance(fns, (list, tuple)) else [fns]
        for fn in fns:
            if not hasattr(fn, "to_function_proto") or not hasattr(fn, "op_signature"):
                raise errors.ExportUsageError(
                    f"custom_translation_table[{key}] must be an ONNX Script function (@onnxscript.script()) or a "
                    f"list of them, not {type(fn).__name__}")
        known = by_name.setdefault(name, [])
        if known and [id(f) for f in known] != [id(f) for f in fns]:
            raise errors.ExportUsageError(
                f"custom_translation_table gives overloads of {name} different functions: torch2onnx converts an "
                "operator by its name, one list of functions for all its overloads")
        by_name[name] = fns
    return {name: _symbolic(name, fns) for name, fns in by_name.items()}


@contextlib.contextmanager
def applied(table, opset):
    """The table's conversions in force during the `with` block (an export at `opset`). Like
    register_custom_op_symbolic, they are the process's while they last: exports running at the same time in
    other threads see them too."""
    from . import _C

    fns = symbolics(table) or {}
    registered = []
    try:
        for name, fn in fns.items():
            if opset in _C.registered_opsets(name):
                raise errors.ExportUsageError(
                    f"custom_translation_table converts {name}, which register_custom_op_symbolic already gave a "
                    f"symbolic at opset {opset}: unregister that one, or leave {name} out of the table")
            _C.register_symbolic(name, opset, fn)
            registered.append(name)
        yield
    finally:
        for name in registered:
            _C.unregister_symbolic(name, opset)


def _op_name(key):
    schema = getattr(key, "_schema", None)
    if schema is not None:  # OpOverload
        return schema.name
    qualified = getattr(key, "_qualified_op_name", None)  # OpOverloadPacket
    if qualified is not None:
        return qualified
    raise errors.ExportUsageError(
        f"custom_translation_table's keys are operators (torch.ops.<namespace>.<op>[.<overload>]), not {key!r}")


def _symbolic(name, fns):
    def symbolic(g, *values):
        failures = []
        for fn in fns:
            try:
                bound = _bind(fn, values)
            except TypeError as e:
                failures.append(f"{fn.name}: {e}")
                continue
            return _inline(g, fn, *bound)
        raise errors.OnnxExporterError(f"no function of custom_translation_table[{name}] takes its arguments: "
                                       + "; ".join(failures))

    return symbolic


def _bind(fn, values):
    """(inputs by parameter name, attributes by name) of `fn` for the call's values: by name where the call's
    arguments have the function's parameter names, else in order."""
    named = {}
    for v in values:
        n = v.debugName() if hasattr(v, "debugName") else ""
        if n:
            named.setdefault(n, v)
    params = list(fn.op_signature.params)
    use_names = all(p.name in named for p in params if getattr(p, "required", False))
    inputs, attrs = {}, {}
    for position, p in enumerate(params):
        v = named.get(p.name) if use_names else (values[position] if position < len(values) else None)
        is_attribute = bool(p.is_attribute() if callable(getattr(p, "is_attribute", None)) else
                            type(p).__name__ == "AttributeParameter")
        if v is None or v.is_none():
            if getattr(p, "required", False) and not is_attribute:
                raise TypeError(f"no value for its input '{p.name}'")
            if is_attribute and p.has_default():
                attrs[p.name] = p.default.value if hasattr(p.default, "value") else p.default
            elif is_attribute and getattr(p, "required", False):
                raise TypeError(f"no value for its attribute '{p.name}'")
            if not is_attribute:
                inputs[p.name] = None
            continue
        if is_attribute:
            if not v.is_constant():
                raise TypeError(f"its attribute '{p.name}' is computed at run time, not a constant")
            attrs[p.name] = v.value()
        else:
            inputs[p.name] = v
    return inputs, attrs


def _attribute(a, attrs):
    """(g.op keyword, value) of a node's AttributeProto, or None for a reference to an attribute not given."""
    import onnx

    if a.ref_attr_name:
        if a.ref_attr_name not in attrs:
            return None
        value = attrs[a.ref_attr_name]
    else:
        if a.type == onnx.AttributeProto.GRAPH or a.type == onnx.AttributeProto.GRAPHS:
            raise errors.OnnxExporterError(f"attribute '{a.name}' is a graph: torch2onnx does not inline control "
                                           "flow from custom_translation_table functions")
        value = onnx.helper.get_attribute_value(a)
        if a.type == onnx.AttributeProto.TENSOR:
            value = torch.from_numpy(onnx.numpy_helper.to_array(value).copy())
        elif a.type == onnx.AttributeProto.STRING:
            value = value.decode()
        elif a.type == onnx.AttributeProto.STRINGS:
            value = [s.decode() for s in value]
    suffix = _SUFFIX.get(a.type)
    if suffix is None:
        raise errors.OnnxExporterError(f"attribute '{a.name}' is of a type torch2onnx cannot carry ({a.type})")
    if suffix == "f" and isinstance(value, (list, tuple)):
        suffix = "fs"
    if suffix == "t" and not isinstance(value, torch.Tensor):
        value = torch.tensor(value)
    return f"{a.name}_{suffix}", value


def _inline(g, fn, inputs, attrs):
    proto = fn.to_function_proto()
    versions = {o.domain: o.version for o in proto.opset_import}
    if versions.get("", 0) > g.opset:
        raise errors.OnnxExporterError(f"{fn.name} is written for opset {versions['']}, above the export's "
                                       f"{g.opset}")
    env = {name: inputs.get(name) for name in proto.input}
    for node in proto.node:
        if node.domain not in ("", "ai.onnx") and node.domain == proto.domain:
            raise errors.OnnxExporterError(f"{fn.name} calls {node.domain}::{node.op_type}, a function of its own "
                                           "domain, which torch2onnx does not inline")
        kwargs = dict(kv for kv in (_attribute(a, attrs) for a in node.attribute) if kv is not None)
        args = [env[i] if i else None for i in node.input]
        op = f"{node.domain}::{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
        out = g.op(op, *args, outputs=len(node.output), **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        for name, value in zip(node.output, outs):
            if name:
                env[name] = value
    results = [env[o] for o in proto.output]
    return results[0] if len(results) == 1 else tuple(results)
