"""Python symbolic functions: register_custom_op_symbolic (custom ops, a custom
domain, overriding built-ins), parse_args, and torch.autograd.Function
(a `symbolic` used, or the function inlined)."""
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnx.helper as oh
import pytest
import torch
import torch.nn as nn

import torch2onnx
from torch2onnx import symbolic_helper
from torch2onnx.symbolic_helper import parse_args
from conftest import assert_matches, check_onnx, export_and_run, harness, run_ort

# A custom operator defined from Python (as a C++ TORCH_LIBRARY op would be).
_lib = torch.library.Library("custom_ops", "DEF")
_lib.define("foo_forward(Tensor input1, Tensor input2, float attr1, int attr2) -> Tensor")


def _foo_forward(input1, input2, attr1, attr2):
    return input1 * attr1 + input2 * attr2


_lib.impl("foo_forward", _foo_forward, "CPU")


class FooModel(nn.Module):
    def __init__(self, attr1, attr2):
        super().__init__()
        self.attr1 = attr1
        self.attr2 = attr2

    def forward(self, input1, input2):
        return torch.ops.custom_ops.foo_forward(input1, input2, self.attr1, self.attr2)


@parse_args("v", "v", "f", "i")
def symbolic_foo_forward(g, input1, input2, attr1, attr2):
    return g.op("custom_domain::Foo", input1, input2, attr1_f=attr1, attr2_i=attr2)


@pytest.fixture
def foo_symbolic():
    torch2onnx.register_custom_op_symbolic("custom_ops::foo_forward", symbolic_foo_forward, 9)
    yield
    torch2onnx.unregister_custom_op_symbolic("custom_ops::foo_forward", 9)


def test_custom_op_in_a_custom_domain(tmp_path, foo_symbolic):
    model = FooModel(0.5, 3)
    x1, x2 = torch.randn(2, 3), torch.randn(2, 3)
    path = str(tmp_path / "model.onnx")
    torch2onnx.export(model, (x1, x2), path, custom_opsets={"custom_domain": 2})
    proto = onnx.load(path)
    (node,) = [n for n in proto.graph.node if n.domain == "custom_domain"]
    assert node.op_type == "Foo"
    attrs = {a.name: oh.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"attr1": pytest.approx(0.5), "attr2": 3}
    assert {o.domain: o.version for o in proto.opset_import}["custom_domain"] == 2
    # Give ONNX Runtime an implementation of custom_domain::Foo and run it.
    proto.functions.append(harness.custom_domain_foo_function())
    del proto.opset_import[:]
    proto.opset_import.extend([oh.make_opsetid("", 17), oh.make_opsetid("custom_domain", 2)])
    onnx.checker.check_model(proto)
    out = run_ort(proto.SerializeToString(), [x1, x2])
    assert_matches(model(x1, x2), out)


def test_custom_op_without_symbolic_is_reported(tmp_path):
    with pytest.raises(torch2onnx.UnsupportedOperatorError, match="custom_ops::foo_forward") as info:
        torch2onnx.export(FooModel(0.5, 3), (torch.randn(2, 3), torch.randn(2, 3)), str(tmp_path / "m.onnx"))
    assert "custom_ops::foo_forward" in info.value.operators
    assert not (tmp_path / "m.onnx").exists()


def test_custom_op_default_domain_opset(tmp_path, foo_symbolic):
    # Without custom_opsets the custom domain is imported at version 1.
    path = str(tmp_path / "model.onnx")
    torch2onnx.export(FooModel(1.5, 2), (torch.randn(2, 3), torch.randn(2, 3)), path, opset_version=13)
    proto = onnx.load(path)
    assert {o.domain: o.version for o in proto.opset_import} == {"": 13, "custom_domain": 1}


class MyRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def symbolic(g, input):
        return g.op("Clip", input, g.op("Constant", value_t=torch.tensor(0, dtype=torch.float)))


class MyLogExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(input)
        h = input.exp()
        return h.log().log()


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(x)


def test_autograd_function_symbolic_is_used(tmp_path):
    x = torch.randn(3, 4)
    proto, out = export_and_run(Fn(MyRelu), (x,), tmp_path, opset_version=11)
    assert [n.op_type for n in proto.graph.node if n.op_type != "Constant"] == ["Clip"]
    assert_matches(MyRelu.apply(x), out)


def test_autograd_function_without_symbolic_is_inlined(tmp_path):
    x = torch.rand(3, 4) + 1.5  # log(log(exp(x))) needs x > 0
    proto, out = export_and_run(Fn(MyLogExp), (x,), tmp_path)
    assert [n.op_type for n in proto.graph.node] == ["Exp", "Log", "Log"]
    assert_matches(MyLogExp.apply(x), out)


def test_autograd_inlining_off_needs_a_symbolic(tmp_path):
    with pytest.raises(torch2onnx.UnsupportedOperatorError, match="MyLogExp"):
        torch2onnx.export(Fn(MyLogExp), (torch.rand(3),), str(tmp_path / "m.onnx"), autograd_inlining=False)


class ReluModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 5), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


def test_overriding_a_builtin(tmp_path):
    def leaky(g, self):
        return g.op("LeakyRelu", self, alpha_f=0.25)

    torch2onnx.register_custom_op_symbolic("aten::relu", leaky, 15)
    try:
        x = torch.randn(2, 3)
        proto, out = export_and_run(ReluModel(), (x,), tmp_path, opset_version=15)
        assert [n.op_type for n in proto.graph.node].count("LeakyRelu") == 2
        expected = ReluModel()  # the same weights: seeded
        # Below the registered opset the built-in conversion is still used.
        proto14, _ = export_and_run(ReluModel(), (x,), tmp_path, name="m14.onnx", opset_version=14)
        assert "LeakyRelu" not in {n.op_type for n in proto14.graph.node}
    finally:
        torch2onnx.unregister_custom_op_symbolic("aten::relu", 15)
    proto, _ = export_and_run(ReluModel(), (x,), tmp_path, name="after.onnx", opset_version=15)
    assert "Relu" in {n.op_type for n in proto.graph.node}


def test_elu_symbolic_with_attributes_and_helpers(tmp_path):
    @parse_args("v", "f", "f", "f")
    def elu(g, input, alpha, scale, input_scale):
        assert symbolic_helper._get_tensor_rank(input) == 2
        assert symbolic_helper._get_tensor_sizes(input) == [2, 5]
        return g.op("Elu", input, alpha_f=alpha)

    torch2onnx.register_custom_op_symbolic("aten::elu", elu, 9)
    try:
        x = torch.randn(2, 5)
        m = nn.ELU(alpha=0.7)
        proto, out = export_and_run(m, (x,), tmp_path, opset_version=11)
        (node,) = proto.graph.node
        assert node.op_type == "Elu" and node.attribute[0].f == pytest.approx(0.7)
        assert_matches(m(x), out)
    finally:
        torch2onnx.unregister_custom_op_symbolic("aten::elu", 9)


def test_symbolic_with_several_outputs(tmp_path):
    def split_symbolic(g, self, split_size, dim):
        return g.op("Split", self, axis_i=1, outputs=2)

    class TwoHalves(nn.Module):
        def forward(self, x):
            a, b = torch.ops.aten.split(x, 2, 1)
            return a * 2, b + 1

    torch2onnx.register_custom_op_symbolic("aten::split", split_symbolic, 11)
    try:
        x = torch.randn(3, 4)
        proto, out = export_and_run(TwoHalves(), (x,), tmp_path, opset_version=11)
        assert "Split" in {n.op_type for n in proto.graph.node}
        assert_matches(TwoHalves()(x), out)
    finally:
        torch2onnx.unregister_custom_op_symbolic("aten::split", 11)


def test_symbolic_errors_are_python_exceptions(tmp_path):
    def broken(g, self):
        raise ValueError("this symbolic is broken")

    torch2onnx.register_custom_op_symbolic("aten::relu", broken, 9)
    try:
        with pytest.raises(Exception, match="this symbolic is broken"):
            torch2onnx.export(nn.ReLU(), (torch.randn(3),), str(tmp_path / "m.onnx"))
        assert not (tmp_path / "m.onnx").exists()
    finally:
        torch2onnx.unregister_custom_op_symbolic("aten::relu", 9)


def test_registration_validates_names():
    with pytest.raises(torch2onnx.OnnxExporterError, match="domain::name"):
        torch2onnx.register_custom_op_symbolic("foo_forward", lambda g, x: x, 9)
    with pytest.raises(ValueError, match="onnx domain"):
        torch2onnx.register_custom_op_symbolic("onnx::Relu", lambda g, x: x, 9)


_EXIT_SCRIPT = r"""
import io, sys, time
import torch
import torch2onnx
from torch2onnx.symbolic_helper import parse_args

@parse_args("v")
def relu(g, x):
    return g.op("Relu", x)

torch2onnx.register_custom_op_symbolic("aten::relu", relu, 9)
torch2onnx.register_custom_op_symbolic("aten::tanh", lambda g, x: g.op("Tanh", x), 11)
if sys.argv[1] == "export":
    f = io.BytesIO()
    torch2onnx.export(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()), (torch.randn(1, 3),), f)
    assert f.getvalue()
if sys.argv[1] == "unregister":
    torch2onnx.unregister_custom_op_symbolic("aten::relu", 9)
print("last line", flush=True)
"""


@pytest.mark.parametrize("what", ["register", "export", "unregister"])
def test_process_exits_after_registering_symbolics(tmp_path, what):
    # Issue 15: the registry (a C++ static) outlived the interpreter holding
    # Python functions, and the process hung in finalization after its last line.
    script = tmp_path / "script.py"
    script.write_text(_EXIT_SCRIPT)
    t0 = time.time()
    proc = subprocess.run([sys.executable, str(script), what], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    assert proc.returncode == 0, proc.stderr
    assert "last line" in proc.stdout
    assert time.time() - t0 < 30, f"the process took {time.time() - t0:.0f} s to exit"
