"""Arithmetic with PyTorch's type promotion (src/symbolics/arithmetic.cpp)."""
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


def nz(*shape, dtype=torch.int64):
    """Non-zero integers (divisors), both signs."""
    v = torch.randint(1, 6, shape, dtype=dtype)
    return torch.where(torch.rand(*shape) < 0.5, -v, v)


x = r(2, 3, 4)
y = r(2, 3, 4)
row = r(4)
xi = ri(2, 3, 4)
yi = nz(2, 3, 4)
xi32 = ri(2, 3, 4, dtype=torch.int32)
b1 = torch.rand(2, 3, 4) > 0.5
b2 = torch.rand(2, 3, 4) > 0.5
xd = r(2, 3, dtype=torch.float64)
xh = r(2, 3, dtype=torch.float16)
# 0-d operands are made in the model (t[0]): ONNX Runtime inputs of the test
# framework are at least 1-D.
s0f = torch.tensor([1.5])
s0d = torch.tensor([2.5], dtype=torch.float64)
s0i = torch.tensor([3])
s0b = torch.tensor([True])


DIV_OPSETS = (9, 10, 11, 13, 14, 17)  # integer Mod arrives in opset 10, int8 Sub/Div in 14
POW_OPSETS = (9, 11, 12, 13, 17)  # integer Pow arrives in opset 12


class ScalarMath(torch.nn.Module):
    """TorchScript number arithmetic on ints and floats computed at run time."""

    def forward(self, xi, x):
        n = int(xi[0])
        m = int(xi[1])
        f = float(x[0])
        a = n * m + n - m
        b = n / m
        c = n // m
        d = n % m
        e = -n
        g = f // 0.7 + f % 0.7 + n // 0.7 + f * n - n * f + f / 2
        h = n ** 2
        k = f ** 2 + 2.0 ** f + f ** m
        return (xi * a, x + b, xi * c, xi + d, xi * e, x + g, x + h, x * k)


class ScalarFloorNeg(torch.nn.Module):
    """floordiv / remainder of negative numbers computed at run time."""

    def forward(self, xi):
        n = int(xi[0])
        m = int(xi[1])
        return (xi * (n // 3), xi * (n % 3), xi * (n // -3), xi * (n % -3),
                xi * (m // 3), xi * (m % 3), xi * (m // -3), xi * (m % -3))


def inplace(fn):
    """Runs an in-place op on a copy of the first argument."""

    def f(a, *rest):
        a = a.clone()
        fn(a, *rest)
        return a

    return f


def _iadd(a, b):
    a += b


def _isub(a, b):
    a -= b


def _imul(a, b):
    a *= b


def _idiv(a, b):
    a /= b


def _ifloordiv(a, b):
    a //= b


def _imod(a, b):
    a %= b


def _ipow(a, b):
    a **= b


CASES = [
    # ---- add
    Case("add", lambda a, b: a + b, (x, y)),
    Case("add_broadcast", lambda a, b: a + b, (x, row)),
    Case("add_alpha", lambda a, b: torch.add(a, b, alpha=2.5), (x, y)),
    Case("add_alpha_int", lambda a, b: torch.add(a, b, alpha=3), (xi, yi)),
    Case("add_int", lambda a, b: a + b, (xi, yi)),
    Case("add_int32_int64", lambda a, b: a + b, (xi32, xi)),
    Case("add_int_float", lambda a, b: a + b, (xi, x)),
    Case("add_float_double", lambda a, b: a + b, (x[0, :2, :3], xd)),
    Case("add_scalar_int", lambda a: a + 2, (x,)),
    Case("add_scalar_float", lambda a: a + 2.5, (x,)),
    Case("add_int_tensor_int_scalar", lambda a: a + 7, (xi,)),
    Case("add_int32_tensor_int_scalar", lambda a: a + 7, (xi32,)),
    Case("add_int_tensor_float_scalar", lambda a: a + 0.5, (xi,)),
    Case("add_int32_tensor_float_scalar", lambda a: a + 0.5, (xi32,)),
    Case("add_scalar_left", lambda a: 3 + a, (xi,)),
    Case("add_bool_bool", lambda a, b: a + b, (b1, b2)),
    Case("add_bool_int", lambda a, b: a + b, (b1, xi)),
    Case("add_bool_float_scalar", lambda a: a + 1.5, (b1,)),
    Case("add_bool_int_scalar", lambda a: a + 2, (b1,)),
    Case("add_bool_scalar", lambda a: a + True, (x,)),
    Case("add_0d_float_to_int", lambda a, b: a + b[0], (xi, s0f)),
    Case("add_0d_double_to_float", lambda a, b: a + b[0], (x, s0d)),
    Case("add_0d_double_to_int", lambda a, b: a + b[0], (xi, s0d)),
    Case("add_0d_int_to_int32", lambda a, b: a + b[0], (xi32, s0i)),
    Case("add_0d_bool_to_float", lambda a, b: a + b[0], (x, s0b)),
    Case("add_0d_0d", lambda a, b: a[0] + b[0], (s0i, s0d)),
    Case("add_0d_int_0d_bool", lambda a, b: a[0] + b[0], (s0i, s0b)),
    Case("add_half", lambda a: a + a * 0.5 + 1, (xh,)),
    Case("add_double", lambda a: a + 1.25, (xd,)),
    Case("add_inplace", inplace(lambda a, b: a.add_(b)), (x, y)),
    Case("add_inplace_op", inplace(_iadd), (x, y)),
    Case("add_inplace_int_from_bool", inplace(_iadd), (xi, b1)),
    Case("add_inplace_float_from_int", inplace(_iadd), (x, xi)),
    Case("add_inplace_alpha", inplace(lambda a, b: a.add_(b, alpha=-2)), (x, y)),
    Case("add_size_expr", lambda a: a + a.size(0) * 2, (x,)),
    # ---- sub / rsub
    Case("sub", lambda a, b: a - b, (x, y)),
    Case("sub_alpha", lambda a, b: torch.sub(a, b, alpha=0.5), (x, y)),
    Case("sub_alpha_int", lambda a, b: torch.sub(a, b, alpha=2), (xi, yi)),
    Case("sub_int", lambda a, b: a - b, (xi, xi32)),
    Case("sub_int_float_scalar", lambda a: a - 1.5, (xi,)),
    Case("sub_scalar_left", lambda a: 1 - a, (x,)),
    Case("rsub_int", lambda a: 10 - a, (xi,)),
    Case("rsub_float_from_int", lambda a: 0.5 - a, (xi32,)),
    Case("rsub_alpha", lambda a, b: torch.rsub(a, b, alpha=2), (x, y)),
    Case("rsub_tensor", lambda a, b: torch.rsub(a, b), (xi, x)),
    Case("rsub_scalar_alpha", lambda a: torch.rsub(a, 3, alpha=2), (xi,)),
    Case("subtract", lambda a, b: torch.subtract(a, b, alpha=2), (x, y)),
    Case("sub_inplace", inplace(_isub), (x, y)),
    Case("sub_inplace_scalar", inplace(lambda a: a.sub_(2)), (xi,)),
    # ---- mul
    Case("mul", lambda a, b: a * b, (x, y)),
    Case("mul_int", lambda a, b: a * b, (xi, yi)),
    Case("mul_int_float", lambda a, b: a * b, (xi32, x)),
    Case("mul_scalar", lambda a: a * 2, (xi32,)),
    Case("mul_int_tensor_float_scalar", lambda a: a * 0.25, (xi,)),
    Case("mul_bool_bool", lambda a, b: a * b, (b1, b2)),
    Case("mul_bool_float", lambda a, b: a * b, (b1, x)),
    Case("mul_bool_scalar", lambda a: a * 3, (b1,)),
    Case("mul_half", lambda a: a * 3, (xh,)),
    Case("multiply", lambda a, b: torch.multiply(a, b), (x, y)),
    Case("mul_inplace", inplace(lambda a: a.mul_(2)), (x,)),
    Case("mul_inplace_op", inplace(_imul), (xi, yi)),
    Case("mul_0d", lambda a, b: a * b[0], (xi32, s0i)),
    # ---- div
    Case("div", lambda a, b: a / b, (x, y)),
    Case("div_int", lambda a, b: a / b, (xi, yi)),
    Case("div_int_scalar", lambda a: a / 4, (xi,)),
    Case("div_bool", lambda a, b: a / b, (b1, yi)),
    Case("div_scalar_float", lambda a: a / 0.5, (x,)),
    Case("div_trunc_float", lambda a, b: torch.div(a, b, rounding_mode="trunc"), (x, y), opsets=DIV_OPSETS),
    Case("div_trunc_int", lambda a, b: torch.div(a, b, rounding_mode="trunc"), (xi, yi), opsets=DIV_OPSETS),
    Case("div_trunc_int32", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
         (xi32, nz(2, 3, 4, dtype=torch.int32)), opsets=DIV_OPSETS),
    Case("div_trunc_scalar", lambda a: torch.div(a, -3, rounding_mode="trunc"), (xi,), opsets=DIV_OPSETS),
    Case("div_floor_float", lambda a, b: torch.div(a, b, rounding_mode="floor"), (x, y), opsets=DIV_OPSETS),
    Case("div_floor_int", lambda a, b: torch.div(a, b, rounding_mode="floor"), (xi, yi), opsets=DIV_OPSETS),
    Case("div_floor_int_scalar", lambda a: torch.div(a, 4, rounding_mode="floor"), (xi,), opsets=DIV_OPSETS),
    Case("div_floor_int_float", lambda a: torch.div(a, 2.5, rounding_mode="floor"), (xi,), opsets=DIV_OPSETS),
    Case("divide", lambda a, b: torch.divide(a, b), (x, y)),
    Case("divide_floor", lambda a, b: torch.divide(a, b, rounding_mode="floor"), (xi, yi), opsets=DIV_OPSETS),
    Case("true_divide", lambda a, b: torch.true_divide(a, b), (xi, yi)),
    Case("div_inplace", inplace(_idiv), (x, y)),
    Case("div_inplace_mode", inplace(lambda a, b: a.div_(b, rounding_mode="floor")), (xi, yi), opsets=DIV_OPSETS),
    Case("div_half", lambda a: a / 3, (xh,)),
    # ---- floor_divide
    Case("floor_divide_float", lambda a, b: a // b, (x, y), opsets=DIV_OPSETS),
    Case("floor_divide_int", lambda a, b: a // b, (xi, yi), opsets=DIV_OPSETS),
    Case("floor_divide_int32", lambda a, b: torch.floor_divide(a, b), (xi32, nz(2, 3, 4, dtype=torch.int32)),
         opsets=DIV_OPSETS),
    Case("floor_divide_scalar", lambda a: a // -4, (xi,), opsets=DIV_OPSETS),
    Case("floor_divide_float_scalar", lambda a: a // 1.5, (xi,), opsets=DIV_OPSETS),
    Case("floor_divide_inplace", inplace(_ifloordiv), (xi, yi), opsets=DIV_OPSETS),
    # ---- remainder / fmod
    Case("remainder_float", lambda a, b: a % b, (x, y), opsets=DIV_OPSETS),
    Case("remainder_int", lambda a, b: a % b, (xi, yi), opsets=DIV_OPSETS),
    Case("remainder_int32_scalar", lambda a: a % -3, (xi32,), opsets=DIV_OPSETS),
    Case("remainder_int_float_scalar", lambda a: torch.remainder(a, 2.5), (xi,), opsets=DIV_OPSETS),
    Case("remainder_scalar_self", lambda a: torch.remainder(7, a), (yi,), opsets=DIV_OPSETS),
    Case("remainder_inplace", inplace(_imod), (xi, yi), opsets=DIV_OPSETS),
    Case("fmod_float", lambda a, b: torch.fmod(a, b), (x, y), opsets=DIV_OPSETS),
    Case("fmod_int", lambda a, b: torch.fmod(a, b), (xi, yi), opsets=DIV_OPSETS),
    Case("fmod_scalar", lambda a: torch.fmod(a, -3), (xi32,), opsets=DIV_OPSETS),
    Case("fmod_float_scalar", lambda a: torch.fmod(a, 1.5), (x,), opsets=DIV_OPSETS),
    Case("fmod_inplace", inplace(lambda a, b: a.fmod_(b)), (x, y), opsets=DIV_OPSETS),
    # ---- pow
    Case("pow_float_int_scalar", lambda a: a ** 2, (x,), opsets=POW_OPSETS),
    Case("pow_float_float_scalar", lambda a: a.abs() ** 0.5, (x,), opsets=POW_OPSETS),
    Case("pow_tensor_tensor", lambda a, b: a.abs() ** b, (x, y), opsets=POW_OPSETS),
    Case("pow_int_int_scalar", lambda a: a ** 3, (xi,), opsets=POW_OPSETS),
    Case("pow_int_tensor", lambda a, b: a ** b, (xi, ri(2, 3, 4, lo=0, hi=5)), opsets=POW_OPSETS),
    Case("pow_int32", lambda a: a ** 2, (xi32,), opsets=POW_OPSETS),
    Case("pow_int_float_scalar", lambda a: a.abs() ** 0.5, (xi,), opsets=POW_OPSETS),
    Case("pow_float_int_tensor", lambda a, b: a ** b, (x, ri(2, 3, 4, lo=0, hi=4)), opsets=POW_OPSETS),
    Case("pow_scalar_base", lambda a: 2 ** a, (x,), opsets=POW_OPSETS),
    Case("pow_scalar_base_int", lambda a: 2 ** a, (ri(2, 3, lo=0, hi=10),), opsets=POW_OPSETS),
    Case("pow_scalar_base_float_int", lambda a: 1.5 ** a, (ri(2, 3, lo=-3, hi=10),), opsets=POW_OPSETS),
    Case("pow_0d_exponent", lambda a, b: a ** b[0], (x.abs(), s0d), opsets=POW_OPSETS),
    Case("pow_double", lambda a: a ** 3, (xd,), opsets=POW_OPSETS),
    Case("pow_inplace", inplace(_ipow), (x.abs(), y), opsets=POW_OPSETS),
    Case("pow_inplace_scalar", inplace(lambda a: a.pow_(2)), (xi,), opsets=POW_OPSETS),
    Case("pow_half", lambda a: a ** 2 + a ** 0.5, (r(3, 4, scale=1.0).abs().half(),), opsets=POW_OPSETS),
    Case("pow_uint8", lambda a: a ** 2, (ri(3, 4, lo=0, hi=15, dtype=torch.uint8),), opsets=POW_OPSETS),
    Case("pow_int_large", lambda a: a ** 5, (ri(3, 4, lo=-1000, hi=1000),), opsets=POW_OPSETS),
    # ---- float_power
    Case("float_power", lambda a: torch.float_power(a.abs(), 2.5), (x,)),
    Case("float_power_int", lambda a: torch.float_power(a, 2), (xi,)),
    Case("float_power_tensor", lambda a, b: torch.float_power(a.abs(), b), (x, y)),
    Case("float_power_scalar_base", lambda a: torch.float_power(2, a), (xi32,)),
    # ---- bit shifts (integers)
    Case("lshift", lambda a: a << 2, (xi,), opsets=DIV_OPSETS),
    Case("rshift", lambda a: a >> 1, (xi,), opsets=DIV_OPSETS),
    Case("rshift_3", lambda a: a >> 3, (xi32,), opsets=DIV_OPSETS),
    Case("lshift_tensor", lambda a, b: a << b, (xi, ri(2, 3, 4, lo=0, hi=8)), opsets=DIV_OPSETS),
    Case("rshift_tensor", lambda a, b: a >> b, (xi * 37, ri(2, 3, 4, lo=0, hi=6)), opsets=DIV_OPSETS),
    Case("lshift_int8", lambda a: a << 3, (ri(3, 4, lo=-100, hi=100, dtype=torch.int8),), opsets=DIV_OPSETS),
    Case("rshift_uint8", lambda a: a >> 2, (ri(3, 4, lo=0, hi=255, dtype=torch.uint8),), opsets=DIV_OPSETS),
    Case("lshift_inplace", inplace(lambda a: a.__ilshift__(1)), (xi,), opsets=DIV_OPSETS),
    Case("rshift_inplace", inplace(lambda a: a.__irshift__(2)), (xi32,), opsets=DIV_OPSETS),
    Case("bitwise_left_shift", lambda a, b: torch.bitwise_left_shift(a, b), (xi, ri(2, 3, 4, lo=0, hi=4)),
         opsets=DIV_OPSETS),
    Case("bitwise_right_shift", lambda a: torch.bitwise_right_shift(a, 1), (xi,), opsets=DIV_OPSETS),
    Case("lshift_int32", lambda a: 1 << a, (ri(3, 4, lo=0, hi=20, dtype=torch.int32),), opsets=DIV_OPSETS),
    # ---- division edge cases
    Case("floor_divide_exact", lambda a: a // 0.1, (torch.tensor([1.0, 2.0, -1.0, 0.3, 5.5]),), opsets=DIV_OPSETS),
    Case("remainder_exact", lambda a: a % 0.1, (torch.tensor([1.0, 2.0, -1.0, 0.3, 5.5]),), opsets=DIV_OPSETS),
    Case("floor_divide_int8", lambda a, b: a // b, (ri(3, 4, dtype=torch.int8), nz(3, 4, dtype=torch.int8)),
         opsets=DIV_OPSETS),
    Case("remainder_int16", lambda a, b: a % b, (ri(3, 4, dtype=torch.int16), nz(3, 4, dtype=torch.int16)),
         opsets=DIV_OPSETS),
    Case("remainder_half", lambda a: a % 1.5, (r(3, 4).half(),), opsets=DIV_OPSETS, atol_scale=1e-3),
    Case("fmod_int_large", lambda a, b: torch.fmod(a, b), (ri(3, 4, lo=-10**12, hi=10**12), nz(3, 4) * 977),
         opsets=DIV_OPSETS),
    # ---- TorchScript number arithmetic
    Case("scalar_math", ScalarMath(), (torch.tensor([7, -3]), torch.tensor([2.5, 1.0])), script=True,
         opsets=DIV_OPSETS),
    Case("scalar_floor_neg", ScalarFloorNeg(), (torch.tensor([7, -7]),), script=True, opsets=DIV_OPSETS),
    # ---- neg
    Case("neg", lambda a: -a, (x,)),
    Case("neg_int", lambda a: torch.neg(a), (xi32,)),
    Case("negative", lambda a: torch.negative(a), (xi,)),
    Case("neg_inplace", inplace(lambda a: a.neg_()), (x,)),
    Case("neg_uint8", lambda a: -a, (ri(3, 4, lo=0, hi=200, dtype=torch.uint8),)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
