"""Drop-in parity for what scripted (and traced) code does beyond tensor
operators: module attributes assigned in forward, scripted RNNs (their weights
are the list attribute _flat_weights), script builtins (range steps, list
slices and pop, where(condition), arange(out=)), chunk along a dynamic axis.
Each is compared with torch.onnx's TorchScript exporter on the same call."""
import io
from typing import Optional, Tuple

import pytest
import numpy as np
import torch
import torch.nn as nn

import torch2onnx
import onnx
import onnxruntime

from conftest import harness
from dropin import TORCHSCRIPT_EXPORTER, check

x23 = torch.randn(2, 3)


class AssignBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 3))

    def forward(self, x):
        self.state = x * 2
        return self.state + 1


class AssignInChild(nn.Module):
    """The assignment happens in a submodule's forward (inlined), and the
    parent reads the attribute after the call."""

    def __init__(self):
        super().__init__()
        self.child = AssignBuffer()

    def forward(self, x):
        y = self.child(x)
        return y * self.child.state


class AssignInBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 3))

    def forward(self, x):
        if bool(x.sum() > 0):
            self.state = x
        return self.state + 1


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_attribute_assigned_in_forward(script):
    check(AssignBuffer(), (x23,), script=script, input_names=["x"], more=[(torch.randn(2, 3),)])


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_attribute_assigned_in_a_submodule(script):
    check(AssignInChild(), (x23,), script=script, input_names=["x"])


class AssignInLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 3))

    def forward(self, x, n: int):
        for _ in range(n):
            self.state = self.state + x
        return self.state


def test_attribute_assigned_in_a_branch():
    """The If carries the attribute's value out; the model computes from the
    module's state at export time (PyTorch's changes with each call: every
    input is compared with a fresh module)."""
    buf = io.BytesIO()
    torch2onnx.export(torch.jit.script(AssignInBranch()), (x23,), buf, input_names=["x"])
    session = onnxruntime.InferenceSession(buf.getvalue())
    for x in (x23.abs() + 1, -x23.abs() - 1):
        (ort,) = session.run(None, {"x": x.numpy()})
        torch.testing.assert_close(torch.from_numpy(ort), AssignInBranch()(x))


def test_attribute_assigned_in_a_loop():
    """The Loop carries the attribute's value (issue 43; it was refused): read
    in the body, and after the loop, as PyTorch reads it (each input compared
    with a fresh module, whose state starts at zero)."""
    buf = io.BytesIO()
    torch2onnx.export(torch.jit.script(AssignInLoop()), (x23, 2), buf, input_names=["x", "n"])
    session = onnxruntime.InferenceSession(buf.getvalue())
    for x, n in ((x23, 2), (x23 * 3, 5), (-x23, 0)):
        (ort,) = session.run(None, {"x": x.numpy(), "n": np.array(n)})
        torch.testing.assert_close(torch.from_numpy(ort), AssignInLoop()(x, n))


class LSTMModel(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.LSTM(4, 5, **kw)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


class GRUModel(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.GRU(4, 5, **kw)

    def forward(self, x, h):
        return self.rnn(x, h)


@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True}],
                         ids=["plain", "2_layers_bidirectional", "batch_first"])
def test_scripted_lstm(kw):
    torch.manual_seed(0)
    check(LSTMModel(**kw), (torch.randn(3, 2, 4),), script=True, input_names=["x"])


def test_scripted_gru_with_state():
    torch.manual_seed(0)
    check(GRUModel(num_layers=2), (torch.randn(3, 2, 4), torch.randn(2, 2, 5)), script=True)


class RangeStep(nn.Module):
    def forward(self, x):
        s = x
        for i in range(1, x.size(0), 2):
            s = s + i
        return s


def test_range_with_a_step_under_dynamic_axes():
    check(RangeStep(), (torch.randn(5, 3),), script=True, input_names=["x"], dynamic_axes={"x": [0]},
          more=[(torch.randn(8, 3),), (torch.randn(1, 3),)])


class GrowInLoop(nn.Module):
    def forward(self, x, n: int):
        sizes = torch.zeros(0)
        for _ in range(n):
            x = torch.cat([x, x[:, :1]], 1)
            sizes = torch.cat([sizes, torch.full((1,), float(x.size(1)))])
        return x, sizes


@pytest.mark.parametrize("dynamic", [False, True])
def test_size_read_in_a_loop_body(dynamic):
    """x.size(1) of a tensor the loop grows is read on each trip: a size the example run saw the same at
    every size of the dynamic axes is a constant only outside loop bodies (the example keeps the last trip's)."""
    axes = {"x": {0: "b", 1: "s"}} if dynamic else None
    more = [(torch.randn(1, 5), 4)] if dynamic else [(torch.randn(2, 3), 5)]
    # (without dynamic axes torch.onnx's TorchScript exporter makes x.size(1) a constant there: 4 on every trip)
    check(torch.jit.script(GrowInLoop()), (torch.randn(2, 3), 3), input_names=["x", "n"], dynamic_axes=axes,
          more=more, theirs="same" if dynamic else "wrong")


class ListSlice(nn.Module):
    def forward(self, x):
        l = [x, x * 2, x * 3]
        m = l[1:]
        return m[0] + m[-1] + l[::-2][1]


def test_list_slice():
    check(ListSlice(), (x23,), script=True, input_names=["x"])


class ListPop(nn.Module):
    def forward(self, x):
        l = [x, x * 2, x * 3]
        a = l.pop()
        return a + l[0] + len(l)


def test_list_pop():
    # torch.onnx adds len(l) as an int64 to a float tensor: 2.14's model is refused by
    # ONNX Runtime, 1.13's own shape inference refuses it
    check(ListPop(), (x23,), script=True, input_names=["x"], theirs="wrong" if torch.__version__ >= "2" else "fails")


class WhereIndices(nn.Module):
    def forward(self, x):
        return torch.where(x > 0)


def test_where_condition_only_traced():
    check(WhereIndices(), (x23,), input_names=["x"], more=[(torch.randn(2, 3),)])


def test_where_condition_only_scripted():
    # torch.onnx returns one ONNX sequence; the rank is static, so ours are
    # plain outputs, one per dim, as when traced
    e = check(WhereIndices(), (x23,), script=True, input_names=["x"], theirs="other outputs")
    assert len(e.ours.graph.output) == 2


class ArangeOut(nn.Module):
    def forward(self, x):
        out = torch.empty(0, dtype=torch.int64)
        torch.arange(x.size(0), out=out)
        return out + 1


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_arange_out(script):
    # torch.onnx's scripted export (1.13 and 2.14) returns the empty tensor `out` was
    check(ArangeOut(), (x23,), script=script, input_names=["x"], theirs="wrong" if script else "same")


class Chunk(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return a * 2 + b[:, :1]


def test_chunk_along_a_dynamic_axis():
    check(Chunk(), (torch.randn(2, 4),), input_names=["x"], dynamic_axes={"x": [0, 1]},
          more=[(torch.randn(3, 6),), (torch.randn(1, 2),)])


# ---- script builtins and Optional values across control flow


class IsNotNone(nn.Module):
    def forward(self, x, y: Optional[torch.Tensor]):
        if y is not None:
            return x + y
        return x


def test_optional_argument_given_as_none():
    # torch.onnx refuses None among a ScriptModule's args ("breaks type propagation")
    check(IsNotNone(), (x23, None), script=True, theirs="fails")
    check(IsNotNone(), (x23, x23), script=True)


class OptionalFromIf(nn.Module):
    def forward(self, x):
        y: Optional[torch.Tensor] = None
        if bool(x.sum() > 0):
            y = x + 1
        if y is not None:
            return y * 2
        return x


@pytest.mark.parametrize("sign", [1, -1], ids=["example_sets_it", "example_leaves_none"])
def test_optional_set_in_a_branch(sign):
    # the example's path must not decide `y is not None` for every input
    x = sign * x23.abs()
    check(OptionalFromIf(), (x,), script=True, more=[(-x,)])


class OptionalInLoop(nn.Module):
    def forward(self, x):
        y: Optional[torch.Tensor] = None
        for i in range(x.size(0)):
            if y is None:
                y = x[i]
            else:
                y = y + x[i]
        assert y is not None
        return y


def test_optional_carried_through_a_loop():
    check(OptionalInLoop(), (torch.randn(2, 3),), script=True, input_names=["x"], dynamic_axes={"x": [0]},
          more=[(torch.randn(5, 3),), (torch.randn(1, 3),)])


class EarlyReturn(nn.Module):
    def forward(self, x):
        for i in range(x.size(0)):
            if i == 2:
                return x * i
        return x


def test_return_inside_a_loop():
    # torch.onnx fails an internal assert on prim::Uninitialized
    check(EarlyReturn(), (torch.randn(4, 3),), script=True, input_names=["x"], dynamic_axes={"x": [0]},
          more=[(torch.randn(2, 3),), (torch.randn(3, 3),)], theirs="fails")


class SetSource(nn.Module):
    def forward(self, x, y):
        z = x * 1
        z.set_(y)
        return z + 1


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_set_(script):
    # torch.onnx: "Exporting the operator 'aten::set' ... is not supported"
    check(SetSource(), (x23, torch.randn(3, 2)), script=script, theirs="fails")


class Data(nn.Module):
    def forward(self, x):
        return x.data * 2


def test_prim_data():
    check(Data(), (x23,), script=True)


# ---- shapes under dynamic_axes stay computations


class Diagonal(nn.Module):
    def forward(self, x):
        return torch.diagonal(x, 1, 1, 2) * 2


class Unshuffle(nn.Module):
    def forward(self, x):
        return torch.nn.functional.pixel_unshuffle(x, 2)


def test_diagonal_along_dynamic_axes():
    check(Diagonal(), (torch.randn(2, 3, 4),), input_names=["x"], dynamic_axes={"x": [0, 1, 2]},
          more=[(torch.randn(3, 5, 2),), (torch.randn(1, 4, 4),)])


def test_pixel_unshuffle_along_dynamic_axes():
    check(Unshuffle(), (torch.randn(1, 2, 4, 6),), input_names=["x"], dynamic_axes={"x": [0, 2, 3]},
          more=[(torch.randn(2, 2, 8, 4),)])


# ---- numbers known at run time only (scripted int arguments)


class OneHotN(nn.Module):
    def forward(self, x, n: int):
        return torch.nn.functional.one_hot(x, n)


class LinspaceN(nn.Module):
    def forward(self, x, n: int):
        return torch.linspace(0, 1, n) + x.sum()


class ChunkN(nn.Module):
    def forward(self, x, n: int):
        return x.chunk(n, 0)[0] * 2


def test_one_hot_classes_at_run_time():
    check(OneHotN(), (torch.arange(4), 6), script=True, more=[(torch.arange(4), 9)])


def test_linspace_steps_at_run_time():
    check(LinspaceN(), (torch.randn(2), 5), script=True, opset=13, more=[(torch.randn(2), 9), (torch.randn(2), 2)])
    # one step: torch.onnx divides by steps - 1 and gives NaN, PyTorch gives [start]
    check(LinspaceN(), (torch.randn(2), 5), script=True, opset=13, more=[(torch.randn(2), 1)], theirs="wrong")


def test_chunk_count_at_run_time():
    check(ChunkN(), (torch.randn(6, 2), 2), script=True, more=[(torch.randn(6, 2), 3), (torch.randn(6, 2), 4)])


class IndexAddInPlace(nn.Module):
    def __init__(self, dim, index, source):
        super().__init__()
        self.dim, self.index, self.source = dim, index, source

    def forward(self, x):
        x.index_add_(self.dim, self.index, self.source)
        return x


@pytest.mark.skipif(torch.__version__ >= "2", reason="PyTorch 2.x requires the source's shape to match")
@pytest.mark.parametrize("opset", [9, 13, 17])
@pytest.mark.parametrize("dim,source", [(0, [[1.0], [4.0], [7.0], [3.0], [2.0]]),
                                        (1, [[[1.0, 5, 7], [2, 4, 5], [5, 5, 6], [2, 3, 4]]])], ids=["dim0", "dim1"])
def test_index_add_with_a_broadcast_source(dim, source, opset):
    # PyTorch 1.13 adds each source slice to its self slice with broadcasting
    index = torch.tensor([0, 2, 3, 1, 4][: len(source[0]) if dim == 1 else 5])
    check(IndexAddInPlace(dim, index, torch.tensor(source)), (torch.ones(5, 4, 3),), opset=opset, input_names=["x"])


class TupleFromBranches(nn.Module):
    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        if bool(x.sum() > 0):
            return x, x + 1
        return x * 2, x - 1


class TupleReassignedInBranch(nn.Module):
    def forward(self, x):
        t = (x, (x + 1, x * 2))
        if bool(x.sum() > 0):
            t = (x * 3, (x, x - 1))
        a, (b, c) = t
        return a + b * c


class TupleWithNoneFromBranches(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x, None
        return x * 2, None


@pytest.mark.parametrize("model, theirs", [(TupleFromBranches, "same"), (TupleReassignedInBranch, "fails")],
                         ids=["returned", "nested_reassigned"])
def test_tuples_out_of_branches(model, theirs):
    """An If whose output is a (nested) tuple: one output per element.
    torch.onnx: "prim::TupleUnpack not matched to tuple construct" when nested."""
    check(model(), (torch.ones(2, 3),), script=True, input_names=["x"], more=[(-torch.ones(2, 3),)], theirs=theirs)


def test_tuple_with_none_out_of_branches():
    """None left out of the outputs, as everywhere; torch.onnx 2.x returns it
    as an ONNX optional output from opset 15 (1.13: left out)."""
    e = check(TupleWithNoneFromBranches(), (torch.ones(2, 3),), script=True, input_names=["x"],
              more=[(-torch.ones(2, 3),)], theirs="other outputs")
    assert len(e.ours.graph.output) == 1


# ---- Optional outputs: None on some paths at run time (torch.onnx's TestOptionalOutput)


class IfNoneInput(nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if x.size(0) > 1:
            y = x
        return y


class IfNoneOutput(nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        if x.size(0) > 1:
            y = None
        return y


class LoopNoneInput(nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = None
        for _ in range(x.size(0)):
            y = x
        return y


class LoopNoneOutput(nn.Module):
    def forward(self, x) -> Optional[torch.Tensor]:
        y: Optional[torch.Tensor] = x
        for _ in range(x.size(0)):
            y = None
        return y


class TupleWithOptional(nn.Module):
    """A tensor, then an Optional set in a nested branch, then a plain tensor."""

    def forward(self, x) -> Tuple[torch.Tensor, Optional[torch.Tensor], torch.Tensor]:
        y: Optional[torch.Tensor] = None
        if x.size(0) > 1:
            if bool(x.sum() > 0):
                y = x * 2
        return x + 1, y, x - 1


OPTIONAL_OUTPUTS = [IfNoneInput, IfNoneOutput, LoopNoneInput, LoopNoneOutput, TupleWithOptional]
SIZES = [torch.ones(0), torch.ones(1), torch.ones(3), -torch.ones(2)]


@pytest.mark.parametrize("x_size", [0, 1], ids=["0", "1"])
@pytest.mark.parametrize("model", OPTIONAL_OUTPUTS, ids=lambda m: m.__name__)
def test_optional_output(model, x_size):
    """An ONNX optional(tensor) output, empty where PyTorch returns None, for
    every size: the example's path decides nothing. (torch.onnx names the
    element's dim after the input's dynamic axis; here it is unnamed unless
    dynamic_axes names the output's.)"""
    x = torch.ones(x_size)
    e = check(model(), (x,), script=True, opset=16, input_names=["x"], dynamic_axes={"x": {0: "condition"}},
              more=[(s,) for s in SIZES])
    optional = [o.type for o in e.ours.graph.output if o.type.HasField("optional_type")]
    assert len(optional) == 1
    tensor = optional[0].optional_type.elem_type.tensor_type
    assert tensor.elem_type == onnx.TensorProto.FLOAT
    if model is not TupleWithOptional:  # (whose example never computes the Optional: rank unknown)
        assert len(tensor.shape.dim) == 1


def test_optional_output_dims_named():
    e = check(IfNoneInput(), (torch.ones(2),), script=True, opset=17, input_names=["x"], output_names=["y"],
              dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, more=[(s,) for s in SIZES])
    tensor = e.ours.graph.output[0].type.optional_type.elem_type.tensor_type
    assert [d.dim_param for d in tensor.shape.dim] == ["n"]


@pytest.mark.parametrize("model", OPTIONAL_OUTPUTS, ids=lambda m: m.__name__)
def test_optional_output_below_opset_16(model):
    """torch.onnx exports these at opset 15 with optional outputs in If-13 or
    Loop-13, which ONNX (and ONNX Runtime) accept only from If-16/Loop-16: its
    model does not load. torch2onnx says which opset it needs."""
    m = torch.jit.script(model())
    kwargs = dict(opset_version=15, input_names=["x"], dynamic_axes={"x": {0: "condition"}})
    with pytest.raises(torch2onnx.errors.OnnxExporterError, match="opset_version >= 16"):
        torch2onnx.export(m, (torch.ones(1),), io.BytesIO(), **kwargs)
    theirs = io.BytesIO()
    with pytest.raises(Exception):  # (its export succeeds; its model is refused)
        torch.onnx.export(m, (torch.ones(1),), theirs, **kwargs, **TORCHSCRIPT_EXPORTER)
        onnxruntime.InferenceSession(theirs.getvalue(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("n", [1, 3])
def test_optional_output_verified(n):
    """verify=True compares an empty optional output with PyTorch's None."""
    m = torch.jit.script(IfNoneInput())
    torch2onnx.export(m, (torch.ones(n),), io.BytesIO(), opset_version=16, verify=True, input_names=["x"],
                      dynamic_axes={"x": [0]})


# ---- a recurrent module scripted by itself: forward is overloaded (forward__0
# on a tensor, forward__1 on a PackedSequence); the example's types pick one.


@pytest.mark.parametrize("cls, kwargs, with_state", [
    (nn.LSTM, dict(batch_first=True), False),
    (nn.LSTM, dict(num_layers=2, bidirectional=True), True),
    (nn.GRU, dict(batch_first=True), True),
    (nn.RNN, dict(nonlinearity="relu"), False),
])
def test_recurrent_module_scripted_directly(cls, kwargs, with_state):
    """torch.onnx refuses ("'forward' method must be a script method"); the
    ScriptModule cannot be called from Python either, so the reference is the
    eager module it was scripted from."""
    torch.manual_seed(0)
    eager = cls(3, 4, **kwargs).eval()
    scripted = torch.jit.script(eager)
    layers = eager.num_layers * (2 if eager.bidirectional else 1)

    def example(batch, seq):
        x = torch.randn(batch, seq, 3) if eager.batch_first else torch.randn(seq, batch, 3)
        if not with_state:
            return (x,)
        h = torch.randn(layers, batch, 4)
        return (x, (h, torch.randn(layers, batch, 4))) if cls is nn.LSTM else (x, h)

    args = example(2, 5)
    buf = io.BytesIO()
    torch2onnx.export(scripted, args, buf, input_names=["x", "h", "c"][:len(harness.flatten(args))],
                      dynamic_axes={"x": [0, 1]} if not with_state else None)
    session = onnxruntime.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for run_args in [args] + ([example(3, 7)] if not with_state else []):
        feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), harness.flatten(run_args))}
        with torch.no_grad():
            expected = harness.flatten(eager(*run_args))
        harness.compare(expected, session.run(None, feeds))
    with pytest.raises(Exception):
        torch.onnx.export(scripted, args, io.BytesIO(), **TORCHSCRIPT_EXPORTER)
