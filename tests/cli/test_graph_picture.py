"""`--graph FILE.svg` (Python: graph=...): the exported graph drawn by
Graphviz (src/serialize/graph_picture.cpp), nodes grouped by module scope,
shapes on the edges, weights listed in the nodes that take them."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x)) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.Sequential(Block(4), Block(4))
        self.head = nn.Linear(4, 5)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.head(y.mean((2, 3)))


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    d = tmp_path_factory.mktemp("net")
    torch.manual_seed(0)
    harness.trace(Net().eval(), (torch.randn(2, 3, 8, 8),), str(d / "net.pt"))
    return d


def run(*args, env=None):
    return subprocess.run([harness.CLI, *args], capture_output=True, text=True, env=env)


def texts(svg_path):
    root = ET.parse(svg_path).getroot()
    groups = {}
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "").split()
        if cls and cls[0] in ("node", "edge", "cluster"):
            groups.setdefault(cls[0], []).append((g, " ".join(t.text or "" for t in g.iter(SVG + "text"))))
    return root, groups


def test_svg_groups_nodes_by_module_scope(net, tmp_path):
    out, svg = str(tmp_path / "net.onnx"), str(tmp_path / "net.svg")
    proc = run("export", str(net / "net.pt"), "-o", out, "--input", "2x3x8x8", "--graph", svg)
    assert proc.returncode == 0, proc.stderr
    assert os.path.exists(out)
    root, groups = texts(svg)
    clusters = [t for _, t in groups["cluster"]]
    # blocks (2 blocks, 4 nodes), blocks.0 and blocks.1 (a Conv, a Relu and an Add each) are boxes,
    # named with their class; one-node modules (stem, head) are not, their nodes carry the name
    assert any("blocks (Sequential)" in t for t in clusters), clusters
    assert any("blocks.0 (Block)" in t for t in clusters) and any("blocks.1 (Block)" in t for t in clusters), clusters
    nodes = [t for _, t in groups["node"]]
    assert sum("Conv" in t for t in nodes) == 3, nodes
    assert any("Conv" in t and "stem" in t and "4×3×3×3" in t for t in nodes), nodes  # the weight, in its node
    assert any(t.startswith("input") or "2×3×8×8" in t for t in nodes), nodes  # the graph input and its shape
    edges = [t for _, t in groups["edge"]]
    assert any("2×4×8×8" in t for t in edges), edges  # shapes on the edges
    # nodes inside a scope carry its class, for folding; the script is in the file
    inner = [g for g, t in groups["node"] if "Relu" in t]
    assert inner and all(len(g.get("class").split()) >= 3 for g in inner), [g.get("class") for g in inner]
    assert "g.cluster.folded" in open(svg).read()


def test_other_formats(net, tmp_path):
    out = str(tmp_path / "net.onnx")
    for ext, magic in [("png", b"\x89PNG"), ("dot", b"digraph")]:
        pic = str(tmp_path / f"net.{ext}")
        proc = run("export", str(net / "net.pt"), "-o", out, "--input", "2x3x8x8", "--graph", pic)
        assert proc.returncode == 0, proc.stderr
        with open(pic, "rb") as f:
            assert f.read(len(magic)) == magic
    proc = run("export", str(net / "net.pt"), "-o", out, "--input", "2x3x8x8", "--graph", str(tmp_path / "net.jpeg"))
    assert proc.returncode == 2 and ".svg, .png, .pdf or .dot" in proc.stderr, proc.stderr


def test_without_graphviz_nothing_is_written(net, tmp_path):
    out, svg = str(tmp_path / "net.onnx"), str(tmp_path / "net.svg")
    env = dict(os.environ, PATH=str(tmp_path))  # no dot there
    proc = run("export", str(net / "net.pt"), "-o", out, "--input", "2x3x8x8", "--graph", svg, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "Graphviz" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)


def test_python_graph_keyword(tmp_path):
    torch2onnx = pytest.importorskip("torch2onnx")
    svg = str(tmp_path / "m.svg")
    torch2onnx.export(Net().eval(), (torch.randn(1, 3, 8, 8),), str(tmp_path / "m.onnx"), graph=svg)
    _, groups = texts(svg)
    assert any("blocks.1 (Block)" in t for _, t in groups["cluster"])
