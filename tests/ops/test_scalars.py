"""Scalars, conversions and no-ops (src/symbolics/scalars.cpp): the
NumToTensor / Int / Float / Bool / ScalarImplicit plumbing of sizes and
numbers, to / type_as / _cast_*, detach / clone / contiguous."""
import os
import sys
from typing import List

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


x = r(2, 3, 4)
xi = torch.randint(-5, 5, (2, 3, 4))
b = torch.rand(2, 3, 4) > 0.5
t = torch.tensor([2.7, -1.6, 0.0])
ti = torch.tensor([2, 1, 3])


def dyn(**axes):
    """--dynamic-axes for the named inputs: the sizes become run-time values."""
    import json
    return ("--dynamic-axes", json.dumps({k: list(v) for k, v in axes.items()}, separators=(",", ":")))


class ScriptNumbers(nn.Module):
    """Numbers from sizes and from tensor data, used as Python numbers."""

    def forward(self, x, t):
        n = x.size(0) * 2
        s = int(t[0])  # truncation toward zero
        s2 = int(t[1])
        f = float(t[1])
        z = bool(t[2])
        nz = bool(t[0])
        return x * n + s, x * s2 + f, x * float(z) + float(nz), x.view(x.size(0), -1) * x.dim()


class ScriptInt(nn.Module):
    """int(tensor) of an integer tensor, and numbers from an int tensor's data."""

    def forward(self, x, ti):
        k = int(ti.sum())
        m = int(ti[1])
        return x.view(m, k * 2), x.sum() * k


class ScriptImplicit(nn.Module):
    """Tensors used where numbers are expected: IntImplicit, ScalarImplicit, item, dtype."""

    def forward(self, x, ti, t):
        a = x.view(ti[0], -1)
        c = torch.add(x, 1, alpha=ti[1])
        d = x.to(ti.dtype)
        e = x * t[0].item() + x * ti[2].item()
        return a, c, d, e, x.cpu()


class ScriptImplicitOps(nn.Module):
    def forward(self, x, ti, t):
        return x * torch.ops.aten.FloatImplicit(t[1]) + torch.ops.aten.IntImplicit(ti[0])


class ScriptToList(nn.Module):
    def forward(self, a, s):
        sizes: List[int] = a.tolist()
        scales: List[float] = s.tolist()
        return torch.zeros(sizes[0], sizes[1]) + scales[0], len(sizes)


class ScriptData(nn.Module):
    def forward(self, a):
        return a.data * 2  # prim::data


class ScriptSet(nn.Module):
    def forward(self, a, b):
        z = a * 1
        z.set_(b)  # z becomes b (its shape)
        return z + 1, a


CASES = [
    # ---- sizes as numbers (traced: prim::NumToTensor / aten::Int)
    Case("size_times", lambda a: a + a.size(0) * 2, (x,)),
    Case("size_view", lambda a: a.view(a.size(0), a.size(1) * a.size(2)), (x,)),
    Case("size_view_expr", lambda a: a.view(-1, a.size(-1) // 2), (x,)),
    Case("size_float", lambda a: a / a.size(2) ** 0.5, (x,)),
    Case("size_tensor", lambda a: a.sum() + torch.tensor(a.size(1)), (x,)),
    Case("numel_tensor", lambda a: a.mean() * a.numel(), (x,)),
    Case("script_numbers", ScriptNumbers(), (x, t), script=True),
    Case("script_int", ScriptInt(), (r(12), ti), script=True),
    Case("script_implicit", ScriptImplicit(), (x, ti, t), script=True),
    Case("script_implicit_ops", ScriptImplicitOps(), (x, ti, t), script=True),
    Case("dyn_size_times", lambda a: a + a.size(0) * 2, (x,), extra=dyn(a=[0])),
    Case("dyn_size_view", lambda a: a.view(a.size(0), a.size(1) * a.size(2)), (x,), extra=dyn(a=[0, 1, 2])),
    Case("dyn_size_view_expr", lambda a: a.view(-1, a.size(-1) // 2), (x,), extra=dyn(a=[2])),
    Case("dyn_size_float", lambda a: a / a.size(2) ** 0.5, (x,), extra=dyn(a=[2])),
    Case("dyn_size_tensor", lambda a: a.sum() + torch.tensor(a.size(1)), (x,), extra=dyn(a=[1])),
    Case("dyn_script_numbers", ScriptNumbers(), (x, t), script=True, extra=dyn(x=[0])),
    # ---- conversions
    Case("to_double", lambda a: a.to(torch.float64), (x,)),
    Case("to_half", lambda a: a.to(torch.float16), (x,)),
    Case("to_int", lambda a: a.to(torch.int32), (x,)),
    Case("to_long_negative", lambda a: a.long(), (t,)),
    Case("to_bool", lambda a: a.bool(), (t,)),
    Case("to_uint8", lambda a: a.byte(), (x.abs(),)),
    Case("to_int8", lambda a: a.char(), (x,)),
    Case("to_int16", lambda a: a.short(), (x,)),
    Case("float", lambda a: a.float(), (xi,)),
    Case("double", lambda a: a.double(), (b,)),
    Case("half_float", lambda a: a.half().float(), (x,)),
    Case("int_long", lambda a: a.int().long(), (xi,)),
    Case("bool_float", lambda a: a.bool().float(), (xi,)),
    Case("to_same", lambda a: a.to(torch.float32), (x,)),
    Case("to_device", lambda a: a.to("cpu"), (x,)),
    Case("to_device_dtype", lambda a: a.to("cpu", torch.float64), (x,)),
    Case("to_other", lambda a, b: a.to(b), (x, xi)),
    Case("type_as", lambda a, b: a.type_as(b), (xi, x)),
    Case("type_as_bool", lambda a, b: a.type_as(b), (x, b)),
    Case("_to_copy", lambda a: torch.ops.aten._to_copy(a, dtype=torch.float64), (x,)),
    Case("_cast_byte", lambda a: torch._cast_Byte(a), (x.abs(),)),
    Case("_cast_char", lambda a: torch._cast_Char(a), (x,)),
    Case("_cast_short", lambda a: torch._cast_Short(a), (x,)),
    Case("_cast_int", lambda a: torch._cast_Int(a), (x,)),
    Case("_cast_long", lambda a: torch._cast_Long(a), (x,)),
    Case("_cast_half", lambda a: torch._cast_Half(a), (x,)),
    Case("_cast_float", lambda a: torch._cast_Float(a), (xi,)),
    Case("_cast_double", lambda a: torch._cast_Double(a), (b,)),
    # ---- no-ops
    Case("detach", lambda a: a.detach() * 2, (x,)),
    Case("data_scripted", ScriptData(), (x,), script=True),
    Case("tolist_scripted", ScriptToList(), (torch.tensor([2, 3]), torch.tensor([0.5, 1.5])), script=True,
         opsets=(11, 13, 17), error_below={10: "opset 11"}),
    Case("set_source", lambda a, b: (a * 1).set_(b) + 1, (x, torch.randn(3, 2))),  # takes b's shape
    Case("set_source_scripted", ScriptSet(), (x, torch.randn(4, 2)), script=True),
    Case("clone", lambda a: a.clone() + 1, (x,)),
    Case("clone_memory_format", lambda a: a.clone(memory_format=torch.channels_last), (r(2, 3, 4, 5),)),
    Case("contiguous", lambda a: a.transpose(0, 1).contiguous(), (x,)),
    Case("positive", lambda a: +a, (xi,)),
    Case("resolve_conj", lambda a: a.resolve_conj(), (x,)),
    Case("resolve_neg", lambda a: a.resolve_neg(), (x,)),
    Case("alias", lambda a: torch.ops.aten.alias(a) * 2, (x,)),
    Case("alias_copy", lambda a: torch.alias_copy(a), (x,)),
    Case("detach_copy", lambda a: torch.detach_copy(a), (x,)),
    Case("lift", lambda a: torch.ops.aten.lift(a), (x,)),
    Case("lift_fresh", lambda a: torch.ops.aten.lift_fresh(a), (x,)),
    Case("lift_fresh_copy", lambda a: torch.ops.aten.lift_fresh_copy(a), (x,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
