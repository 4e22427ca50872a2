"""Comparisons, logical and bitwise ops, where, clamp, elementwise max/min
(src/symbolics/comparison.cpp)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype)


def ri(*shape, lo=-4, hi=5, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


# Rounded floats so that equal elements exist.
x = torch.round(r(2, 3, 4))
y = torch.round(r(2, 3, 4))
xi = ri(2, 3, 4)
yi = ri(2, 3, 4)
xi32 = ri(2, 3, 4, dtype=torch.int32)
xu8 = ri(2, 3, 4, lo=0, hi=5, dtype=torch.uint8)
b1 = torch.rand(2, 3, 4) > 0.5
b2 = torch.rand(2, 3, 4) > 0.5
xh = torch.round(r(3, 4)).half()
xd = torch.round(r(3, 4)).double()
# NaN in some places of both operands (more than 64 elements: the meta-run
# check compares small values exactly, which NaN never is).
nan = torch.round(r(10, 10))
nan[torch.rand(10, 10) < 0.3] = float("nan")
nan2 = torch.where(torch.rand(10, 10) < 0.5, nan, torch.round(r(10, 10)))
nan2[torch.rand(10, 10) < 0.3] = float("nan")


class ScriptNot(torch.nn.Module):
    def forward(self, x):
        b = not bool(x.sum() > 0)
        c = not bool(x.sum() < 0)
        return x * float(b) + float(c)


class ScriptMaxMin(torch.nn.Module):
    """Python's max()/min() of numbers computed at run time (prim::max/min):
    two ints, an int and a float, and lists (MViT's relative positions)."""

    def forward(self, x):
        i = int(x.argmax())
        j = int(x.argmin())
        f = float(x.max())
        a = max(i, j) - min(i, j)
        b = max(f, 1.0) + min(i / 3, 2.0)
        c = max([i, j, 3]) + min([f, 0.5])
        return x * a + b + c


def inplace(fn):
    def f(a, *rest):
        a = a.clone()
        fn(a, *rest)
        return a

    return f


def _iand(a, b):
    a &= b


def _ior(a, b):
    a |= b


def _ixor(a, b):
    a ^= b


CMP_OPSETS = (9, 10, 11, 12, 13, 17)
MAX_OPSETS = (9, 11, 12, 13, 17)  # integer Max/Min/Clip arrive in opset 12
CASES = []
for name, fn in [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("gt", torch.gt), ("le", torch.le),
                 ("ge", torch.ge)]:
    CASES += [
        Case(f"{name}_float", fn, (x, y), opsets=CMP_OPSETS),
        Case(f"{name}_int", fn, (xi, yi), opsets=CMP_OPSETS),
        Case(f"{name}_int32_int64", fn, (xi32, yi), opsets=CMP_OPSETS),
        Case(f"{name}_uint8", fn, (xu8, xu8.flip(0)), opsets=CMP_OPSETS),
        Case(f"{name}_bool", fn, (b1, b2), opsets=CMP_OPSETS),
        Case(f"{name}_int_float", fn, (xi, y), opsets=CMP_OPSETS),
        Case(f"{name}_scalar_int", lambda a, fn=fn: fn(a, 1), (x,), opsets=CMP_OPSETS),
        Case(f"{name}_int_scalar_float", lambda a, fn=fn: fn(a, 0.5), (xi,), opsets=CMP_OPSETS),
        Case(f"{name}_half", lambda a, fn=fn: fn(a, 1.0), (xh,), opsets=CMP_OPSETS),
        Case(f"{name}_double_0d", fn, (xd, torch.tensor(1.0)), opsets=CMP_OPSETS),
        Case(f"{name}_0d_int_float", fn, (x, torch.tensor(1)), opsets=CMP_OPSETS),
    ]
CASES += [
    Case("eq_op", lambda a, b: a == b, (x, y)),
    Case("ne_op", lambda a, b: a != b, (xi, yi)),
    Case("lt_op", lambda a, b: a < b, (x, y)),
    Case("gt_op", lambda a: a > 0, (xi,)),
    Case("le_op", lambda a: a <= 1.5, (x,)),
    Case("ge_op", lambda a: 1 >= a, (xi,)),
    Case("eq_nan", lambda a, b: a == b, (nan, nan2), opsets=CMP_OPSETS),
    Case("ne_nan", lambda a, b: a != b, (nan, nan2), opsets=CMP_OPSETS),
    Case("lt_nan", lambda a, b: a < b, (nan, nan2), opsets=CMP_OPSETS),
    Case("not_equal", torch.not_equal, (x, y)),
    Case("less", torch.less, (x, y)),
    Case("greater", torch.greater, (x, y)),
    Case("less_equal", torch.less_equal, (x, y), opsets=CMP_OPSETS),
    Case("greater_equal", torch.greater_equal, (x, y), opsets=CMP_OPSETS),
    Case("eq_inplace", inplace(lambda a, b: a.eq_(b)), (x, y)),
    Case("gt_inplace_int", inplace(lambda a: a.gt_(0)), (xi,)),
    Case("lt_inplace", inplace(lambda a, b: a.lt_(b)), (xi, yi)),
    # ---- logical
    Case("logical_and", torch.logical_and, (b1, b2)),
    Case("logical_and_float", torch.logical_and, (x, y)),
    Case("logical_or", torch.logical_or, (xi, b2)),
    Case("logical_xor", torch.logical_xor, (x, xi)),
    Case("logical_not", torch.logical_not, (b1,)),
    Case("logical_not_float", torch.logical_not, (x,)),
    Case("logical_not_int", torch.logical_not, (xi,)),
    Case("logical_and_inplace", inplace(lambda a, b: a.logical_and_(b)), (x, y)),
    Case("logical_not_inplace", inplace(lambda a: a.logical_not_()), (xi,)),
    Case("script_not", ScriptNot(), (x,), script=True),
    Case("script_max_min", ScriptMaxMin(), (x,), script=True, opsets=(9, 12, 17)),
    # ---- bitwise on bool
    Case("and_op", lambda a, b: a & b, (b1, b2)),
    Case("or_op", lambda a, b: a | b, (b1, b2)),
    Case("xor_op", lambda a, b: a ^ b, (b1, b2)),
    Case("bitwise_and", torch.bitwise_and, (b1, b2)),
    Case("bitwise_or", torch.bitwise_or, (b1, b2)),
    Case("bitwise_xor", torch.bitwise_xor, (b1, b2)),
    Case("bitwise_not", torch.bitwise_not, (b1,)),
    Case("bitwise_not_op", lambda a: ~a, (b1,)),
    Case("bitwise_not_int", torch.bitwise_not, (xi,)),
    Case("bitwise_not_int32", lambda a: ~a, (xi32,)),
    Case("and_inplace", inplace(_iand), (b1, b2)),
    Case("or_inplace", inplace(_ior), (b1, b2)),
    Case("xor_inplace", inplace(_ixor), (b1, b2)),
    Case("and_mask", lambda a: (a > 0) & (a < 2), (x,)),
    # integer bitwise ops: BitwiseAnd/Or/Xor from opset 18, a Loop over the bits before
    Case("bitwise_and_int", torch.bitwise_and, (xi, yi), pt2=True),
    Case("or_int", lambda a: a | 1, (xi,), pt2=True),
    Case("xor_int32", lambda a, b: a ^ b, (xi32, xi32.flip(0)), pt2=True),
    Case("or_uint8_int64", lambda a, b: a | b, (xi.abs().to(torch.uint8), yi)),
    Case("xor_inplace_int", inplace(_ixor), (xi, yi)),
    Case("xor_int64_extremes", lambda a, b: a ^ b, (torch.tensor([-2**63, 2**63 - 1, -1, 0, 5, -5, 2**62]),
                                                     torch.tensor([2**63 - 1, -2**63, 12345, -1, -3, 7, -2**62])), pt2=True),
    Case("and_or_int64_wide", lambda a, b: (a & b, a | b), (torch.randint(-2**62, 2**62, (40,)),
                                                             torch.randint(-2**62, 2**62, (40,))), pt2=True),
    Case("xor_uint8", lambda a, b: a ^ b, (torch.randint(0, 256, (30,), dtype=torch.uint8),
                                          torch.randint(0, 256, (30,), dtype=torch.uint8)), pt2=True),
    Case("and_int8_int16", lambda a, b: (a & b, b | 3), (torch.randint(-128, 128, (30,), dtype=torch.int8),
                                                          torch.randint(-2**15, 2**15, (30,), dtype=torch.int16))),
    Case("xor_int_broadcast", lambda a, b: a ^ b, (torch.randint(-50, 50, (3, 1)), torch.randint(-50, 50, (4,)))),
    Case("bitwise_not_uint8", torch.bitwise_not, (xi.abs().to(torch.uint8),), opsets=(17, 18)),
    # ---- where
    Case("where", torch.where, (b1, x, y)),
    Case("where_int", torch.where, (b1, xi, yi)),
    Case("where_mixed", torch.where, (b1, xi, y)),
    Case("where_bool", torch.where, (b1, b2, b1)),
    Case("where_broadcast", torch.where, (b1, x, r(4))),
    Case("where_scalar_other", lambda c, a: torch.where(c, a, 0.0), (b1, x)),
    Case("where_scalar_other_int_float", lambda c, a: torch.where(c, a, 0.5), (b1, xi)),
    Case("where_scalar_self", lambda c, a: torch.where(c, 2, a), (b1, xi32)),
    Case("where_scalars", lambda c: torch.where(c, 1.0, 0.0), (b1,)),
    Case("where_scalars_int", lambda c: torch.where(c, 1, -1), (b1,)),
    Case("where_uint8_cond", lambda c, a, b: torch.where(c.bool(), a, b), (xu8, x, y)),
    Case("where_method", lambda a, b: a.where(a > 0, b), (x, y)),
    Case("where_0d", torch.where, (b1, x, torch.tensor(2.0, dtype=torch.float64))),
    # ---- max/min of two tensors
    Case("maximum", torch.maximum, (x, y), opsets=MAX_OPSETS),
    Case("maximum_int", torch.maximum, (xi, yi), opsets=MAX_OPSETS),
    Case("maximum_mixed", torch.maximum, (xi, y), opsets=MAX_OPSETS),
    Case("maximum_0d", torch.maximum, (xi, torch.tensor(2.5)), opsets=MAX_OPSETS),
    Case("maximum_bool", torch.maximum, (b1, b2), opsets=MAX_OPSETS),
    Case("minimum", torch.minimum, (x, y), opsets=MAX_OPSETS),
    Case("minimum_int32", torch.minimum, (xi32, xi), opsets=MAX_OPSETS),
    Case("minimum_half", torch.minimum, (xh, xh.flip(0)), opsets=MAX_OPSETS),
    Case("maximum_nan", torch.maximum, (nan, nan2), opsets=MAX_OPSETS),
    Case("minimum_nan", torch.minimum, (nan, nan2), opsets=MAX_OPSETS),
    Case("fmax", torch.fmax, (x, y), opsets=MAX_OPSETS),
    Case("fmax_nan", torch.fmax, (nan, nan2), opsets=MAX_OPSETS),
    Case("fmin_nan", torch.fmin, (nan, nan2), opsets=MAX_OPSETS),
    Case("fmin_int", torch.fmin, (xi, yi), opsets=MAX_OPSETS),
    # ---- clamp
    Case("clamp", lambda a: torch.clamp(a, -1.5, 2.0), (x,), opsets=MAX_OPSETS),
    Case("clamp_min_only", lambda a: torch.clamp(a, min=-1.0), (x,), opsets=MAX_OPSETS),
    Case("clamp_max_only", lambda a: torch.clamp(a, max=1.0), (x,), opsets=MAX_OPSETS),
    Case("clamp_int_bounds_float", lambda a: torch.clamp(a, -1, 2), (x,), opsets=MAX_OPSETS),
    Case("clamp_int", lambda a: torch.clamp(a, -2, 3), (xi,), opsets=MAX_OPSETS),
    Case("clamp_int32", lambda a: torch.clamp(a, min=0), (xi32,), opsets=MAX_OPSETS),
    Case("clamp_int_max", lambda a: torch.clamp(a, max=1), (xi,), opsets=MAX_OPSETS),
    Case("clamp_int_float_bound", lambda a: torch.clamp(a, min=0.5), (xi,), opsets=MAX_OPSETS),
    Case("clamp_uint8", lambda a: torch.clamp(a, 1, 3), (xu8,), opsets=MAX_OPSETS),
    Case("clamp_double", lambda a: torch.clamp(a, -1, 1), (xd,), opsets=MAX_OPSETS),
    Case("clamp_min_gt_max", lambda a: torch.clamp(a, 2, -1), (x,), opsets=MAX_OPSETS),
    Case("clamp_tensor", lambda a, lo, hi: torch.clamp(a, lo, hi), (x, r(4) - 1, r(3, 1) + 1), opsets=MAX_OPSETS),
    Case("clamp_tensor_min", lambda a, lo: torch.clamp(a, min=lo), (x, r(2, 3, 4)), opsets=MAX_OPSETS),
    Case("clamp_tensor_int", lambda a, lo: torch.clamp(a, max=lo), (xi, yi), opsets=MAX_OPSETS),
    Case("clamp_tensor_int_float", lambda a, lo: torch.clamp(a, min=lo), (xi, torch.tensor(0.5)), opsets=MAX_OPSETS),
    Case("clamp_runtime_bound", lambda a: torch.clamp(a, max=a.size(0) + 0.5), (x,), opsets=MAX_OPSETS),
    Case("clip", lambda a: torch.clip(a, -1, 1), (x,), opsets=MAX_OPSETS),
    Case("clamp_method", lambda a: a.clamp(min=0), (x,), opsets=MAX_OPSETS),
    Case("clamp_inplace", inplace(lambda a: a.clamp_(-1, 1)), (x,), opsets=MAX_OPSETS),
    Case("clamp_inplace_int", inplace(lambda a: a.clamp_(max=2)), (xi,), opsets=MAX_OPSETS),
    Case("clamp_min", lambda a: torch.clamp_min(a, 0.5), (x,), opsets=MAX_OPSETS),
    Case("clamp_min_int", lambda a: torch.clamp_min(a, 0), (xi,), opsets=MAX_OPSETS),
    Case("clamp_min_tensor", lambda a, b: torch.clamp_min(a, b), (x, y), opsets=MAX_OPSETS),
    Case("clamp_max", lambda a: torch.clamp_max(a, 0.5), (x,), opsets=MAX_OPSETS),
    Case("clamp_max_int", lambda a: torch.clamp_max(a, 0), (xi32,), opsets=MAX_OPSETS),
    Case("clamp_max_tensor", lambda a, b: torch.clamp_max(a, b), (xi, yi), opsets=MAX_OPSETS),
    Case("clamp_min_inplace", inplace(lambda a: a.clamp_min_(0)), (x,), opsets=MAX_OPSETS),
    Case("clamp_nan", lambda a: torch.clamp(a, -1, 1), (nan,), opsets=MAX_OPSETS),
    Case("clamp_tensor_nan", lambda a, b: torch.clamp(a, min=b), (nan, nan2.nan_to_num()), opsets=MAX_OPSETS),
    Case("clamp_int8", lambda a: torch.clamp(a, -2, 2), (ri(3, 4, dtype=torch.int8),), opsets=MAX_OPSETS),
    Case("maximum_uint8", torch.maximum, (xu8, xu8.flip(0)), opsets=MAX_OPSETS),
    Case("fmax_int", torch.fmax, (xi32, xi32.flip(0)), opsets=MAX_OPSETS),
    # ---- isnan
    Case("isnan", torch.isnan, (nan,)),
    Case("isnan_int", torch.isnan, (xi,)),
    Case("isnan_half", torch.isnan, (nan.half(),)),
    Case("isnan_bool", torch.isnan, (b1,)),
    Case("isnan_inplace_mask", lambda a: a.masked_fill(torch.isnan(a), 0.0), (nan,)),
    # ---- isclose
    Case("isclose", torch.isclose, (x, x + torch.randn(2, 3, 4) * 1e-5), opsets=CMP_OPSETS),
    Case("isclose_tol", lambda a, b: torch.isclose(a, b, rtol=0.1, atol=0.5), (x, y), opsets=CMP_OPSETS),
    Case("isclose_nan", lambda a, b: torch.isclose(a, b, equal_nan=True), (nan, nan2), opsets=CMP_OPSETS),
    Case("isclose_nan_ne", lambda a, b: torch.isclose(a, b), (nan, nan2), opsets=CMP_OPSETS),
    Case("isclose_inf", lambda a, b: torch.isclose(a, b),
         (torch.tensor([float("inf"), float("-inf"), float("inf"), 1.0]),
          torch.tensor([float("inf"), float("inf"), 1.0, 1.0])), opsets=CMP_OPSETS),
    Case("isclose_int", lambda a, b: torch.isclose(a, b, atol=1, rtol=0), (xi, yi), opsets=CMP_OPSETS),
    Case("isclose_zero_tol", lambda a, b: torch.isclose(a, b, atol=0, rtol=0), (x, y), opsets=CMP_OPSETS),
    # where(condition): nonzero(condition, as_tuple=True)
    Case("where_condition_only", lambda a: torch.where(a > 0), (x,)),
    Case("where_condition_only_1d", lambda a: torch.where(a[0, 0] > 0.5), (x,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
