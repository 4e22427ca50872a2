"""Complex tensors (src/symbolics/complex.cpp; their shape ops are in
test_complex_shape.py) inside models whose inputs and outputs are real:
complex values travel as (real, imag) pairs, through both frontends
(TorchScript and torch.export programs)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
var = torch.view_as_real
vac = torch.view_as_complex
nan, inf = float("nan"), float("inf")


def randn(*s, dtype=torch.float32):
    return torch.randn(*s, dtype=dtype)


def z(x):
    """A complex tensor from a real [..., 2] one."""
    return vac(x)


def seq(f):
    return nn.Sequential(optest.Lambda(f))


class Weighted(nn.Module):
    """Complex matmul with a complex weight (a buffer)."""

    def __init__(self, k, n, dtype=torch.complex64):
        super().__init__()
        self.register_buffer("w", torch.randn(k, n, dtype=dtype))

    def forward(self, x):
        return var(torch.matmul(vac(x), self.w))


a = randn(3, 4, 2)
b = randn(3, 4, 2)
a64 = randn(2, 5, 2, dtype=torch.float64)
b64 = randn(2, 5, 2, dtype=torch.float64)
edge = torch.tensor([[0.0, 0.0], [-0.0, 1.0], [3.0, -4.0], [1e30, 1e30], [-2.0, 0.0], [-2.0, -0.0],
                     [0.0, -3.0], [-1e-30, 2e-30], [inf, 1.0], [5.0, -inf]])

CASES = optest.enable_pt2([
    # making and unmaking
    Case("view_as_complex_real", lambda x: var(z(x)), (a,)),
    Case("complex", lambda x, y: var(torch.complex(x, y)), (randn(3, 4), randn(3, 4))),
    Case("complex_broadcast_double", lambda x, y: var(torch.complex(x, y)),
         (randn(3, 1, dtype=torch.float64), randn(4, dtype=torch.float64))),
    Case("polar", lambda r, t: var(torch.polar(r, t)), (randn(5).abs(), randn(5) * 3)),
    Case("real_imag", lambda x: torch.real(z(x)) * 2 + torch.imag(z(x)), (a,)),
    Case("real_of_real", lambda x: torch.real(x) + 1, (randn(4),)),
    # modulus, angle, sign
    Case("abs", lambda x: z(x).abs(), (a,)),
    Case("abs_edge", lambda x: z(x).abs(), (edge,)),
    Case("abs_double", lambda x: z(x).abs(), (a64,)),
    Case("angle", lambda x: torch.angle(z(x)), (a,)),
    Case("angle_edge", lambda x: torch.angle(z(x)), (edge,)),
    Case("angle_real", lambda x: torch.angle(x), (torch.tensor([-2.0, 0.0, 3.0, -inf, inf, nan, -0.0]),)),
    Case("angle_real_int", lambda x: torch.angle(x), (torch.tensor([-2, 0, 3]),)),
    Case("sgn", lambda x: var(torch.sgn(z(x))), (edge[:8],)),
    Case("isreal", lambda x: torch.isreal(z(x)), (torch.tensor([[1.0, 0.0], [2.0, 1.0], [0.0, -0.0]]),)),
    Case("isreal_real", lambda x: torch.isreal(x), (randn(2, 3),)),
    # conjugates
    Case("conj", lambda x: var(torch.conj(z(x)).resolve_conj()), (a,)),
    Case("conj_physical", lambda x: var(torch.conj_physical(z(x))), (a,)),
    Case("conj_mul", lambda x: var(z(x) * torch.conj(z(x))), (a,)),
    Case("_conj", seq(lambda x: var(torch._conj(z(x)).resolve_conj())), (a,), pt2=False),  # (torch.export keeps conj views)
    # arithmetic
    Case("mul", lambda x, y: var(z(x) * z(y)), (a, b)),
    Case("mul_real", lambda x, y: var(z(x) * y), (a, randn(4))),
    Case("mul_real_left", lambda x, y: var(y * z(x)), (a, randn(3, 1))),
    Case("mul_scalar", lambda x: var(z(x) * 2.5), (a,)),
    Case("mul_imag_unit", lambda x: var(z(x) * 1j), (a,), pt2=False),  # (a .pt2 archive has no complex numbers yet)
    Case("add_sub", lambda x, y: var(z(x) + z(y) - z(x) * 0.5), (a, b)),
    Case("add_alpha", lambda x, y: var(torch.add(z(x), z(y), alpha=3)), (a, b)),
    Case("add_real", lambda x, y: var(z(x) + y), (a, randn(3, 4))),
    Case("sub_from_real", lambda x, y: var(y - z(x)), (a, randn(4))),
    Case("add_scalar_double", lambda x: var(z(x) + 2), (a64,)),
    Case("neg", lambda x: var(-z(x)), (a,)),
    Case("div", lambda x, y: var(z(x) / z(y)), (a, b)),
    Case("div_double_large", lambda x, y: var(z(x) / z(y)), (a64 * 1e200, b64 * 1e200)),
    Case("div_real", lambda x, y: var(z(x) / y), (a, randn(4) + 3)),
    Case("div_by_complex_real_numerator", lambda x, y: var(y / z(x)), (a, randn(3, 4))),
    Case("reciprocal", lambda x: var(torch.reciprocal(z(x))), (a,)),
    Case("exp", lambda x: var(torch.exp(z(x))), (a,)),
    Case("exp_double", lambda x: var(torch.exp(z(x))), (a64,)),
    # matrix products
    Case("matmul", lambda x, y: var(torch.matmul(z(x), z(y).transpose(0, 1))), (a, b)),
    Case("mm", lambda x, y: var(torch.mm(z(x), z(y))), (a, randn(4, 2, 2))),
    Case("matmul_real", lambda x, y: var(torch.matmul(z(x), y.to(torch.complex64))), (a, randn(4, 2))),
    Case("bmm", lambda x, y: var(torch.bmm(z(x), z(y))), (randn(2, 3, 4, 2), randn(2, 4, 5, 2))),
    Case("bmm_double", lambda x, y: var(torch.bmm(z(x), z(y))),
         (randn(2, 3, 4, 2, dtype=torch.float64), randn(2, 4, 2, 2, dtype=torch.float64))),
    Case("matmul_weight", Weighted(4, 3), (a,)),
    Case("matmul_weight_double", Weighted(5, 2, torch.complex128), (a64,)),
    # reductions
    Case("sum_all", lambda x: var(z(x).sum()), (a,)),
    Case("sum_dim", lambda x: var(z(x).sum(-1)), (a,)),
    Case("sum_keepdim", lambda x: var(z(x).sum(0, keepdim=True)), (a64,)),
    Case("mean_dims", lambda x: var(z(x).mean((0, 1))), (randn(2, 3, 4, 2),)),
    Case("abs_sum", lambda x: z(x).abs().sum(), (a,)),
    # a computation in complex numbers from real in to real out
    Case("chain", lambda x, y: (torch.exp(z(x) * 0.3) / (z(y) + 2) * torch.conj(z(x))).abs() +
         torch.angle(z(y) - z(x)), (a, b)),
    # complex outputs: exported as their real view [..., 2]
    Case("complex_output", lambda x: z(x) * 2, (randn(3, 4, 2),)),
    Case("complex_outputs_mixed", lambda x, y: (z(x) * z(y), z(x).abs(), torch.conj(z(y))), (a, b)),
    Case("complex_output_double", lambda x: torch.polar(x.abs() + 1, x), (randn(5, dtype=torch.float64),)),
    # a Python complex number in the model (a constant of the program)
    Case("complex_scalar", lambda x: var(x * 1j + x * (0.5 - 2j)), (randn(2, 3),)),
    # what is refused
    Case("unsupported_op", lambda x: var(torch.sin(z(x))), (a,), opsets=(),
         error_below={17: "aten::sin on complex tensors is not supported"}, pt2=False),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['abs_edge', 'sgn', 'div_double_large'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
