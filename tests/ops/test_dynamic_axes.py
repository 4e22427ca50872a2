"""dynamic_axes: models exported at one shape run in ONNX Runtime at other
sizes of their dynamic axes and match PyTorch there."""
import json
import os
import sys

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models"))
import optest  # noqa: E402
import zoo  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def axes(d, inputs=None, outputs=None):
    flags = ["--dynamic-axes", json.dumps(d, separators=(",", ":"))]
    if inputs:
        flags += ["--input-names", ",".join(inputs)]
    if outputs:
        flags += ["--output-names", ",".join(outputs)]
    return tuple(flags)


class SumModule(nn.Module):
    """The documented example."""

    def forward(self, x):
        return torch.sum(x, dim=1)


class ViewFlatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = self.conv(x)
        return self.fc(y.view(y.size(0), -1))


class ShapeArithmetic(nn.Module):
    """Sizes read from tensors, used in arange/expand_as/slicing/reshape."""

    def forward(self, x):
        n, t = x.shape[0], x.shape[1]
        pos = torch.arange(t).unsqueeze(0).expand(n, t)
        half = x[:, : t // 2]
        return x.reshape(n * t, -1).sum(1), pos, half.flatten(1), x.numel() + x.new_zeros(1)


def lstm_documented():
    torch.manual_seed(0)
    return nn.LSTM(10, 20, num_layers=4, bidirectional=True).eval()


class LSTMWithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = lstm_documented()

    def forward(self, x, h0, c0):
        return self.lstm(x, (h0, c0))


def encoder(batch_first):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=batch_first)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()


def classifier(name, **kw):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(**kw)
    return zoo._randomize_bn(m, (torch.randn(2, 3, 64, 64),))


word_lm, (tokens, (h0, c0)) = zoo.word_lm_lstm()
word_tf, (tf_tokens, tf_mask) = zoo.word_lm_transformer()
lstm_x, lstm_h, lstm_c = torch.randn(5, 3, 10), torch.randn(8, 3, 20), torch.randn(8, 3, 20)
lstm_in = LSTMWithState()


def lstm_args(seq):
    torch.manual_seed(seq)
    return torch.randn(seq, 3, 10), lstm_h, lstm_c


def lm_args(seq, batch):
    g = torch.Generator().manual_seed(seq * 100 + batch)
    return (torch.randint(0, 1000, (seq, batch), generator=g),
            (torch.randn(2, batch, 64, generator=g), torch.randn(2, batch, 64, generator=g)))


def tf_args(seq, batch):
    g = torch.Generator().manual_seed(seq * 100 + batch)
    return torch.randint(0, 1000, (seq, batch), generator=g), zoo.causal_mask(seq)


BATCH = axes({"x": {"0": "batch"}}, inputs=["x"])
ALL3 = axes({"x": {"0": "a", "1": "b", "2": "c"}}, inputs=["x"])


class SqueezeThenAdd(nn.Module):
    """A squeeze whose result feeds another op (rank-agnostic: elementwise)."""

    def forward(self, x):
        return x.squeeze(1) * 2 + 1


# squeeze(dim) on a dynamic dim: PyTorch removes it only when it is 1 at run
# time, whatever it was in the example (issue 43: it was exported as Identity
# when the example's size was not 1, and refused when it was 1).
SQUEEZE_CASES = [
    Case("squeeze_dynamic_dim_not_1", lambda x: torch.squeeze(x, dim=2), (torch.randn(2, 1, 4),),
         opsets=(11, 13, 17), extra=ALL3, pt2=False,
         more_args=[(torch.randn(2, 2, 1),), (torch.randn(3, 1, 1),), (torch.randn(1, 5, 7),)]),
    Case("squeeze_dynamic_dim_1", lambda x: x.squeeze(1), (torch.randn(2, 1, 4),),
         opsets=(11, 13, 17), extra=ALL3, pt2=False,
         more_args=[(torch.randn(2, 3, 4),), (torch.randn(1, 1, 1),)]),
    Case("squeeze_dynamic_all", lambda x: x.squeeze(), (torch.randn(1, 3, 1),),
         opsets=(11, 13, 17), extra=ALL3, pt2=False,
         more_args=[(torch.randn(2, 1, 5),), (torch.randn(1, 1, 1),), (torch.randn(4, 2, 3),)]),
    Case("squeeze_dynamic_then_add", SqueezeThenAdd(), (torch.randn(2, 3, 4),),
         opsets=(11, 17), extra=ALL3, pt2=False,
         more_args=[(torch.randn(2, 1, 4),)]),
    # an empty tensor: the new shape keeps its zeros (allowzero, opset 14+)
    Case("squeeze_dynamic_empty", lambda x: x.squeeze(0), (torch.randn(2, 0, 3),),
         opsets=(17,), extra=ALL3, pt2=False,
         more_args=[(torch.randn(1, 0, 0),), (torch.randn(1, 2, 3),)]),
    # a static dim is decided at export time: no run-time test
    Case("squeeze_static_dim", lambda x: x.squeeze(1) + 0, (torch.randn(2, 1, 4),),
         opsets=(13, 17), extra=axes({"x": {"0": "a"}}, inputs=["x"]),
         more_args=[(torch.randn(5, 1, 4),)]),
] + ([  # (squeeze of several dims: PyTorch 2)
    Case("squeeze_dynamic_dims_tuple", lambda x: x.squeeze((0, 2)), (torch.randn(2, 1, 1),),
         opsets=(13, 17), extra=ALL3, pt2=False, min_opset=13,
         more_args=[(torch.randn(1, 3, 1),), (torch.randn(1, 1, 4),)]),
] if optest.TORCH_VERSION >= (2, 0) else [])

def write_slice(x, v):
    y = x * 1
    y[1:3] = v
    return y


def slice_then_fill(x):
    # (x[1:3]'s length: 2 from length 3 on, 1 at length 2)
    s = x[1:3]
    return s + torch.ones_like(s), s.new_zeros(s.shape[0], 2)


# A slice's length is clamped at run time: a slice with constant bounds of a
# dynamic axis is shorter below its end, though it looks static at longer
# lengths (what the doubled run of mark_dynamic_dims saw); the shrunk run
# shows it (issue 43).
CLAMPED_SLICE_CASES = [
    Case("slice_scatter_clamped", write_slice, (torch.randn(4, 3), torch.randn(1, 3)), opsets=(11, 17),
         extra=axes({"x": {"0": "n"}}, inputs=["x", "v"]),
         more_args=[(torch.randn(2, 3), torch.randn(1, 3)), (torch.randn(1, 3), torch.randn(1, 3)),
                    (torch.randn(7, 3), torch.randn(1, 3))]),
    Case("slice_clamped_sizes", slice_then_fill, (torch.randn(4, 3),), opsets=(11, 17),
         extra=axes({"x": {"0": "n"}}, inputs=["x"]),
         more_args=[(torch.randn(2, 3),), (torch.randn(1, 3),), (torch.randn(6, 3),)]),
]

CASES = SQUEEZE_CASES + CLAMPED_SLICE_CASES + [
    Case("sum_module", SumModule(), (torch.ones(2, 2),), opsets=(9, 13, 17),
         extra=axes({"x": {"0": "my_custom_axis_name"}, "sum": [0]}, inputs=["x"], outputs=["sum"]),
         more_args=[(torch.randn(5, 2),), (torch.randn(1, 2),)]),
    Case("view_flatten", ViewFlatten(), (torch.randn(2, 3, 8, 8),), opsets=(9, 13, 17), extra=BATCH,
         more_args=[(torch.randn(1, 3, 8, 8),), (torch.randn(7, 3, 8, 8),)]),
    Case("shape_arithmetic", ShapeArithmetic(), (torch.randn(3, 6, 2),), opsets=(11, 13, 17),
         extra=axes({"x": {"0": "n", "1": "t"}}, inputs=["x"]),
         more_args=[(torch.randn(1, 4, 2),), (torch.randn(5, 10, 2),)]),
    Case("resnet50_batch", classifier("resnet50"), (torch.randn(2, 3, 64, 64),), opsets=(13, 17), extra=BATCH,
         more_args=[(torch.randn(1, 3, 64, 64),), (torch.randn(3, 3, 64, 64),)]),
    Case("mobilenet_v3_batch", classifier("mobilenet_v3_large"), (torch.randn(2, 3, 64, 64),), opsets=(13, 17),
         extra=BATCH, more_args=[(torch.randn(1, 3, 64, 64),), (torch.randn(4, 3, 64, 64),)]),
    Case("vit_batch", classifier("vit_b_32", image_size=64), (torch.randn(2, 3, 64, 64),), opsets=(13, 17),
         extra=BATCH, more_args=[(torch.randn(1, 3, 64, 64),), (torch.randn(3, 3, 64, 64),)]),
    Case("lstm_documented_sequence", lstm_in, (lstm_x, lstm_h, lstm_c), opsets=(9, 13, 17),
         extra=axes({"input": {"0": "sequence"}, "output": {"0": "sequence"}}, inputs=["input", "h0", "c0"],
                    outputs=["output", "hn", "cn"]),
         more_args=[lstm_args(2), lstm_args(11)]),
    Case("word_lm_seq_batch", word_lm, (tokens, (h0, c0)), opsets=(9, 13, 17),
         extra=axes({"input": {"0": "seq", "1": "batch"}, "hidden.0": {"1": "batch"}, "hidden.1": {"1": "batch"}}),
         more_args=[lm_args(3, 2), lm_args(20, 7)]),
    Case("word_lm_transformer_seq_batch", word_tf, (tf_tokens, tf_mask), opsets=(13, 17),
         extra=axes({"src": {"0": "seq", "1": "batch"}, "src_mask": {"0": "seq", "1": "seq"}}),
         more_args=[tf_args(5, 2), tf_args(17, 6)]),
    Case("encoder_fast_path_batch_seq", encoder(True), (torch.randn(2, 5, 16),), opsets=(13, 17),
         extra=axes({"src": {"0": "batch", "1": "seq"}}), more_args=[(torch.randn(1, 3, 16),), (torch.randn(4, 9, 16),)]),
    Case("encoder_seq_batch", encoder(False), (torch.randn(5, 2, 16),), opsets=(13, 17),
         extra=axes({"src": {"0": "seq", "1": "batch"}}), more_args=[(torch.randn(3, 1, 16),), (torch.randn(9, 4, 16),)]),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


def test_documented_names(tmp_path):
    """SumModule: input dim 'my_custom_axis_name', output dim 'sum_dynamic_axes_1'."""
    import harness

    pt, out = str(tmp_path / "sum.pt"), str(tmp_path / "sum.onnx")
    harness.trace(SumModule(), (torch.ones(2, 2),), pt)
    harness.export(pt, out, inputs=["2x2"], extra=axes({"x": {"0": "my_custom_axis_name"}, "sum": [0]},
                                                       inputs=["x"], outputs=["sum"]))
    m = harness.full_check(out)
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    assert dims(m.graph.input[0]) == ["my_custom_axis_name", 2]
    assert dims(m.graph.output[0]) == ["sum_dynamic_axes_1"]


def test_squeeze_rank_decided_at_run_time(tmp_path):
    """A squeeze of a dynamic dim: the output's rank is the run's (no Squeeze
    node with the example's answer, no dim declared); of a static dim: a
    plain Squeeze."""
    import harness

    def export(fn, x, dyn):
        pt, out = str(tmp_path / "m.pt"), str(tmp_path / "m.onnx")
        harness.trace(optest.Lambda(fn), (x,), pt)
        harness.export(pt, out, inputs=["x".join(str(d) for d in x.shape)],
                       extra=axes({"x": {str(d): f"d{d}" for d in dyn}}, inputs=["x"]))
        return harness.full_check(out)

    m = export(lambda x: torch.squeeze(x, dim=2), torch.randn(2, 1, 4), [0, 1, 2])
    ops = [n.op_type for n in m.graph.node]
    assert "Squeeze" not in ops and "Reshape" in ops, ops
    # (the checker requires a rank: the example's, its dims unnamed)
    assert [d.WhichOneof("value") for d in m.graph.output[0].type.tensor_type.shape.dim] == [None] * 3
    m = export(lambda x: torch.squeeze(x, dim=1), torch.randn(2, 1, 4), [0, 2])
    ops = [n.op_type for n in m.graph.node]
    assert "Squeeze" in ops and "Reshape" not in ops and "Compress" not in ops, ops
    assert len(m.graph.output[0].type.tensor_type.shape.dim) == 2


def test_intermediate_values_carry_symbolic_dims(tmp_path):
    """value_info: intermediate values have inferred shapes, with the named
    dynamic axis where ONNX shape inference carries it: the Conv's output
    keeps 'batch' in front, and so does the Reshape to (size(0), -1) (whose
    -1 ONNX cannot know symbolically)."""
    import harness

    pt, out = str(tmp_path / "v.pt"), str(tmp_path / "v.onnx")
    harness.trace(ViewFlatten(), (torch.randn(2, 3, 8, 8),), pt)
    harness.export(pt, out, inputs=["2x3x8x8"], extra=BATCH)
    m = harness.full_check(out)
    shapes = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in m.graph.value_info}
    conv = next(n for n in m.graph.node if n.op_type == "Conv").output[0]
    assert shapes[conv] == ["batch", 4, 8, 8]
    flat = next(n for n in m.graph.node if n.op_type in ("Flatten", "Reshape")).output[0]
    assert shapes[flat][0] == "batch" and len(shapes[flat]) == 2
    assert [d.dim_param or d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim] == ["batch", 5]
