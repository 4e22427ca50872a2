"""Matrix products (src/symbolics/linear.cpp)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def ri(*shape):
    return torch.randint(-5, 6, shape)


CASES = [
    # ---- linear
    Case("linear_2d", nn.Linear(4, 3), (r(5, 4),)),
    Case("linear_2d_nobias", nn.Linear(4, 3, bias=False), (r(5, 4),)),
    Case("linear_3d", nn.Linear(4, 6), (r(2, 5, 4),)),
    Case("linear_4d_nobias", nn.Linear(3, 2, bias=False), (r(2, 3, 4, 3),)),
    Case("linear_1d_input", nn.Linear(4, 3), (r(4),)),
    Case("linear_inputs", lambda x, w, b: F.linear(x, w, b), (r(2, 3, 4), r(5, 4), r(5))),
    Case("linear_int", lambda x, w, b: F.linear(x, w, b), (ri(3, 4), ri(2, 4), ri(2))),
    Case("linear_int_3d", lambda x, w: F.linear(x, w), (ri(2, 3, 4), ri(2, 4))),
    Case("linear_double", lambda x, w, b: F.linear(x, w, b), (r(3, 4).double(), r(2, 4).double(), r(2).double())),
    # ---- addmm: beta * self + alpha * (mat1 @ mat2)
    Case("addmm", lambda s, a, b: torch.addmm(s, a, b), (r(3, 5), r(3, 4), r(4, 5))),
    Case("addmm_broadcast", lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=2.0), (r(5), r(3, 4), r(4, 5))),
    Case("addmm_scalar_self", lambda s, a, b: torch.addmm(s, a, b, alpha=-1), (r(()), r(3, 4), r(4, 5))),
    # beta=0: self is ignored, even NaN (inputs above 4096 elements, so that the example run stays on meta)
    Case("addmm_beta0_nan", lambda s, a, b: torch.addmm(torch.log(-s.abs() - 1), a, b, beta=0), (r(64, 65), r(64, 4),
                                                                                          r(4, 65))),
    Case("addmm_int", lambda s, a, b: torch.addmm(s, a, b, beta=2, alpha=3), (ri(3, 5), ri(3, 4), ri(4, 5))),
    Case("addmm_method_inplace", lambda s, a, b: (s * 1).addmm_(a, b, beta=1.5), (r(3, 5), r(3, 4), r(4, 5))),
    # ---- baddbmm / addbmm / addmv
    Case("baddbmm", lambda s, a, b: torch.baddbmm(s, a, b), (r(2, 3, 5), r(2, 3, 4), r(2, 4, 5))),
    Case("baddbmm_scaled", lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=-2.0), (r(3, 1), r(2, 3, 4),
                                                                                          r(2, 4, 5))),
    Case("baddbmm_beta0_nan", lambda s, a, b: torch.baddbmm(torch.log(-s.abs() - 1), a, b, beta=0.0),
         (r(2, 40, 60), r(2, 40, 4), r(2, 4, 60))),
    Case("baddbmm_int", lambda s, a, b: torch.baddbmm(s, a, b, beta=2, alpha=3), (ri(2, 3, 5), ri(2, 3, 4),
                                                                                  ri(2, 4, 5))),
    Case("addbmm", lambda s, a, b: torch.addbmm(s, a, b), (r(3, 5), r(4, 3, 2), r(4, 2, 5))),
    Case("addbmm_scaled", lambda s, a, b: torch.addbmm(s, a, b, beta=2.0, alpha=0.5), (r(5), r(4, 3, 2), r(4, 2, 5))),
    Case("addbmm_beta0_nan", lambda s, a, b: torch.addbmm(torch.log(-s.abs() - 1), a, b, beta=0), (r(64, 65), r(4, 64, 2),
                                                                                           r(4, 2, 65))),
    Case("addbmm_int", lambda s, a, b: torch.addbmm(s, a, b, alpha=2), (ri(3, 5), ri(4, 3, 2), ri(4, 2, 5))),
    Case("addmv", lambda s, m, v: torch.addmv(s, m, v), (r(3), r(3, 4), r(4))),
    Case("addmv_scaled", lambda s, m, v: torch.addmv(s, m, v, beta=-1.0, alpha=3.0), (r(()), r(3, 4), r(4))),
    Case("addmv_beta0_nan", lambda s, m, v: torch.addmv(torch.log(-s.abs() - 1), m, v, beta=0), (r(4100), r(4100, 4),
                                                                                             r(4))),
    Case("addmv_int", lambda s, m, v: torch.addmv(s, m, v, beta=3), (ri(3), ri(3, 4), ri(4))),
    # ---- matmul and friends
    Case("matmul_2d", torch.matmul, (r(3, 4), r(4, 5))),
    Case("matmul_1d_1d", torch.matmul, (r(4), r(4))),
    Case("matmul_1d_2d", torch.matmul, (r(4), r(4, 5))),
    Case("matmul_2d_1d", torch.matmul, (r(3, 4), r(4))),
    Case("matmul_1d_3d", torch.matmul, (r(4), r(2, 4, 5))),
    Case("matmul_3d_1d", torch.matmul, (r(2, 3, 4), r(4))),
    Case("matmul_batched", torch.matmul, (r(2, 3, 4), r(2, 4, 5))),
    Case("matmul_broadcast", torch.matmul, (r(2, 1, 3, 4), r(5, 4, 2))),
    Case("matmul_3d_2d", torch.matmul, (r(2, 3, 4), r(4, 5))),
    Case("matmul_int", torch.matmul, (ri(2, 3, 4), ri(4, 5))),
    Case("matmul_operator", lambda a, b: a @ b, (r(3, 4), r(2, 4, 3))),
    Case("mm", torch.mm, (r(3, 4), r(4, 5))),
    Case("mm_int", torch.mm, (ri(3, 4), ri(4, 5))),
    Case("bmm", torch.bmm, (r(2, 3, 4), r(2, 4, 5))),
    Case("bmm_int", torch.bmm, (ri(2, 3, 4), ri(2, 4, 5))),
    Case("mv", torch.mv, (r(3, 4), r(4))),
    Case("dot", torch.dot, (r(5), r(5))),
    Case("dot_int", torch.dot, (ri(5), ri(5))),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
