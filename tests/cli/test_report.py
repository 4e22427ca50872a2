"""The export report (`--report FILE.md`, Python report=True;
src/serialize/report.cpp): stages with time and memory, the PyTorch
operators and the ONNX operators they became, opset and IR version, the
operators that cannot be converted, the verification table and the graph
picture."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean((2, 3))).softmax(-1)


class Unsupported(nn.Module):
    def forward(self, x):
        return torch.poisson(x.abs()) + 1


def section(text, title):
    """The lines of section `## title`."""
    assert f"## {title}" in text, text
    body = text.split(f"## {title}", 1)[1]
    return body.split("\n## ", 1)[0]


def test_cli_report(tmp_path):
    torch.manual_seed(0)
    harness.trace(Net().eval(), (torch.randn(2, 3, 8, 8),), str(tmp_path / "net.pt"))
    out, report = str(tmp_path / "net.onnx"), str(tmp_path / "net.md")
    proc = subprocess.run([harness.CLI, "export", str(tmp_path / "net.pt"), "-o", out, "--input", "2x3x8x8",
                           "--opset", "13", "--report", report], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = open(report).read()
    facts = text.split("\n## ", 1)[0]
    assert "| result | exported |" in facts and "| opset | 13 |" in facts and "| IR version | 7 |" in facts, facts
    assert "net.pt" in facts and "net.onnx" in facts
    stages = section(text, "Stages")
    for stage in ("load_archive", "torch side", "convert", "write"):
        assert f"| {stage} |" in stages, stages
    ops = section(text, "PyTorch operators and the ONNX operators they became")
    # the convolution and its batch norm became one Conv; softmax a Softmax
    assert "`aten::_convolution` | 1 | Conv ×1" in ops, ops
    assert "`aten::softmax` | 1 | Softmax ×1" in ops, ops
    assert "| Conv | 1 |" in section(text, "ONNX operators")
    # the picture, drawn next to the report and linked
    assert os.path.exists(str(tmp_path / "net.svg"))
    assert "](net.svg)" in section(text, "Graph")


def test_cli_report_on_unconvertible_operators(tmp_path):
    harness.trace(Unsupported(), (torch.randn(3),), str(tmp_path / "u.pt"))
    out, report = str(tmp_path / "u.onnx"), str(tmp_path / "u.md")
    proc = subprocess.run([harness.CLI, "export", str(tmp_path / "u.pt"), "-o", out, "--input", "3",
                           "--report", report], capture_output=True, text=True)
    assert proc.returncode == 1 and not os.path.exists(out)
    text = open(report).read()
    assert "**failed**" in text
    table = section(text, "Operators that cannot be converted")
    assert "`aten::poisson` | 1 |" in table and "test_report.py" in table, table


def test_python_report_with_verification(tmp_path):
    torch2onnx = pytest.importorskip("torch2onnx")
    torch.manual_seed(0)
    path = str(tmp_path / "m.onnx")
    torch2onnx.export(Net().eval(), (torch.randn(2, 3, 8, 8),), path, report=True, verify=True)
    text = open(str(tmp_path / "m_report.md")).read()
    assert "| result | exported |" in text
    table = section(text, "Verification")
    assert "| 0 | 2×5 | float32 |" in table and "| yes |" in table, table
    assert os.path.exists(str(tmp_path / "m_report.svg"))


def test_python_report_in_artifacts_dir(tmp_path):
    torch2onnx = pytest.importorskip("torch2onnx")
    torch2onnx.export(Net().eval(), (torch.randn(1, 3, 8, 8),), str(tmp_path / "m.onnx"), report=True,
                      artifacts_dir=str(tmp_path / "reports"))
    assert os.path.exists(str(tmp_path / "reports" / "m_report.md"))


def test_python_report_for_a_stream(tmp_path):
    import io

    torch2onnx = pytest.importorskip("torch2onnx")
    buf = io.BytesIO()
    torch2onnx.export(Net().eval(), (torch.randn(1, 3, 8, 8),), buf, report=str(tmp_path / "s.md"))
    text = open(str(tmp_path / "s.md")).read()
    assert buf.getvalue() and "| result | exported |" in text and "| ONNX file |" not in text, text
