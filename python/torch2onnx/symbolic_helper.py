"""Helpers for Python symbolic functions, as in torch.onnx.symbolic_helper.

    @parse_args("v", "f", "i")
    def symbolic_foo(g, x, alpha, axis):
        return g.op("custom_domain::Foo", x, alpha_f=alpha, axis_i=axis)

A symbolic's inputs are torch2onnx._C.Value objects (constants read with
value()); constants of autograd Functions arrive as Python values.
"""
import functools

import torch

from . import errors

__all__ = [
    "parse_args",
    "_parse_arg",
    "_is_value",
    "_is_none",
    "_is_constant",
    "_scalar",
    "_maybe_get_const",
    "_get_const",
    "_get_tensor_sizes",
    "_get_tensor_rank",
    "_get_tensor_dim_size",
    "_unsqueeze_helper",
    "_squeeze_helper",
]


def _value_class():
    from . import _C

    return _C.Value


def _is_value(x):
    return isinstance(x, _value_class())


def _is_none(x):
    return x is None or (_is_value(x) and x.is_none())


def _is_constant(x):
    return not _is_value(x) or x.is_constant()


def _parse_arg(value, desc, arg_name=None, node_name=None):
    """The Python value of `value` read as `desc`: "v"/"none" keep the Value,
    "i" int, "f" float, "b" bool, "s" str, "is" int list, "fs" float list,
    "t" tensor."""
    if desc in ("v", "none"):
        return value
    if _is_none(value):
        return None
    if _is_value(value):
        if not value.is_constant():
            where = f" of {node_name}" if node_name else ""
            raise errors.SymbolicValueError(
                f"argument {arg_name or value!r}{where} must be a constant to be read as '{desc}', "
                "but it is computed at run time")
        raw = value.value()
    else:
        raw = value
    try:
        if desc == "i":
            return int(raw[0] if isinstance(raw, list) and len(raw) == 1 else raw)
        if desc == "f":
            return float(raw[0] if isinstance(raw, list) and len(raw) == 1 else raw)
        if desc == "b":
            return bool(raw[0] if isinstance(raw, list) and len(raw) == 1 else raw)
        if desc == "s":
            return str(raw)
        if desc == "is":
            return [int(v) for v in raw] if isinstance(raw, (list, tuple)) else [int(raw)]
        if desc == "fs":
            return [float(v) for v in raw] if isinstance(raw, (list, tuple)) else [float(raw)]
        if desc == "t":
            return torch.tensor(raw)
    except (TypeError, ValueError) as e:
        raise errors.SymbolicValueError(f"cannot read {raw!r} as '{desc}': {e}") from e
    raise ValueError(f"unknown argument descriptor '{desc}' (use v, i, f, b, s, is, fs, t or none)")


def parse_args(*arg_descriptors):
    """Decorator: converts a symbolic's inputs by descriptor before calling it."""

    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            if len(args) < len(arg_descriptors):
                raise errors.SymbolicValueError(
                    f"{fn.__name__} declares {len(arg_descriptors)} arguments in parse_args but got {len(args)}")
            parsed = [_parse_arg(a, d, i, fn.__name__) for i, (a, d) in enumerate(zip(args, arg_descriptors))]
            return fn(g, *parsed, *args[len(arg_descriptors):], **kwargs)

        return wrapper

    return decorator


def _scalar(x):
    """The Python number held by a constant (torch.onnx's _scalar)."""
    v = x.value() if _is_value(x) else x
    if isinstance(v, list):
        if len(v) != 1:
            raise errors.SymbolicValueError(f"expected a single number, got {len(v)} values")
        v = v[0]
    return v


def _maybe_get_const(value, desc):
    """The constant's Python value, or `value` itself when computed at run time."""
    if _is_value(value) and not value.is_constant():
        return value
    return _parse_arg(value, desc)


def _get_const(value, desc, arg_name):
    if _is_value(value) and not value.is_constant():
        raise errors.SymbolicValueError(f"ONNX export needs '{arg_name}' to be a constant")
    return _parse_arg(value, desc, arg_name)


def _get_tensor_sizes(x, allow_nonstatic=True):
    sizes = x.sizes() if _is_value(x) else None
    if sizes is None or (not allow_nonstatic and any(s is None for s in sizes)):
        return None
    return sizes


def _get_tensor_rank(x):
    return x.rank() if _is_value(x) else None


def _get_tensor_dim_size(x, dim):
    sizes = _get_tensor_sizes(x)
    return sizes[dim] if sizes is not None else None


def _unsqueeze_helper(g, input, axes_i):
    """Unsqueeze with axes as an attribute (opset < 13) or an input (13+)."""
    if g.opset >= 13:
        return g.op("Unsqueeze", input, g.op("Constant", value_t=torch.tensor(list(axes_i), dtype=torch.long)))
    return g.op("Unsqueeze", input, axes_i=list(axes_i))


def _squeeze_helper(g, input, axes_i):
    if g.opset >= 13:
        return g.op("Squeeze", input, g.op("Constant", value_t=torch.tensor(list(axes_i), dtype=torch.long)))
    return g.op("Squeeze", input, axes_i=list(axes_i))
