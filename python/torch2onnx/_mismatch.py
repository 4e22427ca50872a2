"""find_mismatch (torch.onnx.verification.find_mismatch's counterpart): the
model's TorchScript graph, frozen, is cut into halves, each half into halves
again, each part exported by torch2onnx on its own and run in ONNX Runtime on
the values that flow into it in PyTorch; the parts whose outputs differ are
bisected down to single operators. A torch.export program (ExportedProgram)
is bisected by the C++ core (torch2onnx::find_mismatch_program), which runs
the program in LibTorch itself."""
import io
import os
import re

import torch

from . import verification

__all__ = ["GraphInfo", "find_mismatch"]


def _nodes(graph):
    """The graph's top-level nodes that compute (constants are copied into each part)."""
    return [n for n in graph.nodes() if n.kind() != "prim::Constant"]


def _tuple(graph, values):
    """A tuple of `values` built at the end of `graph` (a function returns one value)."""
    t = graph.create("prim::TupleConstruct", values, 1)
    graph.appendNode(t)
    t.output().setType(torch._C.TupleType([v.type() for v in values]))
    return t.output()


def _place(node):
    """Where a node came from: its module path and the first source line
    outside torch itself ("layers.1 (model.py:12)"), as far as known."""
    try:
        text = str(node.sourceRange())
    except Exception:
        text = ""
    frames = re.findall(r"([^\s()]+\.py)[(:](\d+)", text)
    user = [f for f in frames if "/torch/" not in f[0]] or frames
    line = f"{user[0][0].rsplit('/', 1)[-1]}:{user[0][1]}" if user else ""
    scope = node.scopeName().split("/")[-1].replace("__module.", "") if hasattr(node, "scopeName") else ""
    scope = "" if scope == "__module" else scope
    return " ".join(p for p in (scope, f"({line})" if line else "") if p)


class GraphInfo:
    """One part of the graph: its operators, its verdict and, where it
    mismatches and holds more than one operator, its two halves."""

    def __init__(self, graph, nodes, env, id="", options=None):
        self.graph, self.nodes, self.env, self.id = graph, nodes, env, id
        self.options = options or {}
        self.upper_graph_info = None
        self.lower_graph_info = None
        self.mismatch_error = None  # why the part differs (None: it matches)
        self.export_error = None  # why it could not be exported on its own
        self.rows = []

    # ------------------------------------------------------------- parts
    def _boundary(self):
        inside = set(self.nodes)
        defined = {o for n in self.nodes for o in n.outputs()}
        inputs, outputs, seen = [], [], set()
        for n in self.nodes:
            for v in n.inputs():
                if v not in defined and v.node().kind() != "prim::Constant" and v not in seen:
                    seen.add(v)
                    inputs.append(v)
        graph_outputs = set(self.graph.outputs())
        for n in self.nodes:
            for o in n.outputs():
                if o in graph_outputs or any(u.user not in inside for u in o.uses()):
                    outputs.append(o)
        return inputs, outputs

    def _function(self):
        inputs, outputs = self._boundary()
        g = torch._C.Graph()
        mapping = {}
        for v in inputs:
            nv = g.addInput()
            nv.setType(v.type())
            mapping[v] = nv

        def lookup(v):
            if v not in mapping:  # a constant used here: copied
                c = g.insertNode(g.createClone(v.node(), lookup))
                mapping[v] = c.output()
            return mapping[v]

        for n in self.nodes:
            c = g.insertNode(g.createClone(n, lookup))
            for o, no in zip(n.outputs(), c.outputs()):
                mapping[o] = no
        if len(outputs) == 1:
            g.registerOutput(mapping[outputs[0]])
        else:
            g.registerOutput(_tuple(g, [mapping[o] for o in outputs]))
        return torch._C._create_function_from_graph(f"part_{self.id or 'all'}", g), inputs, outputs

    # ------------------------------------------------------------- check
    def verify(self):
        """Exports this part alone and compares ONNX Runtime with PyTorch on
        the values that reach it. Returns whether it mismatches."""
        from . import utils

        fn, inputs, outputs = self._function()
        args = tuple(self.env[v] for v in inputs)
        expected = verification._flatten([self.env[o] for o in outputs], numbers=True)
        try:
            data, values, unused = utils._export_part(fn, args, self.options.get("opset_version"),
                                                      self.options.get("do_constant_folding", True))
            feeds = [v for k, v in enumerate(verification._flatten(list(values), numbers=True)) if k not in set(unused)]
            actual = verification.run_onnx_runtime(verification.ort_session(data), feeds)
            self.rows = verification.compare_rows(expected, actual, self.options.get("rtol", 1e-4))
        except Exception as e:  # an export or run error is a verdict too
            self.export_error = str(e).splitlines()[0]
            self.mismatch_error = f"could not be checked on its own: {self.export_error}"
            return True
        bad = [r for r in self.rows if not r["ok"]]
        self.mismatch_error = "; ".join(f"output {r['output']}: {r['why']}" for r in bad) or None
        return self.mismatch_error is not None

    def find_mismatch(self):
        if not self.verify() or len(self.nodes) <= 1 or self.export_error:
            return self
        half = len(self.nodes) // 2
        self.upper_graph_info = GraphInfo(self.graph, self.nodes[:half], self.env, self.id + "0", self.options)
        self.lower_graph_info = GraphInfo(self.graph, self.nodes[half:], self.env, self.id + "1", self.options)
        self.upper_graph_info.find_mismatch()
        self.lower_graph_info.find_mismatch()
        return self

    # ------------------------------------------------------------- results
    def has_mismatch(self):
        return self.mismatch_error is not None

    def all_mismatch_leaf_graph_info(self):
        """The smallest parts that mismatch (their halves both match, or they hold one operator)."""
        if not self.has_mismatch():
            return []
        kids = [k for k in (self.upper_graph_info, self.lower_graph_info) if k is not None]
        leaves = [leaf for k in kids for leaf in k.all_mismatch_leaf_graph_info()]
        return leaves or [self]

    def essential_node_kinds(self):
        return {n.kind() for n in self.nodes}

    def essential_node_count(self):
        return len(self.nodes)

    def _label(self):
        if len(self.nodes) == 1:
            n = self.nodes[0]
            place = _place(n)
            return n.kind() + (f" in {place}" if place else "")
        return f"{len(self.nodes)} operators"

    def tree_lines(self, depth=0):
        mark = "X" if self.has_mismatch() else "\u2713"
        lines = [f"{'    ' * depth}{mark} id: {self.id or '(all)'}  {self._label()}"]
        for k in (self.upper_graph_info, self.lower_graph_info):
            if k is not None:
                lines += k.tree_lines(depth + 1)
        return lines

    def pretty_print_tree(self):
        print("\n".join(["Tree:"] + self.tree_lines()))

    def pretty_print_mismatch(self, graph=False):
        leaves = self.all_mismatch_leaf_graph_info()
        print("Mismatch leaf subgraphs:", [leaf.id for leaf in leaves])
        kinds = {}
        for leaf in leaves:
            for k in leaf.essential_node_kinds():
                kinds[k] = kinds.get(k, 0) + 1
        print("Mismatch node kinds:", kinds)
        for leaf in leaves:
            print(f"  {leaf.id}: {leaf._label()}: {leaf.mismatch_error}")
            if graph:
                for n in leaf.nodes:
                    print("    " + str(n).strip())


class ProgramGraphInfo(GraphInfo):
    """A part of a torch.export program, as the C++ core found it (no TorchScript graph)."""

    def __init__(self, part):
        super().__init__(None, part["node_kinds"], None, part["id"])
        self.label = part["label"]
        self.mismatch_error = part["mismatch"] or None
        self.export_error = part["export_error"] or None
        self.upper_graph_info = ProgramGraphInfo(part["upper"]) if part["upper"] else None
        self.lower_graph_info = ProgramGraphInfo(part["lower"]) if part["lower"] else None

    def verify(self):
        return self.has_mismatch()

    def find_mismatch(self):
        return self

    def essential_node_kinds(self):
        return set(self.nodes)

    def _label(self):
        return self.label


def _program_tree(program, input_args, opset_version, rtol):
    """The C++ core's find_mismatch_program of an ExportedProgram, saved into an in-memory file."""
    from .utils import _C

    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    fd = os.memfd_create("program.pt2")
    try:
        os.write(fd, buffer.getvalue())
        options = {} if opset_version is None else {"opset_version": opset_version}
        args = () if input_args is None else tuple(input_args)
        return ProgramGraphInfo(_C().find_mismatch_program(f"/proc/self/fd/{fd}", args, options, rtol))
    finally:
        os.close(fd)


def _frozen_graph(model, args):
    script = model if isinstance(model, torch.jit.ScriptModule) else torch.jit.trace(model, args)
    frozen = torch.jit.freeze(script.eval())
    graph = frozen.graph.copy()
    torch._C._jit_pass_inline(graph)
    return graph


def _values(graph, args):
    """Every value the graph computes on args, by Value (a copy of the graph returning them all)."""
    g = graph.copy()
    wanted = []
    for n, c in zip(graph.nodes(), g.nodes()):
        if n.kind() != "prim::Constant":
            wanted += list(zip(n.outputs(), c.outputs()))
    for i in reversed(range(len(list(g.outputs())))):
        g.eraseOutput(i)
    g.registerOutput(_tuple(g, [co for _, co in wanted]))
    inputs = list(graph.inputs())
    if inputs and not inputs[0].uses() and len(inputs) == len(args) + 1:  # self, frozen away
        g.eraseInput(0)
        inputs = inputs[1:]
    fn = torch._C._create_function_from_graph("all_values", g)
    with torch.no_grad():
        out = fn(*args)
    env = {v: a for v, a in zip(inputs, args)}
    env.update({o: val for (o, _), val in zip(wanted, out)})
    return env


def find_mismatch(model, input_args, do_constant_folding=True, training=None, opset_version=None,
                  keep_initializers_as_inputs=True, verbose=False, options=None):
    """Finds the smallest parts of the model where ONNX Runtime and PyTorch
    disagree (torch.onnx.verification.find_mismatch's signature). Returns the
    GraphInfo tree, after printing it and the mismatching operators."""
    if isinstance(input_args, torch.Tensor):
        input_args = (input_args,)
    opts = {"opset_version": opset_version, "do_constant_folding": do_constant_folding,
            "rtol": getattr(options, "rtol", 1e-4) if options is not None else 1e-4}
    if isinstance(model, getattr(getattr(torch, "export", None), "ExportedProgram", ())):
        root = _program_tree(model, input_args, opset_version, opts["rtol"])
    else:
        graph = _frozen_graph(model, tuple(input_args))
        env = _values(graph, tuple(input_args))
        root = GraphInfo(graph, _nodes(graph), env, "", opts).find_mismatch()
    print("Mismatch found." if root.has_mismatch() else "No mismatch found.")
    root.pretty_print_tree()
    if root.has_mismatch():
        root.pretty_print_mismatch(graph=verbose)
    return root
