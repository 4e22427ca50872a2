"""torch.onnx's own switches during a torch2onnx export (issue 37).

A model, or a library it uses (transformers, optimum), may ask
``torch.onnx.is_in_onnx_export()`` and may have registered symbolic functions
with ``torch.onnx.register_custom_op_symbolic``. During a torch.onnx export
the first is True and the second are used; ``exporting(opset)`` makes both
hold during a torch2onnx export, and undoes them after:

- the flag: torch.onnx's ``GLOBALS.in_onnx_export`` (what
  ``is_in_onnx_export()`` reads in every torch version) is True and
  ``GLOBALS.export_onnx_opset_version`` is the export's opset;
- torch.onnx's custom symbolics are registered with torch2onnx's core for the
  export (an operator registered with ``torch2onnx.register_custom_op_symbolic``
  keeps that one), each through a bridge (``_bridge``): those functions are
  written against torch.onnx's graph (``torch._C.Value`` inputs read by
  ``symbolic_helper``, ``g.op`` making ``torch._C.Node`` s), so they run on a
  small ``torch._C.Graph`` built from torch2onnx's values, and the nodes they
  make are replayed with torch2onnx's ``g.op``.

Nothing here runs torch.onnx's exporter or LibTorch's ONNX passes.
"""
import contextlib
import importlib
import re
import sys

import torch

from . import errors

__all__ = ["exporting", "GraphContext"]

# Where torch.onnx keeps its globals and its symbolic registry, newest first
# (torch 2.9+; torch 1.13 to 2.8).
_GLOBALS_MODULES = ("torch.onnx._internal.torchscript_exporter._globals", "torch.onnx._globals")
_REGISTRATION_MODULES = ("torch.onnx._internal.torchscript_exporter.registration",
                         "torch.onnx._internal.registration")

_MISSING = object()
_globals_cache = [_MISSING]


def _torch_onnx_globals():
    """torch.onnx's GLOBALS, imported on first use (about 30 ms once per
    process with torch 2.14: `import torch.onnx`; torch 1.13 imports it with
    torch), or None where this torch has none."""
    if _globals_cache[0] is _MISSING:
        found = None
        for name in _GLOBALS_MODULES:
            try:
                module = sys.modules.get(name) or importlib.import_module(name)
            except ImportError:  # not in this torch version
                continue
            candidate = getattr(module, "GLOBALS", None)
            if candidate is not None and hasattr(candidate, "in_onnx_export"):
                found = candidate
                break
        _globals_cache[0] = found
    return _globals_cache[0]


def _set(obj, name, value):
    """Sets obj.name; returns whether it took (torch 1.13 checks the opset's range)."""
    try:
        setattr(obj, name, value)
        return True
    except (ValueError, TypeError):  # (torch 1.13 refuses opsets it does not know)
        return False


@contextlib.contextmanager
def _flag(opset):
    glob = _torch_onnx_globals()
    if glob is None:
        yield
        return
    saved = {}
    for name, value in (("in_onnx_export", True), ("export_onnx_opset_version", opset)):
        if value is None:
            continue
        if not hasattr(glob, name):
            continue
        previous = getattr(glob, name)
        if _set(glob, name, value):
            saved[name] = previous
    try:
        yield
    finally:
        for name, previous in saved.items():
            _set(glob, name, previous)


# ------------------------------------------------------- registered symbolics

def torch_onnx_custom_symbolics():
    """{operator: {opset: fn}} of what torch.onnx.register_custom_op_symbolic
    registered, without importing torch.onnx (never imported: nothing registered)."""
    for name in _REGISTRATION_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        groups = getattr(getattr(module, "registry", None), "_registry", None)
        if not isinstance(groups, dict):
            continue
        found = {}
        for op, group in list(groups.items()):
            overrides = getattr(getattr(group, "_functions", None), "_overrides", None)
            if isinstance(overrides, dict) and overrides:
                found[op] = dict(overrides)
        return found
    return {}


# Operators torch2onnx's core converts itself whatever torch.onnx has.
_NOT_BRIDGED = {"prim::PythonOp"}


def _install(core, opset, installed):
    """Registers torch.onnx's custom symbolics with the core for operators it
    does not convert itself at `opset` (its own conversions, and what was
    registered with torch2onnx.register_custom_op_symbolic, win: libraries
    such as torchvision register torch.onnx symbolics for operators torch2onnx
    converts with its own lowerings); appends to `installed` what to unregister."""
    target = core.MAX_OPSET if opset is None else opset
    for op, by_opset in torch_onnx_custom_symbolics().items():
        if op in _NOT_BRIDGED or "::" not in op:
            continue
        if any(since <= target for since in core.registered_opsets(op)):
            continue
        # torch.onnx: a function registered at opset v serves every target >= v
        # (from opset 9 on); the core's lowest opset stands for those below it.
        chosen = {}
        for version, fn in by_opset.items():
            if not isinstance(version, int) or version > core.MAX_OPSET or not callable(fn):
                continue
            at = max(version, core.MIN_OPSET)
            if at not in chosen or version > chosen[at][0]:
                chosen[at] = (version, fn)
        for at, (_, fn) in sorted(chosen.items()):
            core.register_symbolic(op, at, _bridge(op, fn))
            installed.append((op, at))


_depth = [0]


@contextlib.contextmanager
def _symbolics(opset):
    if _depth[0]:  # an export inside an export: the outer one installed them
        _depth[0] += 1
        try:
            yield
        finally:
            _depth[0] -= 1
        return
    from . import _C as core

    installed = []
    _depth[0] += 1
    try:
        _install(core, opset, installed)
        yield
    finally:
        _depth[0] -= 1
        for op, at in installed:
            core.unregister_symbolic(op, at)


@contextlib.contextmanager
def exporting(opset=None):
    """During a torch2onnx export: torch.onnx.is_in_onnx_export() is True,
    torch.onnx's GLOBALS.export_onnx_opset_version is `opset`, and the
    symbolics registered with torch.onnx.register_custom_op_symbolic are in
    effect for the operators torch2onnx does not convert itself; all undone
    on exit."""
    with _symbolics(opset), _flag(opset):
        yield


# -------------------------------------------------------------------- bridge

def _dtype(name):
    """A torch dtype from a torch2onnx Value's dtype() ("float32", ...), or None."""
    dt = getattr(torch, name, None) if isinstance(name, str) else None
    return dt if isinstance(dt, torch.dtype) else None


def _tensor_type(dtype, sizes):
    t = torch._C.TensorType.get()
    if dtype is not None:
        if hasattr(t, "with_dtype"):
            t = t.with_dtype(dtype)
        else:
            t = torch._C.TensorType.create_from_tensor(torch.empty(0, dtype=dtype))
    return t.with_sizes(None if sizes is None else list(sizes))


# ONNX TensorProto data types (Cast's `to`) as torch dtypes, for Cast's output type.
_ONNX_DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
                9: torch.bool, 10: torch.float16, 11: torch.float64, 14: torch.complex64, 15: torch.complex128,
                16: torch.bfloat16}

_ATTR = re.compile(r"^(.+)_(([ifstgz])|(ty))$")  # torch.onnx's attribute keys (jit_utils._ATTR_PATTERN)
_LIST_SUFFIXES = ("is", "fs", "ss", "ts", "gs")  # torch2onnx's explicit list keys


def _is_list(value):
    return isinstance(value, (list, tuple))


def _torch_op_name(opname):
    return opname if "::" in opname else "onnx::" + opname


class GraphContext:
    """The `g` a torch.onnx symbolic function gets from torch2onnx: torch.onnx's
    GraphContext API (op, aten_op/at, opset, graph, block, original_node, the
    torch._C.Graph's methods) over a scratch torch._C.Graph. Its op() only
    creates a node (no shape inference: types are set for Constant, Cast
    and Shape); the nodes are replayed into torch2onnx's graph afterwards."""

    def __init__(self, graph, opset, original_node=None):
        self.graph = graph
        self.block = graph.block()
        self.opset = opset
        self.original_node = original_node
        self.params_dict = {}
        self.env = {}
        self.values_in_env = set()
        self.new_nodes = []

    def __getattr__(self, name):  # as torch.onnx's: the graph's own methods
        if name == "graph":
            raise AttributeError(name)
        return getattr(self.graph, name)

    def op(self, opname, *raw_args, outputs=1, **kwargs):
        """g.op("Relu", x), g.op("com.microsoft::Gelu", x), g.op("Foo", x, alpha_f=0.5, outputs=2)."""
        inputs = [self._input(a, opname) for a in raw_args]
        node = self.graph.create(_torch_op_name(opname), inputs, outputs)
        self.graph.insertNode(node)
        for key, value in sorted(kwargs.items()):
            if value is None or key in ("inplace", "aten"):  # as torch.onnx's _create_node
                continue
            _set_attribute(node, key, value, opname)
        _set_known_type(node)
        self.new_nodes.append(node)
        return node.output() if outputs == 1 else tuple(node.outputs())

    def aten_op(self, operator, *args, overload_name="", **kwargs):
        """An ATen fallback node (torch.onnx's g.at): kept as one org.pytorch.aten::ATen node."""
        return self.op("aten::ATen", *args, operator_s=operator, overload_name_s=overload_name, **kwargs)

    at = aten_op

    def onnxscript_op(self, onnx_fn, *args, **kwargs):
        raise errors.SymbolicValueError(
            "g.onnxscript_op is not supported by torch2onnx: write the function with g.op")

    def _constant(self, tensor):
        node = self.graph.create("onnx::Constant", [], 1)
        self.graph.insertNode(node)
        node.t_("value", tensor)
        node.output().setType(torch._C.TensorType.create_from_tensor(tensor))
        return node.output()

    def _input(self, value, opname):
        if isinstance(value, torch._C.Value):
            return value
        if value is None:  # an omitted optional input
            node = self.graph.create("prim::Constant", [], 1)
            self.graph.insertNode(node)
            node.output().setType(torch._C.NoneType.get())
            return node.output()
        if isinstance(value, torch.Tensor):
            return self._constant(value.detach())
        if isinstance(value, bool):
            return self._constant(torch.tensor(value))
        if isinstance(value, int):
            return self._constant(torch.tensor(value, dtype=torch.int64))
        if isinstance(value, float):
            return self._constant(torch.tensor(value, dtype=torch.float32))
        raise errors.SymbolicValueError(
            f"g.op({opname!r}, ...): an input must be a value, a tensor, a number or None, not "
            f"{type(value).__name__}")


def _set_attribute(node, key, value, opname):
    """An attribute by torch.onnx's key convention ("alpha_f", "axes_i" with a
    list, "value_t"), or torch2onnx's explicit list suffixes ("axes_is")."""
    name, kind = None, None
    for suffix in _LIST_SUFFIXES:
        if key.endswith("_" + suffix) and len(key) > len(suffix) + 1:
            name, kind = key[:-len(suffix) - 1], suffix
            break
    if kind is None:
        m = _ATTR.match(key)
        if m is None:
            raise ValueError(f"g.op({opname!r}, ...): invalid attribute specifier '{key}': names must be suffixed "
                             "with their type, e.g. 'dim_i' or 'dims_i'")
        name, kind = m.group(1), m.group(2)
        if kind != "ty" and _is_list(value):
            kind += "s"
    if kind in ("t", "z"):
        tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(value)
        if kind == "z" and tensor.numel() == 1:
            tensor = tensor.reshape(())
        return node.t_(name, tensor.detach())
    if kind in ("ts", "zs"):
        return node.ts_(name, [v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for v in value])
    if kind in ("is", "fs", "ss"):
        value = list(value)
    if kind == "i" and isinstance(value, torch.Tensor):
        value = int(value)
    if kind == "f" and isinstance(value, torch.Tensor):
        value = float(value)
    return getattr(node, f"{kind}_")(name, value)


def _set_known_type(node):
    """The output types ONNX's inference would give where they are obvious."""
    kind = node.kind()
    try:
        if kind == "onnx::Constant" and "value" in node.attributeNames() and node.kindOf("value") == "t":
            node.output().setType(torch._C.TensorType.create_from_tensor(node.t("value")))
        elif kind == "onnx::Cast" and "to" in node.attributeNames() and node.kindOf("to") == "i":
            dtype = _ONNX_DTYPES.get(node.i("to"))
            if dtype is not None:
                node.output().setType(_tensor_type(dtype, _sizes_of(node.input())))
        elif kind == "onnx::Shape":
            node.output().setType(_tensor_type(torch.int64, [None]))
    except RuntimeError:  # (a type torch cannot express: the value stays untyped, as in torch.onnx)
        pass


def _sizes_of(value):
    t = value.type()
    return t.varyingSizes() if isinstance(t, torch._C.TensorType) else None


# What a value of the scratch graph stands for in torch2onnx's graph.
class _Const:
    """A constant: a tensor (given to torch2onnx's g.op as one), or a string."""

    def __init__(self, value):
        self.value = value


class _NoneValue:
    pass


_NONE = _NoneValue()


class _List:
    """A prim::ListConstruct / TupleConstruct: its elements."""

    def __init__(self, kind, elements):
        self.kind = kind
        self.elements = elements


class _Unknown:
    def __init__(self, why):
        self.why = why


_SMALL = 64  # constant tensors up to this many elements become onnx::Constant (bigger: typed inputs, as parameters)


def _numel(sizes):
    """The element count of static sizes, or None."""
    n = 1
    for d in sizes:
        if not isinstance(d, int):
            return None
        n *= d
    return n


class _Bridge:
    """One torch.onnx symbolic function as a torch2onnx Python symbolic."""

    def __init__(self, op, fn):
        self.op = op
        self.fn = fn

    def what(self):
        name = getattr(self.fn, "__qualname__", None) or getattr(self.fn, "__name__", None) or repr(self.fn)
        return f"the torch.onnx symbolic function {name} registered for {self.op}"

    def fail(self, why):
        raise errors.SymbolicValueError(f"{self.what()} (torch.onnx.register_custom_op_symbolic): {why}")

    # ---- torch2onnx's values -> the scratch graph
    def _schema_types(self, kind, count):
        """The argument types of `kind`'s schemas with `count` arguments, where they agree."""
        try:
            schemas = [s for s in torch._C._jit_get_schemas_for_operator(kind) if len(s.arguments) == count]
        except RuntimeError:  # not an operator torch knows
            return None
        if not schemas:
            return None
        types = []
        for i in range(count):
            ts = {str(s.arguments[i].type) for s in schemas}
            types.append(schemas[0].arguments[i].type if len(ts) == 1 else None)
        return types

    def _argument(self, g, value, schema_type, env):
        """(schema_type: a callable giving the schema's type of this argument, or None.)"""
        """The torch._C.Value torch.onnx would hand the symbolic for `value`."""
        graph = g.graph
        if value.is_none():
            node = graph.create("prim::Constant", [], 1)
            graph.insertNode(node)
            node.output().setType(torch._C.NoneType.get())
            env[node.output()] = _NONE
            return node.output()
        sizes, dtype = value.sizes(), _dtype(value.dtype())
        made = None
        if value.is_constant() and (sizes is None or (_numel(sizes) or 0) <= _SMALL):
            try:
                python = value.value()
            except (ValueError, TypeError):
                python = _MISSING
            if python is not _MISSING:
                made = self._python_constant(g, python, dtype, sizes)
        if made is None:
            made = graph.addInput()
            made.setDebugName(f"arg_{len(list(graph.inputs())) - 1}")
            list_type = None
            if sizes is None and dtype is None:
                t = schema_type()
                if isinstance(t, torch._C.OptionalType):
                    t = t.getElementType()
                if isinstance(t, torch._C.ListType):
                    list_type = t
            made.setType(list_type if list_type is not None else _tensor_type(dtype, sizes))
        env[made] = value
        return made

    def _python_constant(self, g, python, dtype, sizes):
        """As torch.onnx's symbolics see constants: numbers and number lists as
        onnx::Constant tensors (ints int64, floats double, as EraseNumberTypes
        makes them), strings onnx::Constant[value_s], None prim::Constant."""
        graph = g.graph
        if python is None:
            node = graph.create("prim::Constant", [], 1)
            graph.insertNode(node)
            node.output().setType(torch._C.NoneType.get())
            return node.output()
        if isinstance(python, str):
            node = graph.create("onnx::Constant", [], 1)
            graph.insertNode(node)
            node.s_("value", python)
            return node.output()
        if isinstance(python, (bool, int, float)):
            default = (torch.bool if isinstance(python, bool) else torch.int64 if isinstance(python, int)
                       else torch.float64)
            tensor = torch.tensor(python, dtype=dtype or default)
            if sizes:
                tensor = tensor.reshape(sizes)
            return g._constant(tensor)
        if isinstance(python, list):
            if sizes:  # a constant tensor, flattened by value()
                return g._constant(torch.tensor(python, dtype=dtype).reshape(sizes))
            if all(isinstance(e, (bool, int, float)) for e in python):
                return g._constant(torch.tensor(python))  # as torch.onnx's prim::Constant of an int/float list
            elements = [self._python_constant(g, e, None, None) for e in python]
            if any(e is None for e in elements):
                return None
            node = graph.create("prim::ListConstruct", elements, 1)
            graph.insertNode(node)
            return node.output()
        return None

    # ---- the scratch graph's nodes -> torch2onnx's g.op
    def _resolve(self, env, value, consumer):
        """What torch2onnx's g.op takes for the scratch graph's `value`."""
        got = env.get(value, _MISSING)
        if got is _MISSING:
            self.fail(f"{consumer} uses the value {value.debugName()} made by {value.node().kind()} outside "
                      "the symbolic function's own graph")
        if got is _NONE:
            return None
        if isinstance(got, _Const):
            if isinstance(got.value, str):
                self.fail(f"{consumer} takes the string constant {got.value!r} as an input, which has no ONNX "
                          "tensor form here")
            return got.value
        if isinstance(got, _List):
            self.fail(f"{consumer} takes a {got.kind} (a list of values) as an input: a list is not an ONNX "
                      "value (concatenate or build a sequence with ONNX operators)")
        if isinstance(got, _Unknown):
            self.fail(f"{consumer} takes {got.why}")
        return got

    def _output(self, ours, env, value, depth=0):
        """torch2onnx's Value for a value the symbolic returned."""
        if value is None:
            return None
        if isinstance(value, (list, tuple)) and depth == 0:
            return type(value)(self._output(ours, env, v, 1) for v in value)
        if not isinstance(value, torch._C.Value):
            self.fail(f"it returned a value of type {type(value).__name__}, not a torch._C.Value (nor a tuple of "
                      "them, nor None)")
        got = env.get(value, _MISSING)
        if isinstance(got, _List):
            if depth:
                self.fail(f"it returned a {got.kind} (a list of values) inside a tuple")
            return [self._output(ours, env, v, 1) for v in got.elements]
        if isinstance(got, _Const) and isinstance(got.value, torch.Tensor):
            return ours.op("Constant", value_t=got.value)
        return self._resolve(env, value, "its result")

    def _attributes(self, node, kind):
        attrs = {}
        for name in node.attributeNames():
            k = node.kindOf(name)
            if k in ("i", "f", "s", "t", "is", "fs", "ss"):
                attrs[f"{name}_{k}"] = getattr(node, k)(name)
            elif k in ("g", "gs"):
                self.fail(f"the {kind} node's attribute '{name}' is a graph (a subgraph), which is not supported")
            else:
                self.fail(f"the {kind} node's attribute '{name}' of kind '{k}' cannot be translated")
        return attrs

    def _replay(self, ours, g, env):
        for node in g.graph.nodes():
            outs = list(node.outputs())
            if outs and all(o in env for o in outs):  # an argument
                continue
            kind = node.kind()
            if list(node.blocks()):
                self.fail(f"it made a node {kind} with a subgraph (blocks), which is not supported")
            if kind == "prim::Constant" or (kind == "onnx::Constant" and not list(node.inputs())):
                out = node.output()
                names = node.attributeNames()
                if node.mustBeNone() or not names:
                    env[out] = _NONE
                    continue
                if "value" in names:
                    k = node.kindOf("value")
                    v = getattr(node, k)("value")
                    if k == "s":
                        env[out] = _Const(v)
                        continue
                    if k in ("t", "i", "f", "is", "fs"):
                        env[out] = _Const(v if k == "t" else torch.tensor(v))
                        continue
                if kind == "prim::Constant":
                    env[out] = _Unknown(f"a prim::Constant it cannot read ({node})".strip())
                    continue
            if kind in ("prim::ListConstruct", "prim::TupleConstruct"):
                elements = list(node.inputs())
                consts = [env.get(e) for e in elements]
                if kind == "prim::ListConstruct" and elements and all(
                        isinstance(c, _Const) and isinstance(c.value, torch.Tensor) and c.value.dim() == 0
                        for c in consts):
                    try:  # a list of constant numbers: what torch.onnx's parse_args reads as "is"/"fs"
                        env[node.output()] = _Const(torch.stack([c.value for c in consts]))
                        continue
                    except RuntimeError:  # (numbers of different dtypes: kept as a list)
                        pass
                env[node.output()] = _List(kind, elements)
                continue
            if kind.startswith("prim::"):
                self.fail(f"it made a node {kind}, which has no ONNX form")
            domain, _, op_type = kind.partition("::")
            if domain == "onnx":
                name = op_type
            elif domain == "aten" and op_type == "ATen":
                name = "org.pytorch.aten::ATen"
            else:
                name = kind
            inputs = [self._resolve(env, v, f"its {kind} node") for v in node.inputs()]
            attrs = self._attributes(node, kind)
            try:
                made = ours.op(name, *inputs, outputs=len(outs), **attrs)
            except errors.SymbolicValueError:
                raise
            except Exception as e:
                self.fail(f"its {kind} node could not be made: {type(e).__name__}: {e}")
            made = made if len(outs) != 1 else (made,)
            for o, m in zip(outs, made):
                env[o] = m

    def __call__(self, ours, *args):
        kind = getattr(ours, "kind", None) or self.op
        graph = torch._C.Graph()
        g = GraphContext(graph, ours.opset)
        env = {}
        types = []

        def schema_type(i):
            if not types:
                types.append(self._schema_types(kind, len(args)) or [None] * len(args))
            return types[0][i]

        inputs = [self._argument(g, a, lambda i=i: schema_type(i), env) for i, a in enumerate(args)]
        try:
            g.original_node = graph.create(kind if "::" in kind else self.op, inputs, 1)
        except RuntimeError:  # (a kind torch's graph will not hold: symbolics rarely read it)
            g.original_node = None
        result = self.fn(g, *inputs)
        self._replay(ours, g, env)
        return self._output(ours, env, result)


def _bridge(op, fn):
    bridge = _Bridge(op, fn)

    def symbolic(g, *args):  # a plain function: what the core's register_symbolic takes
        return bridge(g, *args)

    symbolic.__name__ = getattr(fn, "__name__", "symbolic")
    symbolic._torch_onnx_function = fn
    return symbolic
