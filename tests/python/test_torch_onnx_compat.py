"""torch.onnx's own switches inside a torch2onnx export (issue 37,
python/torch2onnx/_torch_onnx_compat.py): torch.onnx.is_in_onnx_export() is
True (and torch.onnx's GLOBALS.export_onnx_opset_version the export's opset)
during every export entry and restored after; symbolic functions registered
with torch.onnx.register_custom_op_symbolic, written with torch.onnx's own
parse_args and symbolic_helper, convert the operators torch2onnx does not
convert itself (its own conversions and registrations win), through a bridge
from torch2onnx's values to torch._C.Values."""
import contextlib
import warnings

import onnx
import pytest
import torch
import torch.nn as nn
import torch.onnx
from torch.onnx import symbolic_helper as onnx_helper

import torch2onnx
from conftest import assert_matches, check_onnx, export_and_run, run_ort

try:
    from torch.onnx import JitScalarType  # torch 2.x
except ImportError:  # torch 1.13
    from torch.onnx._type_utils import JitScalarType

try:
    from torch.onnx._internal.torchscript_exporter._globals import GLOBALS  # torch 2.9+
except ImportError:
    from torch.onnx._globals import GLOBALS

HAS_EXPORT = hasattr(torch, "export") and hasattr(torch.export, "save")


def dtype_of(value):
    """A torch._C.Value's dtype, as torch.onnx symbolics read it."""
    if hasattr(JitScalarType, "from_value"):
        return JitScalarType.from_value(value, JitScalarType.FLOAT).dtype()
    return JitScalarType.from_name(value.type().scalarType()).dtype()


@contextlib.contextmanager
def torch_onnx_symbolic(name, fn, opset):
    torch.onnx.register_custom_op_symbolic(name, fn, opset)
    try:
        yield
    finally:
        torch.onnx.unregister_custom_op_symbolic(name, opset)


def ops(proto):
    return [(n.domain, n.op_type) for n in proto.graph.node]


# ------------------------------------------------------------------ the flag

class Branchy(nn.Module):
    """Computes x * 2 while torch.onnx exports, x + 1 otherwise (as
    transformers' models branch on torch.onnx.is_in_onnx_export())."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        exporting = torch.onnx.is_in_onnx_export()
        self.seen.append((exporting, GLOBALS.export_onnx_opset_version))
        if exporting:
            return x * 2
        return x + 1


def test_the_export_branch_is_exported(tmp_path):
    model, x = Branchy(), torch.randn(2, 3)
    opset_before = GLOBALS.export_onnx_opset_version
    assert not torch.onnx.is_in_onnx_export()
    proto, (out,) = export_and_run(model, (x,), tmp_path, opset_version=13)
    assert model.seen and all(seen == (True, 13) for seen in model.seen)
    assert_matches(x * 2, [out])
    assert [t for _, t in ops(proto)] == ["Mul"]
    assert not torch.onnx.is_in_onnx_export() and not torch2onnx.is_in_onnx_export()
    assert GLOBALS.export_onnx_opset_version == opset_before
    assert_matches(x + 1, [model(x).numpy()])  # eager again


def test_the_flag_in_every_entry(tmp_path):
    model, x = Branchy(), torch.randn(2, 3)
    text = torch2onnx.export_to_pretty_string(model, (x,), opset_version=11)
    assert "Mul" in text and "Add" not in text
    assert model.seen[-1] == (True, 11)
    graph, names = torch2onnx.utils.unconvertible_ops(model, (x,), opset_version=12)
    assert names == [] and model.seen[-1] == (True, 12)
    torch2onnx.utils._export(model, (x,), str(tmp_path / "m.onnx"), opset_version=14)
    assert (True, 14) in model.seen
    assert not torch.onnx.is_in_onnx_export()


@pytest.mark.skipif(not HAS_EXPORT, reason="no torch.export")
def test_the_flag_with_dynamo(tmp_path):
    model, x = Branchy(), torch.randn(2, 3)
    program = torch2onnx.export(model, (x,), dynamo=True, opset_version=18)
    # (non-strict torch.export runs forward(); it undoes the module's own mutations)
    assert_matches(x * 2, [a.numpy() for a in program(x)])
    assert [t for _, t in ops(program.model_proto)] == ["Mul"]
    assert not torch.onnx.is_in_onnx_export()


class Failing(nn.Module):
    def forward(self, x):
        assert torch.onnx.is_in_onnx_export()
        raise RuntimeError("the model fails")


def test_the_flag_is_restored_after_a_failed_export(tmp_path):
    opset_before = GLOBALS.export_onnx_opset_version
    with pytest.raises(RuntimeError, match="the model fails"):
        torch2onnx.export(Failing(), (torch.randn(2),), str(tmp_path / "m.onnx"), opset_version=15)
    assert not torch.onnx.is_in_onnx_export() and not torch2onnx.is_in_onnx_export()
    assert GLOBALS.export_onnx_opset_version == opset_before
    # A failure in the C++ core (an operator without a conversion) too.
    with pytest.raises(torch2onnx.UnsupportedOperatorError):
        torch2onnx.export(ScaleAdd(), (torch.randn(2, 3), torch.randn(2, 3)), str(tmp_path / "m.onnx"))
    assert not torch.onnx.is_in_onnx_export()
    assert GLOBALS.export_onnx_opset_version == opset_before


# ------------------------------------------------- torch.onnx's custom symbolics

# A custom operator (as a TORCH_LIBRARY one would be): x * alpha + y * n (+ bias).
_lib = torch.library.Library("t2o_compat", "DEF")
_lib.define("scale_add(Tensor x, Tensor y, float alpha, int n, Tensor? bias) -> Tensor")


def _scale_add(x, y, alpha, n, bias):
    out = x * alpha + y * n
    return out if bias is None else out + bias


_lib.impl("scale_add", _scale_add, "CPU")
_lib.define("contrib_gelu(Tensor x) -> Tensor")
_lib.impl("contrib_gelu", lambda x: torch.nn.functional.gelu(x), "CPU")
_lib.impl("contrib_gelu", lambda x: torch.empty_like(x), "Meta")
_lib.define("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, "
            "bool cudnn_enable) -> Tensor")
_lib.impl("layer_norm", lambda x, shape, w, b, eps, _: torch.nn.functional.layer_norm(x, shape, w, b, eps), "CPU")
_lib.define("halves(Tensor x) -> (Tensor, Tensor)")
_lib.impl("halves", lambda x: tuple(t.clone() for t in x.chunk(2, 1)), "CPU")


class ScaleAdd(nn.Module):
    def __init__(self, bias=None):
        super().__init__()
        self.bias = bias

    def forward(self, x, y):
        return torch.ops.t2o_compat.scale_add(x, y, 0.5, 3, self.bias)


calls = []


@onnx_helper.parse_args("v", "v", "f", "i", "v")
def scale_add_symbolic(g, x, y, alpha, n, bias):
    """torch.onnx's style: parse_args, symbolic_helper, JitScalarType."""
    calls.append((torch.onnx.is_in_onnx_export(), g.opset))
    assert isinstance(x, torch._C.Value) and onnx_helper._is_value(x)
    assert onnx_helper._get_tensor_rank(x) == 2
    assert onnx_helper._get_tensor_sizes(x) == [2, 3]
    assert (alpha, n) == (0.5, 3)
    dtype = dtype_of(x)
    assert dtype == torch.float32
    out = g.op("Add", g.op("Mul", x, g.op("Constant", value_t=torch.tensor(alpha, dtype=dtype))),
               g.op("Mul", y, g.op("Constant", value_t=torch.tensor(float(n), dtype=dtype))))
    if not onnx_helper._is_none(bias):
        out = g.op("Add", out, bias)
    return out


@pytest.fixture
def scale_add_registered():
    del calls[:]
    with torch_onnx_symbolic("t2o_compat::scale_add", scale_add_symbolic, 9):
        yield


@pytest.mark.parametrize("bias", [None, torch.tensor([1.0, -2.0, 0.25])])
def test_custom_op_with_a_torch_onnx_symbolic(tmp_path, scale_add_registered, bias):
    model, x, y = ScaleAdd(bias), torch.randn(2, 3), torch.randn(2, 3)
    proto, out = export_and_run(model, (x, y), tmp_path, opset_version=13)
    assert calls and all(c == (True, 13) for c in calls)
    kinds = {t for _, t in ops(proto)}
    assert {"Mul", "Add"} <= kinds and all(d == "" for d, _ in ops(proto))
    assert [t for _, t in ops(proto)].count("Add") == (1 if bias is None else 2)
    assert_matches(model(x, y), out)


def test_registration_is_only_in_effect_during_the_export(tmp_path, scale_add_registered):
    torch2onnx.export(ScaleAdd(), (torch.randn(2, 3), torch.randn(2, 3)), str(tmp_path / "m.onnx"))
    # Not left in torch2onnx's registry; torch.onnx's own still unregisters
    # without complaint (the fixture does, below).
    assert list(torch2onnx._C.registered_opsets("t2o_compat::scale_add")) == []


def test_after_torch_onnx_unregisters_it_no_longer_applies(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch_onnx_symbolic("t2o_compat::scale_add", scale_add_symbolic, 9):
            torch2onnx.export(ScaleAdd(), (torch.randn(2, 3), torch.randn(2, 3)), str(tmp_path / "m.onnx"))
    # (torch.onnx warns when it finds nothing to unregister)
    assert not [w for w in caught if "No custom function registered" in str(w.message)]
    with pytest.raises(torch2onnx.UnsupportedOperatorError, match="t2o_compat::scale_add"):
        torch2onnx.export(ScaleAdd(), (torch.randn(2, 3), torch.randn(2, 3)), str(tmp_path / "m.onnx"))


def test_the_symbolic_in_find_mismatch_parts(scale_add_registered, capsys):
    from torch2onnx import verification

    x, y = torch.randn(2, 3), torch.randn(2, 3)
    root = verification.find_mismatch(ScaleAdd(), (x, y), opset_version=13)
    assert not root.has_mismatch()
    assert calls and all(c == (True, 13) for c in calls)


# An operator exported as ONNX Runtime's contrib op (com.microsoft::Gelu).
@onnx_helper.parse_args("v")
def gelu_contrib(g, self):
    return g.op("com.microsoft::Gelu", self)


class ContribGelu(nn.Module):
    def forward(self, x):
        return torch.ops.t2o_compat.contrib_gelu(x)


def test_a_contrib_op(tmp_path):
    x = torch.randn(4, 5)
    path = str(tmp_path / "m.onnx")
    with torch_onnx_symbolic("t2o_compat::contrib_gelu", gelu_contrib, 1):
        torch2onnx.export(ContribGelu(), (x,), path, opset_version=13)
    proto = onnx.load(path)
    assert ops(proto) == [("com.microsoft", "Gelu")]
    assert {o.domain: o.version for o in proto.opset_import}.get("com.microsoft") == 1
    assert_matches(nn.GELU()(x), run_ort(path, [x]))


def _export_bytes(model, args, opset):
    import io

    f = io.BytesIO()
    torch2onnx.export(model, args, f, opset_version=opset)
    return f.getvalue()


@pytest.mark.skipif(not HAS_EXPORT, reason="no torch.export")
def test_a_contrib_op_with_dynamo():
    x = torch.randn(4, 5)
    with torch_onnx_symbolic("t2o_compat::contrib_gelu", gelu_contrib, 1):
        program = torch2onnx.export(ContribGelu(), (x,), dynamo=True)
    assert ("com.microsoft", "Gelu") in ops(program.model_proto)
    assert_matches(nn.GELU()(x), [a.numpy() for a in program(x)])


@onnx_helper.parse_args("v", "s")
def aten_gelu_contrib(g, self, approximate="none"):
    return g.op("com.microsoft::Gelu", self)


def test_torch2onnx_conversions_win(tmp_path):
    # Libraries register torch.onnx symbolics for operators torch2onnx converts
    # itself (torchvision: torchvision::nms, roi_align ...; optimum:
    # aten::__ior__): torch2onnx's own conversion is used.
    with torch_onnx_symbolic("aten::gelu", aten_gelu_contrib, 1):
        proto = check_onnx(_export_bytes(nn.GELU(), (torch.randn(3),), 13))
    assert all(d == "" for d, _ in ops(proto))

    def ours(g, x):
        return g.op("Tanh", x)

    with torch_onnx_symbolic("t2o_compat::contrib_gelu", gelu_contrib, 1):
        torch2onnx.register_custom_op_symbolic("t2o_compat::contrib_gelu", ours, 9)
        try:
            proto = onnx.load_from_string(_export_bytes(ContribGelu(), (torch.randn(3),), 13))
        finally:
            torch2onnx.unregister_custom_op_symbolic("t2o_compat::contrib_gelu", 9)
    assert ops(proto) == [("", "Tanh")]


def test_registered_above_the_target_opset_does_not_apply():
    with torch_onnx_symbolic("t2o_compat::contrib_gelu", gelu_contrib, 15):
        with pytest.raises(torch2onnx.UnsupportedOperatorError, match="contrib_gelu"):
            _export_bytes(ContribGelu(), (torch.randn(3),), 13)
        at15 = onnx.load_from_string(_export_bytes(ContribGelu(), (torch.randn(3),), 15))
    assert ops(at15) == [("com.microsoft", "Gelu")]


@onnx_helper.parse_args("v", "is", "v", "v", "f", "b")
def layer_norm_symbolic(g, input, normalized_shape, weight, bias, eps, cudnn_enable):
    """As users write LayerNormalization (opset 17) for older torch.onnx: None
    weights made constants of the input's dtype."""
    axis = -len(normalized_shape)
    dtype = dtype_of(input)
    if onnx_helper._is_none(weight):
        weight = g.op("Constant", value_t=torch.ones(normalized_shape, dtype=dtype))
    if onnx_helper._is_none(bias):
        bias = g.op("Constant", value_t=torch.zeros(normalized_shape, dtype=dtype))
    rank = onnx_helper._get_tensor_rank(input)
    assert rank == 3 and onnx_helper._get_tensor_dim_size(input, -1) == normalized_shape[-1]
    calls.append("layer_norm")
    return g.op("LayerNormalization", input, weight, bias, epsilon_f=eps, axis_i=axis)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_with_torch_onnx_helpers(tmp_path, affine):
    model = nn.LayerNorm(8, eps=1e-3, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            model.weight.uniform_(0.5, 1.5)
            model.bias.uniform_(-1, 1)
    x = torch.randn(2, 4, 8)
    del calls[:]
    class LayerNorm(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return torch.ops.t2o_compat.layer_norm(x, [8], self.m.weight, self.m.bias, self.m.eps, False)

    with torch_onnx_symbolic("t2o_compat::layer_norm", layer_norm_symbolic, 17):
        proto, out = export_and_run(LayerNorm(model), (x,), tmp_path, opset_version=17)
    assert calls == ["layer_norm"]
    (node,) = proto.graph.node
    assert node.op_type == "LayerNormalization"
    assert_matches(model(x), out)


def test_unsqueeze_helper_and_constants(tmp_path):
    """_unsqueeze_helper (reads the opset), _maybe_get_const of number args, tensors and numbers as g.op inputs."""

    def scale_add(g, x, y, alpha, n, bias):
        a, k = onnx_helper._maybe_get_const(alpha, "f"), onnx_helper._maybe_get_const(n, "i")
        assert (a, k) == (0.5, 3) and onnx_helper._is_none(bias)
        xs = onnx_helper._squeeze_helper(g, onnx_helper._unsqueeze_helper(g, x, [0]), [0])
        return g.op("Add", g.op("Mul", xs, torch.tensor(a)), g.op("Mul", y, float(k)))

    x, y = torch.randn(2, 3), torch.randn(2, 3)
    for opset in (11, 13):
        with torch_onnx_symbolic("t2o_compat::scale_add", scale_add, 9):
            proto, out = export_and_run(ScaleAdd(), (x, y), tmp_path, opset_version=opset, name=f"m{opset}.onnx")
        assert {"Unsqueeze", "Squeeze"} <= {t for _, t in ops(proto)}
        assert_matches(ScaleAdd()(x, y), out)


def test_several_outputs(tmp_path):
    class TwoHalves(nn.Module):
        def forward(self, x):
            a, b = torch.ops.t2o_compat.halves(x)
            return a * 2, b + 1

    def halves(g, x):
        return g.op("Split", x, axis_i=1, outputs=2) if g.opset < 18 else \
            g.op("Split", x, axis_i=1, num_outputs_i=2, outputs=2)

    x = torch.randn(3, 4)
    with torch_onnx_symbolic("t2o_compat::halves", halves, 9):
        proto, out = export_and_run(TwoHalves(), (x,), tmp_path, opset_version=13)
    assert "Split" in [t for _, t in ops(proto)]
    assert_matches(TwoHalves()(x), out)


def test_untranslatable_symbolics_fail_clearly(tmp_path):
    def list_input(g, x, y, alpha, n, bias):
        return g.op("Concat", g.op("prim::ListConstruct", x, y), axis_i=0)

    def subgraph(g, x, y, alpha, n, bias):
        node = g.op("If", g.op("Constant", value_t=torch.tensor(True))).node()
        node.addBlock()
        return node.output()

    args = (torch.randn(2, 3), torch.randn(2, 3))
    for fn, what in ((list_input, "prim::ListConstruct"), (subgraph, "subgraph")):
        with torch_onnx_symbolic("t2o_compat::scale_add", fn, 9):
            with pytest.raises(torch2onnx.OnnxExporterError) as info:
                torch2onnx.export(ScaleAdd(), args, str(tmp_path / "m.onnx"))
        message = str(info.value)
        assert what in message and "t2o_compat::scale_add" in message and fn.__name__ in message
        assert not torch.onnx.is_in_onnx_export()
