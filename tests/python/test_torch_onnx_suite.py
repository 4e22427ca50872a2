"""A sample of torch.onnx's own ONNX Runtime tests, exported by torch2onnx.export (issue 43).

Each test is named after the method of PyTorch's test/onnx/test_pytorch_onnx_onnxruntime.py (late 2022)
whose models and inputs it repeats (test_list_append_pop_del: its ids name the three methods), run by the
harness in torch_onnx_suite.py (the suite's run_test, the export routed to torch2onnx.export).
"""
import io
from typing import List, Optional, Tuple

import numpy as np
import onnx
import pytest
import torch
from torch import Tensor

from torch2onnx import verification
from torch_onnx_suite import OPSET, REFERENCE, Suite, classes, export

# ---- class 1: squeeze on a dynamic axis is a run-time rule ----------------------------------------------

class Squeeze(torch.nn.Module):  # squeeze_model_tests
    def __init__(self, d):
        super().__init__()
        self.d = d

    def forward(self, x):
        if self.d is not None:
            return torch.squeeze(x, dim=self.d)
        else:
            return torch.squeeze(x)


def squeeze_model_tests(suite, d, x1, x2):
    suite.run_test(Squeeze(d), x1, input_names=["input"], dynamic_axes={"input": {0: "0", 1: "1", 2: "2"}},
                   additional_test_inputs=[x2])


@classes()
def test_squeeze_no_op(kind, keep):
    """Issue 43's silently wrong case: dim 2 is 4 in the example, 1 in the second input."""
    squeeze_model_tests(Suite(kind, keep), 2, torch.randn(2, 1, 4), torch.randn(2, 2, 1))


@classes()
def test_squeeze_dynamic(kind, keep):
    squeeze_model_tests(Suite(kind, keep), 1, torch.randn(2, 1, 4), torch.randn(2, 2, 3))


@classes()
def test_squeeze_runtime_dim(kind, keep):
    """The squeezed dim's size comes from input values: known only at run time."""
    class SqueezeRuntime(torch.nn.Module):
        def forward(self, d1, d2):
            t = torch.zeros(d1[0], d2[0])
            return t.squeeze(0)
    d1, d3, d4 = torch.tensor([1]), torch.tensor([3]), torch.tensor([4])
    suite = Suite(kind, keep)
    suite.run_test(SqueezeRuntime(), (d1, d4), additional_test_inputs=[(d3, d4)])
    suite.run_test(SqueezeRuntime(), (d3, d4), additional_test_inputs=[(d1, d3)])


# ---- class 2: graph inputs torch.onnx keeps --------------------------------------------------------------

@classes()
def test_view_as(kind, keep):
    class ViewModel(torch.nn.Module):
        def forward(self, input, other):
            return input.view_as(other)
    Suite(kind, keep).run_test(ViewModel(), (torch.randn(2, 3, 4), torch.randn(6, 4)))


@classes()
def test_full_like(kind, keep):
    class FullLikeModel(torch.nn.Module):
        def forward(self, x):
            return torch.full_like(x, 1.3, dtype=torch.int)
    Suite(kind, keep).run_test(FullLikeModel(), torch.tensor(12))


@classes()
def test_copy_(kind, keep):
    class CopyModel(torch.nn.Module):
        def forward(self, x, data):
            x[1:3] = data
            return x

    class CopyModel5(torch.nn.Module):
        def forward(self, x, mask):
            if mask is not None:
                x.copy_(mask)
                return x
    suite, x = Suite(kind, keep), torch.randn(3, 4)
    suite.run_test(CopyModel(), (x, torch.randn(2, 4)))  # (CopyModel2-4, other index forms, left out)
    suite.run_test(CopyModel5(), (x, torch.randn(3, 1)))


@torch.jit.script
def list_append(boxes: List[Tensor]):
    temp = []
    for i, b in enumerate(boxes):  # enumerate is creating a prim::min op in torch graph
        temp.append(torch.full_like(b[:, 1], i))
    return temp[0]


@classes()
def test_prim_min(kind, keep):
    class Min(torch.nn.Module):
        def forward(self, x):
            boxes = [x for _ in range(3)]
            return list_append(boxes)

    class M(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x):
            i = 3
            return min(x[i], i)
    suite = Suite(kind, keep)
    suite.run_test(Min(), (torch.rand(5, 5),))
    if suite.is_script:
        suite.run_test(M(), (torch.arange(6, dtype=torch.int64),))


class MixedOptional(torch.nn.Module):  # test_mixed_optional_default_tensor_script
    def forward(self, x, y: Optional[Tensor] = torch.ones(2, 3), z: Optional[Tensor] = torch.zeros(2, 3)):
        if y is not None:
            return x + y
        if z is not None:
            return x + z
        return x


@classes(trace=False)
def test_mixed_optional_default_tensor_script(kind, keep):
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    model, suite = torch.jit.script(MixedOptional()), Suite(kind, keep)
    suite.run_test(model, (x, y, z), input_names=("x", "y", "z"))
    suite.run_test(model, (x,), {"y": y, "z": z}, input_names=("x", "y", "z"))
    suite.run_test(model, (x,), {"y": y}, input_names=("x", "y"))
    for example_inputs, example_kwargs in (((x, y, None), {}), ((x, None, z), {}), ((x,), {"y": y, "z": None}),
                                           ((x,), {"y": None, "z": z})):
        with pytest.raises(ValueError):  # torch.onnx: "args contained 1 None's after flattening."
            suite.run_test(model, example_inputs, example_kwargs, input_names=("x", "y", "z"))


@classes(trace=False)
def test_all_optional_default_tensor_script(kind, keep):
    class Model(torch.nn.Module):
        def forward(self, x: Optional[Tensor] = torch.ones(2, 3), y: Optional[Tensor] = torch.zeros(2, 3)):
            if x is not None:
                return x
            elif y is not None:
                return y
            else:
                return torch.tensor(-1.0)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    model, suite = torch.jit.script(Model()), Suite(kind, keep)
    suite.run_test(model, (x,))  # an optional graph input left unfed is its default
    # input_names=["y"] names the first input, x, "y": ONNX Runtime computes with the caller's y as x, PyTorch
    # with x's default (torch.onnx's model does the same).
    with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
        suite.run_test(model, (), {"y": y}, input_names=["y"])
    suite.run_test(model, (x, y))
    suite.run_test(model, (), {"x": x, "y": y}, input_names=("x", "y"))


@pytest.mark.parametrize("opset", [15, 17])
def test_optional_inputs_left_unfed(opset):
    """Optional[Tensor] parameters are ONNX optional inputs; one left unfed is what PyTorch gives a caller who
    leaves the argument out: its default (here a tensor, never None: an unfed y taking the `y is None` path
    would be a silently wrong model)."""
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    model, f = torch.jit.script(MixedOptional()), io.BytesIO()
    export(model, (x, {"y": y}), f, opset_version=opset, input_names=["x", "y", "z"])
    proto = onnx.load_from_string(f.getvalue())
    assert [i.type.WhichOneof("value") for i in proto.graph.input] == ["tensor_type", "optional_type", "optional_type"]
    onnx.checker.check_model(proto, full_check=True)
    session = verification.ort_session(f.getvalue())
    for feeds in ({"x": x}, {"x": x, "y": y}, {"x": x, "z": z}, {"x": x, "y": y, "z": z}):
        expected = model(x, **{k: v for k, v in feeds.items() if k != "x"})
        actual = session.run(None, {k: v.numpy() for k, v in feeds.items()})[0]
        torch.testing.assert_close(torch.from_numpy(actual), expected)


def test_optional_inputs_with_none_defaults_left_unfed():
    """An Optional[Tensor] parameter whose default is None: left unfed, it is None (the `is None` path)."""
    class NoneDefaults(torch.nn.Module):
        def forward(self, x, y: Optional[Tensor] = None, z: Optional[Tensor] = None):
            if y is not None:
                return x + y
            if z is not None:
                return x * z
            return x - 1
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    model, f = torch.jit.script(NoneDefaults()), io.BytesIO()
    export(model, (x, y, z), f, opset_version=17, input_names=["x", "y", "z"])
    session = verification.ort_session(f.getvalue())
    for feeds in ({"x": x}, {"x": x, "y": y}, {"x": x, "z": z}, {"x": x, "y": y, "z": z}):
        expected = model(x, **{k: v for k, v in feeds.items() if k != "x"})
        actual = session.run(None, {k: v.numpy() for k, v in feeds.items()})[0]
        torch.testing.assert_close(torch.from_numpy(actual), expected)


def test_optional_inputs_below_opset_15():
    """Before ONNX's optional type (opset 15): plain inputs that always stay, presence as in the example."""
    if REFERENCE:
        pytest.skip("torch.onnx 2.14 writes y without a type and drops z here")
    x, y, z = torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)
    model, f = torch.jit.script(MixedOptional()), io.BytesIO()
    export(model, (x, y, z), f, opset_version=14, input_names=["x", "y", "z"])
    proto = onnx.load_from_string(f.getvalue())
    assert [i.type.WhichOneof("value") for i in proto.graph.input] == ["tensor_type"] * 3
    actual = verification.ort_session(f.getvalue()).run(None, {"x": x.numpy(), "y": y.numpy(), "z": z.numpy()})[0]
    torch.testing.assert_close(torch.from_numpy(actual), x + y)


# ---- class 3: TorchScript lists become ONNX sequences ----------------------------------------------------

class ListAppend(torch.nn.Module):  # test_list_append
    def forward(self, x, y):
        res = []
        for i in range(x.size(0)):
            res += [torch.matmul(x[i], y)]
        return res


class ListPop(torch.nn.Module):  # test_list_pop
    def forward(self, x, y):
        res = []
        for i in range(x.size(0)):
            res += [torch.matmul(x[i], y)]
        res.pop()
        return res


class ListDel(torch.nn.Module):  # test_list_del
    def forward(self, x, y):
        res = []
        for i in range(x.size(0)):
            res += [torch.matmul(x[i], y)]
        del res[2]
        return res


@pytest.mark.parametrize("model", [ListAppend, ListPop, ListDel],
                         ids=["test_list_append", "test_list_pop", "test_list_del"])
@classes(trace=False)
def test_list_append_pop_del(model, kind, keep):
    Suite(kind, keep).run_test(torch.jit.script(model()), (torch.randn(16, 3, 4), torch.randn(4, 5)))


@classes(trace=False)
def test_list_unpack(kind, keep):
    """Unpacking a list whose length only the run knows (built in a loop over x.size(0))."""
    class ListModel(torch.nn.Module):
        def forward(self, x, y):
            res = []
            elem = torch.matmul(x[0], y)
            for i in range(x.size(0)):
                res.append(torch.matmul(x[i], y))
            a, b, c = res
            return a, b
    Suite(kind, keep).run_test(torch.jit.script(ListModel()), (torch.randn(3, 3, 4), torch.randn(4, 5)))


# ---- class 4: optional outputs carry the dynamic_axes names ----------------------------------------------

class IfNoneInput(torch.nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        y: Optional[Tensor] = None
        if x.size(0) > 1:
            y = x
        return y


class IfNoneOutput(torch.nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        y: Optional[Tensor] = x
        if x.size(0) > 1:
            y = None
        return y


class LoopNoneInput(torch.nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        y: Optional[Tensor] = None
        for _ in range(x.size(0)):
            y = x
        return y


class LoopNoneOutput(torch.nn.Module):
    def forward(self, x) -> Optional[Tensor]:
        y: Optional[Tensor] = x
        for _ in range(x.size(0)):
            y = None
        return y


@pytest.mark.parametrize("x_size", [0, 1], ids=str)
@pytest.mark.parametrize("module_class", [IfNoneOutput, IfNoneInput, LoopNoneOutput, LoopNoneInput],
                         ids=lambda c: c.__name__)
@classes(trace=False)
def test_optional_output(module_class, x_size, kind, keep):
    model, f, x = torch.jit.script(module_class()), io.BytesIO(), torch.ones(x_size)
    dynamic_axis_name = "condition"
    export(model, x, f, opset_version=OPSET, dynamic_axes={"x": {0: dynamic_axis_name}}, input_names=["x"])
    exported = onnx.load_from_string(f.getvalue())
    expected_output_type = onnx.helper.make_optional_type_proto(
        onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, (dynamic_axis_name,)))
    assert exported.graph.output[0].type == expected_output_type
    # both branches of the If making the optional output declare its type (torch2onnx carries an optional
    # value through the graph as a (value, is-present) pair: only that If holds optionals, not torch.onnx's
    # every If)
    for node in exported.graph.node:
        if node.op_type == "If" and node.output[0] == exported.graph.output[0].name:
            for attr in node.attribute:
                if attr.name in ("then_branch", "else_branch"):
                    assert attr.g.output[0].type == expected_output_type
    Suite(kind, keep).run_test(module_class(), x, dynamic_axes={"x": {0: dynamic_axis_name}}, input_names=["x"])


# ---- class 5: module attributes assigned in a loop -------------------------------------------------------

@classes(trace=False)
def test_set_attr_in_loop(kind, keep):
    class MyModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(10, 3, 3)
            self.conv.weight = torch.nn.Parameter(torch.zeros(3, 10))
            self.conv.bias = torch.nn.Parameter(torch.zeros(3, 10, 3))

        def set_cell_anchors(self, anchors, boxes):
            self.conv.weight = torch.randn(3, 10)
            for i in range(self.conv.weight.size(0)):
                for j in range(10):
                    self.conv.bias = torch.randn(3, 10, 3)
                    self.conv.weight = anchors * i
                    boxes[j] += torch.ones(3, 3)

        def forward(self, anchors) -> Tuple[Tensor, Tensor]:
            boxes = torch.ones(10, 3, 3)
            self.set_cell_anchors(anchors, boxes)
            if self.conv.bias is not None:
                return self.conv.weight, boxes
            return anchors, boxes
    Suite(kind, keep).run_test(torch.jit.script(MyModule()), torch.rand(10))


@classes(trace=False)
def test_set_attr_5(kind, keep):
    class MyModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(10, 3, 3)
            self.conv.bias = torch.nn.Parameter(torch.zeros(3, 10, 3))

        def set_cell_anchors(self, anchors):
            self.conv.weight = torch.arange(10)
            for i in range(10):
                if i == 3:
                    for j in range(10):
                        w = self.conv.weight
                        self.conv.weight = torch.arange(10) + w

                self.conv.weight = self.conv.weight + torch.arange(10)
                # NOTE: `is not None` and `assert` is for passing torchscript.
                if self.conv.bias is not None:
                    a = self.conv.bias
                    assert a is not None
                    self.conv.bias = anchors + a

        def forward(self, anchors):
            self.set_cell_anchors(anchors)
            return self.conv.weight, self.conv.bias
    Suite(kind, keep).run_test(torch.jit.script(MyModule()), torch.ones(3, 10, 3))


@classes(trace=False)
def test_inplace_attr_with_loop(kind, keep):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self._bias = torch.arange(12)

        def forward(self, x):
            self._bias = torch.arange(12)
            for i in range(10):
                if i == 3:
                    for j in range(5):
                        self._bias += torch.arange(12)
            return self._bias + x
    Suite(kind, keep).run_test(torch.jit.script(M()), torch.zeros(12))


# ---- class 6: the rest (dynamic axes, aten::pad) ----------------------------------------------------------

@classes()
def test_dynamic_repeat_interleave(kind, keep):
    class SingleDynamicModel(torch.nn.Module):
        def forward(self, x):
            repeats = torch.tensor(4)
            return torch.repeat_interleave(x, repeats, dim=1)

    class DynamicRepeatsModel(torch.nn.Module):
        def forward(self, x, repeats):
            return torch.repeat_interleave(x, repeats, dim=1)
    suite = Suite(kind, keep)
    x, another_x = torch.tensor([[1, 2, 4], [3, 4, 7]]), torch.tensor([[7, 8], [5, 6]])
    suite.run_test(SingleDynamicModel(), x, additional_test_inputs=[another_x], input_names=["input_1"],
                   dynamic_axes={"input_1": {1: "w"}})
    suite.run_test(DynamicRepeatsModel(), (x, torch.tensor([2])),
                   additional_test_inputs=[(another_x, torch.tensor([4]))], input_names=["input_1", "repeats_1"],
                   dynamic_axes={"input_1": {1: "w"}, "repeats_1": {0: "r"}})


@classes()
def test_dynamic_expand_as(kind, keep):
    class Model(torch.nn.Module):
        def forward(self, x):
            x[:, x.size(0):] = 0
            return x

    class Model3(torch.nn.Module):
        def forward(self, x):
            aa = torch.tensor([[0], [1], [2]])
            return aa.expand_as(x)
    suite = Suite(kind, keep)
    suite.run_test(Model(), (torch.ones(2, 5),), input_names=["x"], dynamic_axes={"x": [0, 1]},
                   additional_test_inputs=[torch.randn(3, 4)])
    suite.run_test(Model3(), (torch.ones(3, 2),), input_names=["x"], dynamic_axes={"x": [0, 1]},
                   additional_test_inputs=[torch.randn(3, 5)])


@classes(trace=False)
def test_stack_dynamic(kind, keep):
    class StackDynamicModel(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x):
            return torch.stack(x.unbind(), 1)
    Suite(kind, keep).run_test(StackDynamicModel(), torch.randn(4, 5, 6))


@classes(script=False)
def test_weight_norm(kind, keep):
    suite = Suite(kind, keep)
    suite.run_test(torch.nn.utils.weight_norm(torch.nn.Linear(5, 10), dim=1), torch.randn(3, 4, 5))
    suite.run_test(torch.nn.utils.weight_norm(torch.nn.Linear(5, 10), dim=1), torch.randn(4, 5))
    suite.run_test(torch.nn.utils.weight_norm(torch.nn.Conv1d(1, 1, 3)), torch.randn(1, 1, 5))
    suite.run_test(torch.nn.utils.weight_norm(torch.nn.Conv1d(1, 1, 3), dim=-2), torch.randn(1, 1, 5))
    suite.run_test(torch.nn.utils.weight_norm(torch.nn.Conv1d(3, 6, 3), name="weight"), torch.randn(3, 3, 5))


@pytest.mark.parametrize("pad", [[2, 4], [torch.tensor(2, dtype=torch.int64), torch.tensor(4, dtype=torch.int64)]],
                         ids=["scalar_list", "scalar_tensor_list"])
@classes()
def test_pad_types(pad, kind, keep):
    class Pad(torch.nn.Module):
        def forward(self, x, pad: List[int]):
            return torch.nn.functional.pad(x, pad)
    Suite(kind, keep).run_test(Pad(), (torch.randn(2, 2, 4, 4), pad))


class PadList(torch.nn.Module):
    def forward(self, x, pad: List[int]):
        return torch.nn.functional.pad(x, pad)


class ScaleList(torch.nn.Module):
    def forward(self, x, scales: List[float]):
        return x * scales[0] + scales[len(scales) - 1]


@pytest.mark.parametrize("opset", [11, 17])
def test_number_list_inputs_at_run_time(opset):
    """A scripted List[int] / List[float] parameter is a sequence input: its length and values are the caller's."""
    if REFERENCE:
        pytest.skip("torch.onnx 2.14 reads scales[0] of the sequence with a Gather: an invalid model")
    x = torch.randn(2, 2, 4, 4)
    for model, example, others in ((PadList(), [2, 4], ([1, 1, 2, 2], [0, 3], [1, 0, 0, 2, 1, 1])),
                                   (ScaleList(), [2.0, 0.5], ([3.0], [1.5, -2.0, 4.0]))):
        scripted, f = torch.jit.script(model), io.BytesIO()
        export(scripted, (x, example), f, opset_version=opset)
        proto = onnx.load_from_string(f.getvalue())
        assert proto.graph.input[1].type.WhichOneof("value") == "sequence_type"
        onnx.checker.check_model(proto, full_check=True)
        session = verification.ort_session(f.getvalue())
        for value in (example,) + others:
            feed = [np.array(v, dtype=np.int64 if isinstance(v, int) else np.float64) for v in value]
            actual = session.run(None, {proto.graph.input[0].name: x.numpy(), proto.graph.input[1].name: feed})[0]
            torch.testing.assert_close(torch.from_numpy(actual), scripted(x, value))


# ---- issue 43, continued: run-time dims, chunks, early-returned lists, checks that read inputs -----------

@classes()
def test_squeeze_dynamic_dim(kind, keep):
    class Squeeze(torch.nn.Module):
        def forward(self, x, dim: int):
            return torch.squeeze(x, dim)
    Suite(kind, keep).run_test(Squeeze(), (torch.randn(2, 1, 4), 1))


@classes()
def test_unsqueeze_dynamic_dim(kind, keep):
    class Unsqueeze(torch.nn.Module):
        def forward(self, x, dim: int):
            return torch.unsqueeze(x, dim)
    Suite(kind, keep).run_test(Unsqueeze(), (torch.randn(2, 1, 4), -1))


class Chunk(torch.nn.Module):  # test_chunk, test_dynamic_chunk
    def __init__(self, dim=1, dynamic=False):
        super().__init__()
        self.dim, self.dynamic = dim, dynamic

    def forward(self, x):
        return torch.chunk(x, x.size(0) if self.dynamic else 3, dim=self.dim)


@pytest.mark.parametrize("dynamic", [False, True], ids=["test_chunk", "test_dynamic_chunk"])
@classes()
def test_chunk(dynamic, kind, keep):
    """Pieces along a dynamic dim: the number the trace unpacks, sizes from the run-time length."""
    suite = Suite(kind, keep)
    x = torch.randn(3 if dynamic else 1, 18)
    for dim_size in range(13, 16):
        y = torch.randn(3 if dynamic else 1, dim_size)
        for dim in (1, -1):
            suite.run_test(Chunk(dim, dynamic), x, additional_test_inputs=[y], input_names=["x"],
                           dynamic_axes={"x": {0: "batch_size", 1: "dims"}})


@classes(trace=False)
def test_uninitialized_intList(kind, keep):
    """A list returned early from a branch: unset on the other path (an empty sequence there, never read)."""
    class UninitializedListModel(torch.nn.Module):
        def forward(self, x):
            y = list(range(x.size(0)))
            if y[0] < 5:
                if x.size(0) == 3:
                    y.append(10)
                else:
                    return y
            return y
    Suite(kind, keep).run_test(torch.jit.script(UninitializedListModel()), torch.ones((3, 4), dtype=torch.int),
                               input_names=["input_1"], dynamic_axes={"input_1": [0, 1]})


@classes(trace=False)
def test_uninitialized_tensorList_shape(kind, keep):
    class UninitializedModel(torch.nn.Module):
        def forward(self, x):
            if x.shape[1] < 5:
                if x.size(0) == 1:
                    x = x + 4
                else:
                    x_list = list(x)
                    x_list.append(x)
                    return x_list
            return [x, x]
    x, y = torch.ones((3, 4), dtype=torch.int), torch.ones((4, 6), dtype=torch.int)
    Suite(kind, keep).run_test(torch.jit.script(UninitializedModel()), x, additional_test_inputs=[y],
                               input_names=["input_1"], dynamic_axes={"input_1": [0, 1]})


@classes(trace=False)
def test_tuple_output_from_if_with_raised_exception(kind, keep):
    """`if float(t) < 0: raise`: the check goes, the input it read stays (the caller passes it)."""
    class M(torch.nn.Module):
        def forward(self, t: Tensor) -> Tuple[Tensor, Tensor]:
            if float(t) < 0:
                raise Exception("Negative input")
            else:
                return torch.zeros(5), torch.zeros(5)
    Suite(kind, keep).run_test(torch.jit.script(M()), (torch.zeros(1),))


@classes(trace=False)
def test_list_del_nested(kind, keep):
    """`del res[i]` with i a loop's index: t2o::list_erase, then SequenceErase."""
    class ListModel(torch.nn.Module):
        def forward(self, x, y):
            res = []
            for i in range(x.size(0)):
                for j in range(x.size(1)):
                    res += [torch.matmul(x[i][j], y)]
                    del res[i]
                res += [torch.matmul(x[i][0], y)]
            return res
    Suite(kind, keep).run_test(torch.jit.script(ListModel()), (torch.randn(4, 4, 3, 4), torch.randn(4, 5)))


@classes(trace=False)
def test_list_pop_runtime_index(kind, keep):
    """`l.pop(i)` with i an input's size: the element, and the list without it, both at run time."""
    class ListModel(torch.nn.Module):
        def forward(self, x, y):
            res = []
            for i in range(x.size(0)):
                res.append(x[i] * (i + 1))
            last = res.pop(y.size(0) - 4)
            return last, res
    suite = Suite(kind, keep)
    suite.run_test(torch.jit.script(ListModel()), (torch.randn(4, 3), torch.randn(2)), input_names=["x", "y"],
                   dynamic_axes={"x": [0], "y": [0]}, additional_test_inputs=[(torch.randn(6, 3), torch.randn(5))])


def test_list_erase_out_of_range_fails_in_onnx_runtime():
    """Python raises IndexError for `del l[i]` past the end; the exported model fails there too."""
    class ListModel(torch.nn.Module):
        def forward(self, x, y):
            res = [x[0], x[1], x[2]]
            del res[y.size(0)]
            return torch.stack(res)
    model, f = torch.jit.script(ListModel()), io.BytesIO()
    export(model, (torch.randn(3, 2), torch.randn(1)), f, opset_version=OPSET, input_names=["x", "y"],
           dynamic_axes={"y": [0]})
    session = verification.ort_session(f.getvalue())
    x = torch.randn(3, 2)
    for n in (0, 1, 2):
        out = session.run(None, {"x": x.numpy(), "y": np.zeros(n, np.float32)})[0]
        np.testing.assert_allclose(out, model(x, torch.zeros(n)).numpy())
    with pytest.raises(Exception):
        model(x, torch.zeros(3))
    with pytest.raises(Exception):
        session.run(None, {"x": x.numpy(), "y": np.zeros(3, np.float32)})


@classes(trace=False)
def test_slice_dynamic_shape_script(kind, keep):
    """x.shape[1 : x.size(2)]: a slice of the sizes whose end is known at run time."""
    class DynamicSliceModel(torch.nn.Module):
        def forward(self, x):
            return x.new_zeros(x.shape[1: x.size(2)])
    x = torch.rand(1, 2, 3, 4)
    suite = Suite(kind, keep)
    suite.run_test(DynamicSliceModel(), x, input_names=["x"], dynamic_axes={"x": [0, 1, 2, 3]},
                   additional_test_inputs=[torch.rand(2, 3, 4, 5)])
    suite.run_test(DynamicSliceModel(), x, remained_onnx_input_idx=[])


@classes(trace=False)
def test_interpolate_no_shape(kind, keep):
    """interpolate's own checks read y's sizes only: y goes where its sizes are static (as torch.onnx drops it),
    unlike an input whose values a removed check reads (test_tuple_output_from_if_with_raised_exception)."""
    class MyModel(torch.jit.ScriptModule):
        @torch.jit.script_method
        def forward(self, x, y):
            x = torch.add(x, x)
            out1 = torch.nn.functional.interpolate(x, mode="bilinear", size=(16, 16), align_corners=False)
            out2 = torch.nn.functional.interpolate(x, mode="nearest", size=(int(y.size(0)), int(y.size(1))))
            return out1, out2
    x, y = torch.randn(1, 2, 4, 4), torch.randn(16, 16)
    suite = Suite(kind, keep)
    suite.run_test(MyModel(), (x, y), input_names=["x", "y"], dynamic_axes={"x": [0, 1, 2, 3], "y": [0, 1]})
    suite.run_test(MyModel(), (x, y), remained_onnx_input_idx=[0])


@classes(trace=False)
def test_list_append_nested_2(kind, keep):
    """Lists that stay empty (the appends sit under a condition that never holds): empty sequences out. x only
    counts the trips of a loop that folds away: it goes (torch.onnx's graph keeps the loop, and x; its
    test_index_put_inplace_ops, where a loop over x.size(0) folds in torch.onnx too, drops it)."""
    class ListModel(torch.nn.Module):
        def forward(self, x):
            res = []
            res_replicate = []
            for i in range(x.size(0)):
                if len(res) > 2:
                    for j in range(x.size(1)):
                        res.append(x[i][j])
                    res_replicate.append(res[-1])
                    res.append(res_replicate[-1])
            return res, res_replicate
    Suite(kind, keep).run_test(torch.jit.script(ListModel()), (torch.randn(4, 4, 3, 4),), remained_onnx_input_idx=[])


@classes(trace=False)
def test_uninitialized_tensorList_dynamic(kind, keep):
    """list(x) on a path the example does not take: its elements' dtype is x's (double), not a guess."""
    class UninitializedTensorListModel(torch.nn.Module):
        def forward(self, x):
            if x[0].shape[0] < 5:
                if x.size(0) == 1:
                    x += x
                else:
                    return list(x)
            return list(x)
    Suite(kind, keep).run_test(torch.jit.script(UninitializedTensorListModel()), torch.ones((3, 4), dtype=torch.double),
                               input_names=["input_1"], dynamic_axes={"input_1": [0, 1]},
                               additional_test_inputs=[torch.randn((1, 4), dtype=torch.double),
                                                       torch.randn((2, 9), dtype=torch.double)])
