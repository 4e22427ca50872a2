"""Drop-in parity, the graph interface: the ONNX graph takes the inputs
torch.onnx's takes for the same call (numbers as 0-d inputs, containers
flattened, None and strings left out, inputs the graph does not read
dropped), in the same order, with the same names."""
from typing import Optional, Tuple

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from dropin import Exports, check


class Unused(nn.Module):
    def forward(self, x, y):
        return x * 2


class UnusedFirst(nn.Module):
    def forward(self, x, y):
        return y * 2


class ShapeOnly(nn.Module):
    def forward(self, x):
        return torch.zeros(x.size()) + torch.ones(x.size())


class AddInt(nn.Module):
    def forward(self, x: int, y):
        return x + y


class MulFloat(nn.Module):
    def forward(self, x, y: float):
        return x * y


class Flag(nn.Module):
    def forward(self, x, flag: bool):
        return x * flag


class Nested(nn.Module):
    def forward(self, a, b: Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]):
        return a + b[0] + b[1][0] + b[1][1]


class TupleWithInt(nn.Module):
    def forward(self, a: Tuple[int, torch.Tensor], b):
        return a[1] + b * a[0]


class DictIn(nn.Module):
    def forward(self, d):
        return {"out": d["a"] * 2 + d["b"]}


class Optionals(nn.Module):
    def forward(self, x, y: Optional[torch.Tensor] = None, z: Optional[torch.Tensor] = None):
        if y is not None:
            return x + y
        if z is not None:
            return x * z
        return x


class Pad(nn.Module):
    def forward(self, x, pad: list):
        return F.pad(x, pad)


class StrArg(nn.Module):
    def forward(self, x, mode: str):
        return x.sum() if mode == "sum" else x.mean()


x23, y23 = torch.randn(2, 3), torch.randn(2, 3)


def test_unused_argument_is_dropped():
    check(Unused(), (x23, torch.randn(2)))
    # default names (ours: the argument's, torch.onnx's: "onnx::Mul_0"): the same count
    e = Exports(Unused(), (x23, torch.randn(2)), 17, {"input_names": None})
    assert [i.name for i in e.ours.graph.input] == ["x"]
    assert len(e.theirs.graph.input) == 1


def test_unused_first_argument_keeps_the_names_of_the_rest():
    e = check(UnusedFirst(), (x23, torch.randn(2)), input_names=["a", "b"])
    assert [i.name for i in e.ours.graph.input] == ["b"]


def test_unused_argument_named_in_dynamic_axes():
    check(UnusedFirst(), (x23, torch.randn(2)), input_names=["a", "b"], dynamic_axes={"a": [0], "b": [0]})


def test_input_read_only_for_a_static_shape_is_dropped():
    e = check(ShapeOnly(), (x23,))
    assert len(e.ours.graph.input) == 0


def test_input_read_for_a_dynamic_shape_stays():
    check(ShapeOnly(), (x23,), input_names=["x"], dynamic_axes={"x": [0, 1]}, more=[(torch.randn(4, 5),)])


def test_unused_scripted_argument_is_dropped():
    check(Unused(), (x23, torch.randn(2)), script=True)


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_int_argument_is_an_input(script):
    # traced: the model sees a 0-d int64 tensor, so another int works at run time
    check(AddInt(), (3, torch.randint(10, (2, 3))), script=script, more=[(7, torch.randint(10, (2, 3)))])


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_float_argument_is_an_input(script):
    check(MulFloat(), (x23, 2.5), script=script, more=[(x23, -0.5)])


def test_bool_argument_is_an_input():
    check(Flag(), (x23, True), more=[(x23, False)])


@pytest.mark.parametrize("script", [False, True], ids=["trace", "script"])
def test_nested_tuple_argument(script):
    args = (torch.randn(4, 5), (torch.randn(4, 5), (torch.randn(1, 5), torch.randn(4, 1))))
    check(Nested(), args, script=script)


def test_tuple_holding_a_number():
    check(TupleWithInt(), ((3, torch.randn(4, 3)), torch.randn(4, 3)), more=[((-2, torch.randn(4, 3)), torch.randn(4, 3))])


def test_dict_argument():
    # a dict as the last positional argument: an empty dict after it
    check(DictIn(), ({"a": x23, "b": y23}, {}))


def test_none_between_tensors():
    check(Optionals(), (x23, None, y23))


def test_keyword_arguments():
    check(Optionals(), (x23, {"z": y23}))
    check(Optionals(), (x23, {"y": y23, "z": None}))


def test_list_of_ints_argument():
    check(Pad(), (torch.randn(2, 2, 4, 4), [2, 4]), opset=11)


def test_string_argument_is_not_an_input():
    check(StrArg(), (x23, "sum"))


# ---- outputs: flattened as torch.onnx flattens them


class NoneOut(nn.Module):
    def forward(self, x):
        return x + 1, None


class NumberOut(nn.Module):
    def forward(self, x):
        return x + 1, 3, 2.5


class NestedOut(nn.Module):
    def forward(self, x):
        return [x + 1, (x * 2, {"a": x - 1, "b": None})]


class Passthrough(nn.Module):
    def forward(self, x, y):
        return x, y * 2, x


class ArgNamedOutput(nn.Module):
    def forward(self, output):
        return output + 1


def test_none_output_is_left_out():
    e = check(NoneOut(), (x23,))
    assert len(e.ours.graph.output) == 1


def test_nested_containers_of_outputs_are_flattened():
    e = check(NestedOut(), (x23,))
    assert len(e.ours.graph.output) == 3


def test_number_outputs_are_constants():
    # torch.onnx refuses ("did not have observable data dependence"); ours are 0-d constant outputs
    e = check(NumberOut(), (x23,), theirs="fails")
    assert [o.type.tensor_type.elem_type for o in e.ours.graph.output][1:] == [7, 11]  # int64, double


def test_inputs_returned_as_outputs():
    check(Passthrough(), (x23, y23))


def test_default_output_name_yields_to_an_argument_name():
    # forward(output): the input keeps the argument's name, the output gets another
    e = Exports(ArgNamedOutput(), (x23,), 17, {"input_names": None})
    assert [i.name for i in e.ours.graph.input] == ["output"]
    assert e.ours.graph.output[0].name != "output"
    check(ArgNamedOutput(), (x23,))


def test_output_name_equal_to_an_input_name_is_refused():
    import io

    import torch2onnx

    with pytest.raises(torch2onnx.errors.OnnxExporterError, match="output name 'x' is already the name of a graph input"):
        torch2onnx.export(ArgNamedOutput(), (x23,), io.BytesIO(), input_names=["x"], output_names=["x"])
