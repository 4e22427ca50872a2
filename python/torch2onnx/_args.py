"""From what torch.onnx.export accepts (a model and its example args) to what
the C++ core takes: a torch._C.ScriptModule and a tuple of example values."""
import inspect

import warnings

import torch

from . import errors

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def split_args(args, kwargs):
    """(positional, keyword) from export's `args` and `kwargs`.

    A trailing dict in `args` holds keyword args; an empty trailing dict only
    marks that the dict before it is a positional argument."""
    if args is None:
        args = ()
    elif isinstance(args, torch.Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        args = (args,)
    keyword = {}
    if args and isinstance(args[-1], dict):
        keyword = dict(args[-1])
        args = args[:-1]
    if kwargs:
        overlap = set(keyword) & set(kwargs)
        if overlap:
            raise errors.ExportUsageError(f"keyword args given twice (in args and in kwargs): {sorted(overlap)}")
        keyword.update(kwargs)
    for name in keyword:
        if not isinstance(name, str):
            raise errors.ExportUsageError(
                f"the trailing dict of args holds keyword arguments, so its keys must be names, not {name!r}; "
                "to pass a dict as the last positional argument, add an empty dict after it: (x, {...}, {})")
    return args, keyword


def _is_number(value):
    return isinstance(value, (bool, int, float))


def _number_tensor(value):
    """A Python number as torch.onnx traces it: a 0-d int64, float64 or bool tensor."""
    dtype = torch.bool if isinstance(value, bool) else torch.int64 if isinstance(value, int) else torch.float64
    return torch.tensor(value, dtype=dtype)


def _has_input(value):
    """Whether `value` holds a tensor or a number: what becomes a graph input."""
    if isinstance(value, torch.Tensor) or _is_number(value):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_input(v) for v in value)
    if isinstance(value, dict):
        return any(_has_input(k) or _has_input(v) for k, v in value.items())
    return False


def _only_tensors(value):
    """A tensor, or (nested) tuples/lists of tensors only: traceable as is."""
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return len(value) > 0 and all(_only_tensors(v) for v in value)
    return False


def _leaves(value, out, outputs=False):
    """The graph inputs `value` makes, in torch.onnx's order (torch.jit._flatten):
    tensors, numbers as 0-d tensors, a dict's keys and values (a tensor key is
    an input too); None and strings make none. outputs=True: the graph outputs
    a forward() result makes (dict values only; anything else is an error)."""
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif _is_number(value):
        out.append(_number_tensor(value))
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out, outputs)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, torch.Tensor) and not outputs:
                out.append(k)
            _leaves(v, out, outputs)
    elif outputs and value is not None:
        raise errors.ExampleInputError(f"forward() returns a {type(value).__name__}, which cannot be a graph output "
                                       "(tensors, numbers, None and containers of them can)")
    return out


def _rebuild(value, tensors):
    """`value` with its leaves (tensors and numbers) replaced, in order, by those
    of the iterator `tensors`: the model sees numbers as 0-d tensors, as
    torch.onnx traces them."""
    if isinstance(value, torch.Tensor) or _is_number(value):
        return next(tensors)
    if isinstance(value, tuple):
        items = [_rebuild(v, tensors) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_rebuild(v, tensors) for v in value]
    if isinstance(value, dict):
        rebuilt = []
        for k, v in value.items():
            key = next(tensors) if isinstance(k, torch.Tensor) else k
            rebuilt.append((key, _rebuild(v, tensors)))
        return type(value)(rebuilt)
    return value


class _Entry:
    """One argument of forward(): its name, value and how it is passed."""

    def __init__(self, name, value, keyword):
        self.name, self.value, self.keyword = name, value, keyword


def bind_python(fn, args, kwargs):
    """Matches args/kwargs to the parameters of the Python callable `fn`."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [_Entry(f"input_{i}", a, False) for i, a in enumerate(args)] + [
            _Entry(k, v, True) for k, v in kwargs.items()]
    entries, used, i = [], set(), 0
    params = list(sig.parameters.values())
    for p in params:
        if p.kind in _POSITIONAL:
            if i < len(args):
                entries.append(_Entry(p.name, args[i], False))
                i += 1
            elif p.name in kwargs:
                entries.append(_Entry(p.name, kwargs[p.name], True))
                used.add(p.name)
        elif p.kind == inspect.Parameter.VAR_POSITIONAL:
            for k in range(i, len(args)):
                entries.append(_Entry(f"{p.name}_{k - i}", args[k], False))
            i = len(args)
        elif p.kind == inspect.Parameter.KEYWORD_ONLY:
            if p.name in kwargs:
                entries.append(_Entry(p.name, kwargs[p.name], True))
                used.add(p.name)
        elif p.kind == inspect.Parameter.VAR_KEYWORD:
            for k, v in kwargs.items():
                if k not in used and k not in sig.parameters:
                    entries.append(_Entry(k, v, True))
                    used.add(k)
    if i < len(args):
        raise errors.ExampleInputError(
            f"forward() takes {sum(p.kind in _POSITIONAL for p in params)} positional arguments but "
            f"{len(args)} example args were given")
    unknown = [k for k in kwargs if k not in used and not any(e.name == k for e in entries)]
    if unknown:
        raise errors.ExampleInputError(f"forward() has no parameter named {', '.join(map(repr, unknown))}")
    missing = [p.name for p in params if p.kind in _POSITIONAL and p.default is inspect.Parameter.empty
               and not any(e.name == p.name for e in entries)]
    if missing:
        raise errors.ExampleInputError(f"no example value for forward()'s argument(s) {', '.join(map(repr, missing))}")
    return entries


class _FlatForward:
    """forward(*trace_inputs) -> the model's forward with the original
    arguments rebuilt: tensors and numbers (as 0-d tensors, as torch.onnx
    traces them) from the inputs, None and strings baked in."""

    def __init__(self, forward, entries):
        self.forward = forward
        self.plan = []  # per entry: (entry, traced whole?)
        params = []
        for e in entries:
            if not _has_input(e.value):
                self.plan.append((e, None))
            elif _is_number(e.value):  # a 0-d tensor input, named after the argument
                self.plan.append((e, "number"))
                params.append(e.name)
            elif _only_tensors(e.value):
                self.plan.append((e, "whole"))
                params.append(e.name)
            else:
                n = len(_leaves(e.value, []))
                self.plan.append((e, n))
                params += [f"{e.name}_{k}" for k in range(n)]
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(_identifier(n, k), inspect.Parameter.POSITIONAL_OR_KEYWORD) for k, n in enumerate(params)])

    def trace_inputs(self):
        out = []
        for e, how in self.plan:
            if how == "whole":
                out.append(e.value)
            elif how == "number":
                out.append(_number_tensor(e.value))
            elif how is not None:
                out += _leaves(e.value, [])
        return tuple(out)

    def __call__(self, *inputs):
        it = iter(inputs)
        positional, keyword = [], {}
        for e, how in self.plan:
            if how is None:
                value = e.value
            elif how in ("whole", "number"):
                value = next(it)
            else:
                value = _rebuild(e.value, iter([next(it) for _ in range(how)]))
            if e.keyword:
                keyword[e.name] = value
            else:
                positional.append(value)
        return flat_outputs(self.forward(*positional, **keyword))


def flat_outputs(value):
    """forward()'s result as the graph's outputs, as torch.onnx flattens it: a
    tensor stays one; containers (tuples, lists, dict values, nested) become a
    flat tuple of their tensors, None left out, Python numbers as 0-d tensors
    (int64, float64, bool; torch.onnx refuses those: "did not have observable
    data dependence")."""
    if isinstance(value, torch.Tensor):
        return value
    return tuple(_leaves(value, [], outputs=True))


def clone_tensors(value):
    """`value` with every tensor in it (in tuples, lists and dicts) copied."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[clone_tensors(v) for v in value])
    if isinstance(value, (tuple, list)):
        return type(value)(clone_tensors(v) for v in value)
    if isinstance(value, dict):
        return type(value)((k, clone_tensors(v)) for k, v in value.items())
    return value


def _identifier(name, k):
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    if not name or name[0].isdigit():
        name = f"input_{k}"
    return name


def trace(model, args, kwargs):
    """Traces the nn.Module `model` (torch.jit.trace, non-strict) with the example
    args; returns (torch._C.ScriptModule, example values for the core)."""
    had_own_forward = "forward" in model.__dict__
    forward = model.forward
    flat = _FlatForward(forward, bind_python(forward, args, kwargs))
    inputs = flat.trace_inputs()
    model.forward = flat  # Module.__call__ (which runs the hooks) calls self.forward
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # torch 2.10+ deprecates torch.jit.trace: that is about our use of it, not the user's code.
            warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated", category=FutureWarning)
            # On copies: a forward() that writes into its inputs must not change the caller's tensors.
            traced = _trace_module(model, clone_tensors(inputs))
    except errors.OnnxExporterError:
        raise
    except Exception as e:  # the model itself failed on the example args
        raise errors.ExampleInputError(f"tracing {type(model).__name__}.forward on the example args failed: "
                                       f"{type(e).__name__}: {e}") from e
    finally:
        if had_own_forward:
            model.forward = forward
        else:
            del model.forward
    return traced, inputs


def _trace_module(model, inputs):
    """torch.jit.trace(model, inputs, strict=False, check_trace=False)._c, with the
    module tree it traces into made in C++ (_C.module_tree: torch.jit.trace
    makes it in Python, most of its time on a model of many modules); the
    trace itself is torch's (the same calls torch.jit._trace.trace_module makes).
    Modules the tree leaves to torch.jit.trace (exported methods, backward hooks)
    are traced by it."""
    from . import _C

    tree = _C.module_tree(model)
    if tree is None:
        return torch.jit.trace(model, inputs, strict=False, check_trace=False)._c
    trace_map = {"__module": model}

    def register(mod, prefix):
        for name, child in mod.named_children():
            trace_map[child] = f"{prefix}.{name}"
            register(child, f"{prefix}.{name}")

    register(model, "__module")
    jit_trace = torch.jit._trace
    old_map = jit_trace._trace_module_map
    jit_trace._trace_module_map = trace_map
    try:
        call = [tree, "forward", model, inputs, jit_trace._create_interpreter_name_lookup_fn(0), False, False,
                jit_trace.get_callable_argument_names(model.forward)]
        if _STORE_INPUTS_ARG:
            call.append(False)
        torch._C.ScriptModule._create_method_from_trace(*call)
    finally:
        jit_trace._trace_module_map = old_map
    return tree


# Whether this torch's ScriptModule._create_method_from_trace takes `store_inputs` (2.x does, 1.13 not).
_STORE_INPUTS_ARG = "_store_inputs" in inspect.signature(torch.jit._trace.trace_module).parameters


def _schema_names(schema, skip_self):
    arguments = list(schema.arguments)[1 if skip_self else 0:]
    return arguments


def bind_script(schema, args, kwargs, skip_self, what):
    """Example values for a TorchScript forward() in schema order (keyword args
    placed, defaults filled in)."""
    arguments = _schema_names(schema, skip_self)
    if len(args) > len(arguments):
        raise errors.ExampleInputError(f"{what} takes {len(arguments)} arguments but {len(args)} example args were given")
    values = list(args)
    names = [a.name for a in arguments]
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise errors.ExampleInputError(f"{what} has no parameter named {', '.join(map(repr, unknown))}")
    for a in arguments[len(args):]:
        if a.name in kwargs:
            values.append(kwargs[a.name])
        elif a.default_value is not None or a.has_default_value():
            values.append(a.default_value)
        else:
            raise errors.ExampleInputError(f"no example value for {what}'s argument '{a.name}'")
    for k in kwargs:
        if names.index(k) < len(args):
            raise errors.ExampleInputError(f"{what}'s argument '{k}' given both positionally and by keyword")
    return tuple(values)


def _forward_schema(module):
    """forward()'s schema; for an overloaded forward (a scripted nn.LSTM has
    forward__0 and forward__1), the first overload's (the overloads share
    their argument names; the core picks the one the example's types fit)."""
    if module._has_method("forward"):
        return module._get_method("forward").schema
    if module._has_method("forward__0"):
        return module._get_method("forward__0").schema
    raise errors.ExportUsageError("the ScriptModule has no forward() method to export")


def prepare(model, args, kwargs):
    """(torch._C.ScriptModule, example values) for any model export accepts."""
    from . import _C

    if isinstance(model, torch.jit.ScriptFunction):
        values = bind_script(model.schema, args, kwargs, False, f"{model.name}()")
        return _C.module_from_function(model), values
    if isinstance(model, torch.jit.ScriptModule):
        return model._c, bind_script(_forward_schema(model._c), args, kwargs, True, "forward()")
    if isinstance(model, torch.nn.Module):
        return trace(model, args, kwargs)
    raise errors.ExportUsageError(
        f"model must be a torch.nn.Module, torch.jit.ScriptModule or torch.jit.ScriptFunction, not "
        f"{type(model).__name__}")
