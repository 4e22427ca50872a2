"""Models written with LibTorch's C++ frontend (torch::nn), exported by
examples/cpp_frontend/export_cpp_models.cpp through
torch2onnx::export_cpp_module (src/frontend/cpp_module.cpp): each ONNX model
passes the checker and matches LibTorch's outputs in ONNX Runtime; its
weights keep the names the module tree gives them."""
import os
import subprocess
import sys

import onnx
import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

PROGRAM = os.environ.get("T2O_CPP_MODELS")
pytestmark = pytest.mark.skipif(not PROGRAM, reason="T2O_CPP_MODELS (the export_cpp_models program) is not set")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpp_models")
    proc = subprocess.run([PROGRAM, str(d)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # each model was also verified in C++ (torch2onnx::verify): a table whose every row matches
    assert proc.stdout.count("example:\n| output | shape | dtype |") == 3, proc.stdout
    assert "| yes |" in proc.stdout and "NO:" not in proc.stdout, proc.stdout
    return d


def flat(value):
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in flat(v)]


# (weights the export transforms (BatchNorm folded into Conv, transposed for
# Gemm/MatMul, LSTM gates reordered) get derived names; torch::nn's
# TransformerEncoder clones one layer, so the layers' equal weights are one
# initializer each, named after layer 0)
@pytest.mark.parametrize("name,names", [
    ("cnn", {"fc.bias"}),
    ("lstm_lm", {"embedding.weight", "decoder.bias"}),
    ("encoder", {"head.bias", "encoder.layers.0.norm1.weight", "encoder.layers.0.linear1.bias",
                 "encoder.layers.0.self_attn.in_proj_bias"}),
    ("function", set()),  # a callable without a module (export_cpp_function)
])
def test_matches_libtorch(exported, name, names):
    path = str(exported / f"{name}.onnx")
    harness.full_check(path)
    inputs, expected = torch.load(str(exported / f"{name}.pt"))
    actual, _ = harness.run_ort(path, [t.numpy() for t in inputs], str(exported))
    harness.compare(flat(expected), actual)
    initializers = {i.name for i in onnx.load(path).graph.initializer}
    assert names <= initializers, sorted(initializers)


class Block(torch.nn.Module):
    def __init__(self, tanh):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.act = torch.nn.Tanh() if tanh else torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Blocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(i == 7) for i in range(10)])

    def forward(self, x):
        return self.blocks(x)


def test_find_mismatch_names_a_wrong_symbolic(tmp_path):
    # examples/find_mismatch/find_wrong_symbolic.cpp registers a wrong symbolic
    # for aten::tanh (a Sigmoid); C++ torch2onnx::find_mismatch bisects the
    # ten blocks down to block 7's tanh and names its module and source line.
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    torch.jit.trace(Blocks().eval(), (x,)).save(str(tmp_path / "blocks.pt"))
    torch.save((x,), str(tmp_path / "args.pt"))
    program = os.path.join(os.path.dirname(PROGRAM), "find_wrong_symbolic")
    argv = [program, str(tmp_path / "blocks.pt"), str(tmp_path / "args.pt")]
    pt2 = hasattr(torch, "export") and hasattr(torch.export, "save")
    if pt2:  # the same model as a torch.export program: find_mismatch_program must name it too
        torch.manual_seed(0)
        torch.export.save(torch.export.export(Blocks().eval(), (x,)), str(tmp_path / "blocks.pt2"))
        argv.append(str(tmp_path / "blocks.pt2"))
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "clean before: yes" in out and "found the wrong operator" in out, out
    assert "Mismatch node kinds: {'aten::tanh': 1}" in out, out
    assert "X id: (all)" in out and "aten::tanh in blocks.7.act (" in out, out
    if pt2:
        program_part = out.split("blocks.pt2:\n", 1)[1]
        assert "Mismatch node kinds: {'aten::tanh': 1}" in program_part, out
        assert "aten::tanh in blocks.7.act (" in program_part and "test_cpp_frontend.py:" in program_part, out
