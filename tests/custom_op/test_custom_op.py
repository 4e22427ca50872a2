"""A custom C++ TorchScript operator (examples/custom_op): a scripted model
calls custom_ops::foo_forward; export_foo exports it with C++ symbolics
registered through torch2onnx::register_symbolic, once as a
custom_domain::Foo node and once as standard ONNX ops run by ONNX Runtime."""
import os
import subprocess
import sys

import onnx
import onnx.helper as oh
import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

LIB = os.environ.get("T2O_CUSTOM_OPS_LIB", "")
EXPORT_FOO = os.environ.get("T2O_EXPORT_FOO", "")


class FooModel(torch.nn.Module):
    def __init__(self, attr1: float, attr2: int):
        super().__init__()
        self.attr1 = attr1
        self.attr2 = attr2

    def forward(self, input1, input2):
        return torch.ops.custom_ops.foo_forward(input1, input2, self.attr1, self.attr2).relu()


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    assert os.path.exists(LIB), f"libcustom_ops.so not found (T2O_CUSTOM_OPS_LIB={LIB!r})"
    torch.ops.load_library(LIB)
    d = tmp_path_factory.mktemp("foo")
    torch.manual_seed(0)
    model = torch.jit.script(FooModel(0.5, 3))
    args = (torch.randn(2, 3), torch.randn(2, 3))
    model.save(str(d / "foo.pt"))
    torch.save(args, str(d / "args.pt"))
    return d, model, args


def export(d, mapping):
    out = str(d / f"foo_{mapping}.onnx")
    proc = subprocess.run([EXPORT_FOO, str(d / "foo.pt"), str(d / "args.pt"), out, mapping],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def test_custom_domain_node(scripted, tmp_path):
    d, model, args = scripted
    path = export(d, "custom-domain")
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    (foo,) = [n for n in proto.graph.node if n.domain == "custom_domain"]
    assert foo.op_type == "Foo"
    assert {a.name: oh.get_attribute_value(a) for a in foo.attribute} == {"attr1": pytest.approx(0.5), "attr2": 3}
    assert {o.domain: o.version for o in proto.opset_import}["custom_domain"] == 2
    # A runtime that implements custom_domain::Foo: here, an ONNX function.
    proto.functions.append(harness.custom_domain_foo_function())
    patched = str(tmp_path / "with_function.onnx")
    onnx.save(proto, patched)
    actual, _ = harness.run_ort(patched, [a.numpy() for a in args], str(tmp_path))
    harness.compare([model(*args)], actual)


def test_standard_onnx_ops_run_in_onnx_runtime(scripted, tmp_path):
    d, model, args = scripted
    path = export(d, "onnx")
    harness.full_check(path)
    proto = onnx.load(path)
    assert {n.op_type for n in proto.graph.node} >= {"Mul", "Add", "Relu"}
    actual, _ = harness.run_ort(path, [a.numpy() for a in args], str(tmp_path))
    harness.compare([model(*args)], actual)


def test_without_symbolic_the_cli_names_the_operator(scripted, tmp_path):
    d = scripted[0]
    out = str(tmp_path / "o.onnx")
    proc = subprocess.run([harness.CLI, "export", str(d / "foo.pt"), "--args", str(d / "args.pt"), "-o", out],
                          capture_output=True, text=True, env={**os.environ, "LD_PRELOAD": LIB})
    assert proc.returncode == 1 and "custom_ops::foo_forward" in proc.stderr
    assert not os.path.exists(out)
