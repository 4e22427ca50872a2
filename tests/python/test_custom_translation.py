"""custom_translation_table (issue 41): ONNX Script functions for operators,
as torch.onnx's dynamo exporter takes them, applied on both paths: a custom
op's conversion, a built-in's replaced, attributes bound from the call,
several outputs; each compared with PyTorch in ONNX Runtime. (torch.onnx
2.14 with onnxscript 0.7 fails on these tables itself: its inliner on
scaled_add, its dispatch of the Mul after a replaced relu.)"""
import io

import numpy as np
import onnx
import pytest
import torch

import torch2onnx
from torch2onnx import verification

try:
    import onnxscript
    from onnxscript import FLOAT
    from onnxscript import opset18 as op
except ImportError:  # (the 1.13 build's Python has no ONNX Script)
    onnxscript = None
AVAILABLE = onnxscript is not None and hasattr(getattr(torch, "library", None), "custom_op")
pytestmark = pytest.mark.skipif(not AVAILABLE, reason="ONNX Script and torch.library.custom_op (torch 2.4+)")

if AVAILABLE:
    @torch.library.custom_op("t2o_test::scaled_add", mutates_args=())
    def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
        return x + alpha * y


    @scaled_add.register_fake
    def _(x, y, alpha=1.0):
        return torch.empty_like(x)


    @torch.library.custom_op("t2o_test::min_max", mutates_args=())
    def min_max(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.amin(-1), x.amax(-1)


    @min_max.register_fake
    def _(x):
        return x.new_empty(x.shape[:-1]), x.new_empty(x.shape[:-1])


    @onnxscript.script()
    def onnx_scaled_add(x: FLOAT, y: FLOAT, alpha: float = 1.0):
        return op.Add(x, op.Mul(y, op.CastLike(alpha, y)))


    @onnxscript.script()
    def onnx_min_max(x: FLOAT):
        return op.ReduceMin(x, op.Constant(value_ints=[-1]), keepdims=0), op.ReduceMax(x, op.Constant(value_ints=[-1]),
                                                                                        keepdims=0)


    @onnxscript.script()
    def relu_as_leaky(x: FLOAT):
        return op.LeakyRelu(x, alpha=0.0)


    class UsesCustomOps(torch.nn.Module):
        def forward(self, x, y):
            s = torch.ops.t2o_test.scaled_add(x, y, alpha=0.5)
            lo, hi = torch.ops.t2o_test.min_max(s)
            return torch.relu(s), lo, hi


    TABLE = {torch.ops.t2o_test.scaled_add.default: onnx_scaled_add,
             torch.ops.t2o_test.min_max.default: onnx_min_max,
             torch.ops.aten.relu.default: relu_as_leaky}


def export(model, args, dynamo, table):
    if dynamo:
        return torch2onnx.export(model, args, dynamo=True, custom_translation_table=table).model_proto
    f = io.BytesIO()
    torch2onnx.export(model, args, f, custom_translation_table=table, opset_version=18)
    return onnx.load_from_string(f.getvalue())


def run(proto, *inputs):
    onnx.checker.check_model(proto, full_check=True)
    session = verification.ort_session(proto.SerializeToString())
    return session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), inputs)})


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "traced"])
def test_table_converts_custom_ops_and_replaces_builtins(dynamo):
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    model = UsesCustomOps()
    proto = export(model, (x, y), dynamo, TABLE)
    ops = [n.op_type for n in proto.graph.node]
    assert "LeakyRelu" in ops and "Relu" not in ops  # (the table wins over the built-in)
    assert {"ReduceMin", "ReduceMax"} <= set(ops)
    with torch.no_grad():
        expected = model(x, y)
    for a, e in zip(run(proto, x, y), expected):
        np.testing.assert_allclose(a, e.numpy(), rtol=1e-5, atol=1e-6)


def test_a_registered_symbolic_at_the_same_opset_is_a_conflict():
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch2onnx.register_custom_op_symbolic("t2o_test::scaled_add", lambda g, x, y, alpha: g.op("Add", x, y), 20)
    try:
        with pytest.raises(torch2onnx.errors.ExportUsageError, match="already gave a symbolic at opset 20"):
            export(UsesCustomOps(), (x, y), True, TABLE)
    finally:
        torch2onnx.unregister_custom_op_symbolic("t2o_test::scaled_add", 20)


def test_the_table_is_for_one_export():
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    export(UsesCustomOps(), (x, y), True, TABLE)
    with pytest.raises(torch2onnx.OnnxExporterError, match="t2o_test::scaled_add"):
        export(UsesCustomOps(), (x, y), True, None)  # (no conversion for the custom op without it)


def test_bad_tables_are_refused():
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    with pytest.raises(torch2onnx.errors.ExportUsageError, match="ONNX Script function"):
        export(UsesCustomOps(), (x, y), True, {torch.ops.t2o_test.scaled_add.default: lambda x: x})
    with pytest.raises(torch2onnx.errors.ExportUsageError, match="keys are operators"):
        export(UsesCustomOps(), (x, y), True, {"t2o_test::scaled_add": onnx_scaled_add})
