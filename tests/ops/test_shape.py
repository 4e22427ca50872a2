"""Shape manipulation (src/symbolics/shape.cpp)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


x = r(2, 3, 4)
x4 = r(2, 3, 4, 5)
x1 = r(2, 1, 4, 1)
xi = torch.randint(-5, 5, (2, 3, 4))
b = torch.rand(2, 3, 4) > 0.5
v = torch.tensor([2.5])  # a[0] is a 0-d tensor in the model


def dyn(**axes):
    """--dynamic-axes for the named inputs: the sizes become run-time values."""
    import json
    return ("--dynamic-axes", json.dumps({k: list(v) for k, v in axes.items()}, separators=(",", ":")))


class ScriptSqueezeDim(nn.Module):
    """squeeze(dim) with the dim a scripted int argument: which dim, and whether it is 1, are the run's."""

    def forward(self, x, dim: int):
        return torch.squeeze(x, dim) * 2


class ScriptUnsqueezeDim(nn.Module):
    def forward(self, x, dim: int):
        return torch.unsqueeze(x, dim) + 1


class ScriptSizes(nn.Module):
    """size() as a list, unpacked and indexed; dim(); numel() (TorchScript)."""

    def forward(self, x):
        n, c, h = x.size()
        s = x.size()
        y = x.reshape(n * c, h) + x.dim()
        return y.view(s[0], s[1] * s[2]), y.numel() * x.view(-1), x.view(x.size())


class ScriptLen(nn.Module):
    """len() of a tensor: its dim 0 (a run-time value under dynamic_axes)."""

    def forward(self, x):
        return x * len(x) + torch.tensor([len(x)])


class ViewDtype(nn.Module):
    """x.view(dtype): only torch.export records it (torch.jit.trace records a copy, and scripting
    resolves x.view(torch.int32) to view(size=[3]))."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        return x.view(self.dtype)


class ScriptTile(nn.Module):
    def forward(self, x):
        return x.repeat(x.size(0), 1, 1), x.tile([2]), x.expand(x.size(0), -1, -1)


BITCAST = {26: ("BitCast",), 28: ("BitCast",)}

CASES = [
    # view(dtype) of the same width: BitCast at 26 (the bits, NaN and infinities included)
    Case("view_dtype_float_int32", ViewDtype(torch.int32),
         (torch.tensor([[1.5, -0.0, float("inf")], [float("nan"), -2.25, 3e-39]]),), torchscript=False,
         opsets=(26, 28), expect_ops=BITCAST),
    Case("view_dtype_int32_float", ViewDtype(torch.float32),
         (torch.tensor([1069547520, -1073741824, 8388608], dtype=torch.int32),), torchscript=False, opsets=(26,),
         expect_ops=BITCAST),
    Case("view_dtype_half_int16", ViewDtype(torch.int16), (r(3, 4).half(),), torchscript=False, opsets=(26,),
         expect_ops=BITCAST),
    Case("view_dtype_uint8_int8", ViewDtype(torch.int8), (torch.tensor([0, 1, 127, 128, 200, 255], dtype=torch.uint8),),
         torchscript=False, opsets=(26,), expect_ops=BITCAST),
    Case("view_dtype_int64_double", ViewDtype(torch.float64), (torch.tensor([4607182418800017408, -1, 0]),),
         torchscript=False, opsets=(28,), expect_ops=BITCAST),
    Case("view_dtype_bool_uint8", ViewDtype(torch.uint8), (torch.tensor([True, False, True]),), torchscript=False,
         opsets=(18, 26)),
    # ---- view / reshape
    Case("view", lambda a: a.view(6, 4), (x,)),
    Case("view_neg", lambda a: a.view(-1, 4), (x,)),
    Case("view_flat", lambda a: a.view(-1), (x,)),
    Case("view_size", lambda a: a.view(a.size(0), -1), (x,)),
    Case("view_sizes_product", lambda a: a.view(a.size(0) * a.size(1), a.size(2)), (x,)),
    Case("view_int", lambda a: a.view(4, 6), (xi,)),
    Case("view_bool", lambda a: a.view(3, -1), (b,)),
    Case("view_0d", lambda a: a[0].view(1, 1), (v,)),
    Case("view_to_0d", lambda a: a.view([]), (v,)),
    Case("view_empty", lambda a: a[:, :0].reshape(0, 4), (x,), min_opset=14,
         error_below={13: "size-0 dimension needs opset 14"}),
    Case("reshape", lambda a: a.reshape(4, 3, 2), (x,)),
    Case("reshape_neg", lambda a: a.reshape(2, -1), (x4,)),
    Case("reshape_size", lambda a: a.reshape(-1, a.size(-1)), (x4,)),
    Case("reshape_copy", lambda a: a.transpose(0, 1).reshape(3, -1), (x,)),
    Case("view_copy", lambda a: torch.view_copy(a, [6, 4]), (x,)),
    Case("reshape_alias", lambda a: torch.ops.aten._reshape_alias(a, [6, 4], [4, 1]), (x,)),
    Case("ravel", lambda a: a.ravel(), (x,)),
    Case("view_as", lambda a, b: a.view_as(b), (x, r(4, 6))),
    Case("reshape_as", lambda a, b: a.reshape_as(b), (xi, r(6, 4))),
    # ---- flatten / unflatten
    Case("flatten", lambda a: a.flatten(), (x4,)),
    Case("flatten_1", lambda a: a.flatten(1), (x4,)),
    Case("flatten_0_1", lambda a: a.flatten(0, 1), (x4,)),
    Case("flatten_1_2", lambda a: a.flatten(1, 2), (x4,)),
    Case("flatten_neg", lambda a: a.flatten(-3, -2), (x4,)),
    Case("flatten_2_end", lambda a: torch.flatten(a, 2), (x4,)),
    Case("flatten_same", lambda a: a.flatten(1, 1), (x4,)),
    Case("flatten_0d", lambda a: a[0].flatten(), (v,)),
    Case("flatten_1d", lambda a: a.flatten(), (v,)),
    Case("flatten_int", lambda a: a.flatten(1), (xi,)),
    Case("flatten_module", nn.Flatten(), (x4,)),
    Case("unflatten", lambda a: a.unflatten(1, (3, 1)), (x,)),
    Case("unflatten_neg", lambda a: a.unflatten(-1, (2, -1)), (x,)),
    Case("unflatten_first", lambda a: a.unflatten(0, (1, 2)), (x,)),
    Case("unflatten_module", nn.Unflatten(2, (2, 2)), (x,)),
    # ---- squeeze / unsqueeze
    Case("squeeze", lambda a: a.squeeze(), (x1,)),
    Case("squeeze_dim", lambda a: a.squeeze(1), (x1,)),
    Case("squeeze_dim_neg", lambda a: a.squeeze(-1), (x1,)),
    Case("squeeze_dim_not_1", lambda a: a.squeeze(0), (x1,)),
    Case("squeeze_none", lambda a: a.squeeze(), (x,)),
    Case("squeeze_0d", lambda a: a[0].squeeze(), (v,)),
    Case("squeeze_0d_dim", lambda a: a[0].squeeze(0), (v,)),
    Case("squeeze_inplace", lambda a: a.clone().squeeze_(1), (x1,)),
    Case("squeeze_copy", lambda a: torch.squeeze_copy(a), (x1,)),
    Case("squeeze_copy_dim", lambda a: torch.squeeze_copy(a, 3), (x1,)),
    # the dim an int argument (torch.onnx's test_squeeze_dynamic_dim / test_unsqueeze_dynamic_dim, issue 43)
    Case("squeeze_runtime_dim", ScriptSqueezeDim(), (x1, 1), script=True, opsets=(9, 13, 17),
         more_args=[(x1, -1), (x1, 0), (x1, 2), (x1, -3), (x1, 3)]),
    Case("unsqueeze_runtime_dim", ScriptUnsqueezeDim(), (r(2, 1, 4), -1), script=True, opsets=(13, 17),
         more_args=[(r(2, 1, 4), 0), (r(2, 1, 4), 3), (r(2, 1, 4), -4), (r(2, 1, 4), 2)],
         error_below={11: "known at export time"}),
    Case("unsqueeze", lambda a: a.unsqueeze(0), (x,)),
    Case("unsqueeze_mid", lambda a: a.unsqueeze(2), (x,)),
    Case("unsqueeze_last", lambda a: a.unsqueeze(-1), (x,)),
    Case("unsqueeze_neg", lambda a: a.unsqueeze(-3), (x,)),
    Case("unsqueeze_0d", lambda a: a[0].unsqueeze(0), (v,)),
    Case("unsqueeze_index", lambda a: a[:, None, :, None], (x,)),
    Case("unsqueeze_inplace", lambda a: a.clone().unsqueeze_(1), (b,)),
    Case("unsqueeze_copy", lambda a: torch.unsqueeze_copy(a, -1), (x,)),
    # ---- transpose / permute / t
    Case("transpose", lambda a: a.transpose(0, 2), (x,)),
    Case("transpose_neg", lambda a: a.transpose(-1, -2), (x4,)),
    Case("transpose_same", lambda a: a.transpose(1, 1), (x,)),
    Case("transpose_1d", lambda a: a.transpose(0, -1), (v,)),
    Case("transpose_inplace", lambda a: a.clone().transpose_(0, 1), (x,)),
    Case("transpose_copy", lambda a: torch.transpose_copy(a, 1, 2), (x,)),
    # numpy's names stay as they are in a submodule's traced graph (the top graph normalizes them)
    Case("swapaxes_submodule", torch.nn.Sequential(optest.Lambda(lambda a: torch.swapaxes(a, 0, 2))), (x,)),
    Case("swapdims_submodule", torch.nn.Sequential(optest.Lambda(lambda a: torch.swapdims(a, -1, 1))), (x4,)),
    Case("swapaxes", lambda a: a.swapaxes(0, 1), (x,)),
    Case("swapdims", lambda a: torch.swapdims(a, -1, 0), (xi,)),
    Case("t", lambda a: a[0].t(), (x,)),
    Case("t_1d", lambda a: a.t(), (v,)),
    Case("t_0d", lambda a: a[0].t(), (v,)),
    Case("t_inplace", lambda a: a[0].clone().t_(), (x,)),
    Case("t_copy", lambda a: torch.t_copy(a[1]), (x,)),
    Case("permute", lambda a: a.permute(2, 0, 1), (x,)),
    Case("permute_neg", lambda a: a.permute(-1, 0, -2, 1), (x4,)),
    Case("permute_identity", lambda a: a.permute(0, 1, 2), (x,)),
    Case("permute_copy", lambda a: torch.permute_copy(a, [1, 2, 0]), (xi,)),
    # ---- expand / repeat / tile
    Case("expand", lambda a: a.expand(3, 4), (r(3, 1),)),
    Case("expand_neg", lambda a: a.expand(-1, 5, -1), (x1[:, :, :, 0],)),
    Case("expand_new_dims", lambda a: a.expand(2, 3, 3, 4), (r(3, 1, 4),)),
    Case("expand_same", lambda a: a.expand(2, 3, 4), (x,)),
    Case("expand_size", lambda a, b: a.expand(b.size(0), -1, b.size(2)), (r(1, 3, 1), x)),
    Case("expand_0d", lambda a: a[0].expand(2, 3), (v,)),
    Case("expand_bool", lambda a: a.expand(2, 2, 3, 4), (b,)),
    Case("expand_copy", lambda a: torch.expand_copy(a, [2, 3, 5]), (r(2, 3, 1),)),
    Case("broadcast_to", lambda a: a.broadcast_to(4, 2, 3, 4), (x,)),
    Case("expand_as", lambda a, b: a.expand_as(b), (r(3, 1), r(2, 3, 4))),
    Case("repeat", lambda a: a.repeat(2, 1, 3), (x,)),
    Case("repeat_new_dims", lambda a: a.repeat(2, 2, 1, 1), (x,)),
    Case("repeat_int", lambda a: a.repeat(1, 2, 2), (xi,)),
    Case("repeat_0d", lambda a: a[0].repeat(3), (v,)),
    Case("repeat_size", lambda a: a.repeat(a.size(0), 1, 1), (x,)),
    Case("tile", lambda a: a.tile(2), (x,)),
    Case("tile_more", lambda a: a.tile((2, 1, 1, 2)), (x,)),
    Case("tile_same", lambda a: torch.tile(a, (1, 2, 3)), (x,)),
    Case("script_tile", ScriptTile(), (x,), script=True),
    # empty repeat lists (a 0-d tensor repeated by nothing) and zero repeats
    Case("repeat_0d_by_nothing", lambda a: a[0].repeat(()) * 2, (v,)),
    Case("repeat_0d_to_2d", lambda a: a[0].repeat(2, 3), (v,)),
    Case("repeat_zero", lambda a: a.repeat(0, 2, 1), (x,)),
    Case("repeat_int_0d", lambda a: a[0, 0, 0].repeat(()) + 1, (xi,)),
    Case("tile_0d_by_nothing", lambda a: a[0].tile(()) * 2, (v,)),
    Case("tile_0d", lambda a: a[0].tile((3,)), (v,)),
    Case("tile_fewer_dims", lambda a: a.tile((2,)), (x,)),
    Case("tile_zero", lambda a: a.tile((0, 1)), (x,)),
    # ---- size / numel / dim
    Case("size", lambda a: a.new_zeros(a.size()) + a, (x,)),
    Case("size_dim", lambda a: a * a.size(1), (x,)),
    Case("size_neg", lambda a: a * a.size(-1), (x,)),
    Case("numel", lambda a: a * a.numel(), (x,)),
    Case("script_sizes", ScriptSizes(), (x,), script=True),
    # ---- dynamic sizes (computed at run time)
    Case("dyn_view_size", lambda a: a.view(a.size(0), -1), (x,), extra=dyn(a=[0])),
    Case("dyn_reshape_size", lambda a: a.reshape(a.size(0) * a.size(1), a.size(2)), (x,), extra=dyn(a=[0, 1, 2])),
    Case("dyn_flatten", lambda a: a.flatten(1), (x4,), extra=dyn(a=[0, 2])),
    Case("dyn_flatten_mid", lambda a: a.flatten(1, 2), (x4,), extra=dyn(a=[0, 1, 2, 3])),
    # unflatten is traced inside torch's Python code: its input is unnamed (argument_1)
    Case("dyn_unflatten", lambda a: a.unflatten(2, (2, -1)), (x,), extra=dyn(argument_1=[0, 2])),
    Case("dyn_expand", lambda a, b: a.expand(b.size(0), -1, b.size(2)), (r(1, 3, 1), x), extra=dyn(b=[0, 2])),
    Case("dyn_repeat", lambda a: a.repeat(a.size(0), 1, 1), (x,), extra=dyn(a=[0])),
    Case("dyn_numel", lambda a: a * a.numel(), (x,), extra=dyn(a=[1])),
    Case("dyn_size", lambda a: a.new_zeros(a.size()) + a, (x,), extra=dyn(a=[0, 2])),
    Case("dyn_script_sizes", ScriptSizes(), (x,), script=True, extra=dyn(x=[0, 1])),
    Case("script_len", ScriptLen(), (x,), script=True),
    Case("dyn_script_len", ScriptLen(), (x,), script=True, extra=dyn(x=[0]), more_args=[(r(5, 3, 4),)]),
    # ---- pixel_shuffle / pixel_unshuffle
    Case("pixel_shuffle", nn.PixelShuffle(2), (r(2, 8, 3, 5),), opsets=(9, 10, 11, 13, 17)),
    Case("pixel_shuffle_3", lambda a: F.pixel_shuffle(a, 3), (r(1, 18, 2, 2),), opsets=(9, 10, 11, 13, 17)),
    Case("pixel_unshuffle", nn.PixelUnshuffle(2), (r(2, 2, 4, 6),)),
    Case("pixel_unshuffle_3", lambda a: F.pixel_unshuffle(a, 3), (r(1, 1, 6, 3),)),
    Case("pixel_unshuffle_dynamic", nn.PixelUnshuffle(2), (r(1, 2, 4, 6),),
         extra=("--dynamic-axes", '{"x":[0,2,3]}', "--input-names", "x"),
         more_args=[(r(2, 2, 8, 4),), (r(3, 2, 2, 2),)]),
    Case("pixel_roundtrip", lambda a: F.pixel_unshuffle(F.pixel_shuffle(a, 2), 2), (r(2, 8, 3, 3),)),
    # opsets 9-10 build C, H and W into Reshape constants: those must be static (issue 43); N may vary
    Case("pixel_shuffle_dynamic_hw", nn.PixelShuffle(2), (r(1, 8, 3, 5),), opsets=(11, 13),
         error_below={9: "is dynamic", 10: "is dynamic"},
         extra=("--dynamic-axes", '{"x":[2,3]}', "--input-names", "x"), pt2=False, more_args=[(r(1, 8, 4, 2),)]),
    Case("pixel_shuffle_dynamic_batch", nn.PixelShuffle(2), (r(2, 8, 3, 5),), opsets=(9, 10, 11),
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"), pt2=False, more_args=[(r(5, 8, 3, 5),)]),
    Case("channel_shuffle", lambda a: F.channel_shuffle(a, 2), (r(1, 4, 3, 3),), pt2=True),
    Case("channel_shuffle_module_3d", nn.ChannelShuffle(3), (r(2, 6, 5),), pt2=True),
    Case("native_channel_shuffle", lambda a: torch.native_channel_shuffle(a, 2), (r(2, 6, 4),), pt2=True),
    Case("channel_shuffle_5d_int", nn.ChannelShuffle(2), (torch.arange(2 * 4 * 2 * 3 * 2).reshape(2, 4, 2, 3, 2),), pt2=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)


def test_view_dtype_refusals(tmp_path):
    """view(dtype) exports as BitCast from opset 26; below it, and for views that change the element
    width (PyTorch resizes the last dim, BitCast keeps the shape), the export fails and says why."""
    import subprocess

    import harness
    if harness.max_opset() < 26 or not optest.pt2_available():
        return
    for dtype, x, opset, want in [(torch.int32, torch.randn(3), 25, "needs opset 26"),
                                  (torch.int16, torch.randn(2, 4), 26, "changes the element width"),
                                  (torch.bool, torch.tensor([0, 1], dtype=torch.uint8), 26, "only a bool tensor")]:
        program = str(tmp_path / "m.pt2")
        torch.export.save(torch.export.export(ViewDtype(dtype), (x,)), program)
        proc = subprocess.run([harness.CLI, "export", program, "-o", str(tmp_path / "m.onnx"), "--opset", str(opset)],
                              capture_output=True, text=True)
        assert proc.returncode != 0 and want in proc.stderr, (dtype, proc.stderr)
