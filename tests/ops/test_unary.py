"""Elementwise math functions (src/symbolics/unary.cpp)."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


def ri(*shape, lo=-9, hi=10, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


x = r(2, 3, 4)
pos = torch.rand(2, 3, 4) * 4 + 0.1
unit = torch.rand(2, 3, 4) * 1.8 - 0.9
xi = ri(2, 3, 4)
posi = ri(2, 3, 4, lo=1, hi=20)
xi32 = ri(2, 3, 4, dtype=torch.int32)
b = torch.rand(2, 3, 4) > 0.5
xd = r(3, 4, dtype=torch.float64)
xh = r(3, 4, scale=1.0).half()
# halves, for round-half-to-even
halves = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.25, -0.75, 1.0049, 12.345, -12.355])


def inplace(fn):
    def f(a, *rest):
        a = a.clone()
        fn(a, *rest)
        return a

    return f


class ScriptRound(torch.nn.Module):
    """Python-number rounding: aten::floor/ceil/round on floats in a script."""

    def forward(self, x):
        v = float(x[0])
        n = math.floor(v) + math.ceil(v)
        return x * n + round(v) + math.sqrt(abs(v)) + math.exp(v) + math.log(abs(v) + 1.0)


CASES = [
    # ---- floating functions, also on integer/bool inputs (promoted to float)
    Case("exp", torch.exp, (x,)),
    Case("exp_int", torch.exp, (ri(2, 3, lo=-3, hi=4),)),
    Case("exp_bool", torch.exp, (b,)),
    Case("exp_double", torch.exp, (xd,)),
    Case("exp_inplace", inplace(lambda a: a.exp_()), (x,)),
    Case("log", torch.log, (pos,)),
    Case("log_int", torch.log, (posi,)),
    Case("sqrt", torch.sqrt, (pos,)),
    Case("sqrt_int", torch.sqrt, (posi,)),
    Case("sqrt_nan", torch.sqrt, (r(5, 20),)),  # > 64 elements: NaN values defeat the meta-run check
    Case("sin", torch.sin, (x,)),
    Case("sin_int", torch.sin, (xi,)),
    Case("cos", torch.cos, (x,)),
    Case("cos_int32", torch.cos, (xi32,)),
    Case("tan", torch.tan, (unit,)),
    Case("asin", torch.asin, (unit,)),
    Case("acos", torch.acos, (unit,)),
    Case("atan", torch.atan, (x,)),
    Case("atan_int", torch.atan, (xi,)),
    Case("sinh", torch.sinh, (unit,)),
    Case("cosh", torch.cosh, (unit,)),
    Case("asinh", torch.asinh, (x,)),
    Case("acosh", torch.acosh, (pos + 1,)),
    Case("atanh", torch.atanh, (unit,)),
    Case("erf", torch.erf, (x,)),
    Case("erf_int", torch.erf, (ri(5, lo=-2, hi=3),)),
    Case("reciprocal", torch.reciprocal, (pos,)),
    Case("reciprocal_int", torch.reciprocal, (posi,)),
    Case("reciprocal_inplace", inplace(lambda a: a.reciprocal_()), (pos,)),
    Case("rsqrt", torch.rsqrt, (pos,)),
    Case("rsqrt_int", torch.rsqrt, (posi,)),
    Case("log2", torch.log2, (pos,)),
    Case("log2_int", torch.log2, (posi,)),
    Case("log10", torch.log10, (pos,)),
    Case("log10_double", torch.log10, (xd.abs() + 0.5,)),
    Case("log1p", torch.log1p, (pos,)),
    Case("log1p_int", torch.log1p, (posi,)),
    Case("expm1", torch.expm1, (unit,)),
    Case("expm1_int", torch.expm1, (ri(4, lo=-2, hi=3),)),
    Case("exp2", torch.exp2, (x,)),
    Case("exp2_int", torch.exp2, (ri(6, lo=-3, hi=8),)),
    Case("square", torch.square, (x,)),
    Case("square_int", torch.square, (xi32,)),
    Case("square_bool", torch.square, (b,)),
    Case("square_int8", torch.square, (ri(3, 4, dtype=torch.int8),)),
    Case("square_inplace", inplace(lambda a: a.square_()), (x,)),
    # ---- rounding
    Case("floor", torch.floor, (x,)),
    Case("floor_int", torch.floor, (xi,)),
    Case("floor_inplace", inplace(lambda a: a.floor_()), (x,)),
    Case("ceil", torch.ceil, (x,)),
    Case("ceil_int", torch.ceil, (xi32,)),
    Case("trunc", torch.trunc, (x,)),
    Case("trunc_int", torch.trunc, (xi,)),
    Case("trunc_inplace", inplace(lambda a: a.trunc_()), (x,)),
    Case("fix", torch.fix, (x,)),
    Case("round", torch.round, (halves,), min_opset=11, error_below={9: "supported from opset 11"}),
    Case("round_random", torch.round, (x,), min_opset=11),
    Case("round_int", torch.round, (xi,), min_opset=11),
    Case("round_decimals", lambda a: torch.round(a, decimals=2), (halves,), min_opset=11),
    Case("round_decimals_neg", lambda a: torch.round(a * 100, decimals=-1), (x,), min_opset=11),
    Case("round_decimals_neg2", lambda a: torch.round(a, decimals=-2), (torch.tensor([149.0, 150.0, 250.0, -351.0]),),
         min_opset=11),
    Case("round_decimals_double", lambda a: torch.round(a, decimals=3), (xd,), min_opset=11),
    Case("round_inplace", inplace(lambda a: a.round_()), (x,), min_opset=11),
    Case("round_scalars", ScriptRound(), (torch.tensor([-2.5, 1.0]),), script=True, min_opset=11),
    Case("round_scalars_pos", ScriptRound(), (torch.tensor([3.7, 1.0]),), script=True, min_opset=11),
    Case("frac", torch.frac, (x,)),
    Case("frac_double", torch.frac, (xd,)),
    Case("frac_inplace", inplace(lambda a: a.frac_()), (x,)),
    # ---- abs / sign
    Case("abs", torch.abs, (x,)),
    Case("abs_int", torch.abs, (xi,)),
    Case("abs_int32", lambda a: a.abs(), (xi32,)),
    Case("abs_inplace", inplace(lambda a: a.abs_()), (x,)),
    Case("absolute", torch.absolute, (x,)),
    Case("sign", torch.sign, (torch.cat([x.flatten(), torch.zeros(3)]),)),
    Case("sign_int", torch.sign, (xi,)),
    Case("sign_uint8", torch.sign, (ri(3, 4, lo=0, hi=3, dtype=torch.uint8),)),
    Case("sign_bool", torch.sign, (b,)),
    Case("sign_inplace", inplace(lambda a: a.sign_()), (x,)),
    Case("sign_half", torch.sign, (xh,)),
    Case("sgn", torch.sgn, (x,)),
    Case("sgn_int", torch.sgn, (xi32,)),
    Case("signbit", torch.signbit, (torch.tensor([-1.0, 0.0, -0.0, 2.0, float("-inf"), float("inf")]),)),
    Case("signbit_int", torch.signbit, (xi,)),
    Case("signbit_bool", torch.signbit, (b,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
