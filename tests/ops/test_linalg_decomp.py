"""Householder QR (src/symbolics/linalg_decomp.cpp): LAPACK's conventions
(geqrf/dlarfg), so Q, R, the packed reflectors and tau are compared directly
with PyTorch."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def geqrf_then_product(a):
    q, tau = torch.geqrf(a)
    return torch.linalg.householder_product(q, tau)


a53, a35, a44 = r(5, 3), r(3, 5), r(4, 4)
b243 = r(2, 4, 3)

CASES = optest.enable_pt2([
    # QR: Q and R as LAPACK gives them
    Case("qr_tall", lambda a: tuple(torch.linalg.qr(a)), (a53,)),
    Case("qr_wide", lambda a: tuple(torch.linalg.qr(a)), (a35,)),
    Case("qr_square_double", lambda a: tuple(torch.linalg.qr(a)), (a44.double(),)),
    Case("qr_batched_complete", lambda a: tuple(torch.linalg.qr(a, mode="complete")), (b243,)),
    Case("qr_complete_double", lambda a: tuple(torch.linalg.qr(a, mode="complete")), (a53.double(),)),
    Case("qr_q_only", lambda a: torch.linalg.qr(a)[0], (a53,)),
    Case("qr_r", lambda a: torch.linalg.qr(a, mode="r")[1], (a53,)),
    Case("qr_r_both", lambda a: tuple(torch.linalg.qr(a, mode="r")), (a35,)),
    # a zero column below the diagonal (tau = 0) and a negative pivot
    Case("qr_trivial_columns", lambda a: tuple(torch.linalg.qr(a)),
         (torch.tensor([[-2.0, 1.0, 3.0], [0.0, 4.0, 1.0], [0.0, 0.0, -5.0]]),)),
    Case("qr_1x1", lambda a: tuple(torch.linalg.qr(a)), (torch.tensor([[-3.0]]),)),
    Case("qr_large", lambda a: tuple(torch.linalg.qr(a)), (r(4, 3) * 1e20,)),
    Case("geqrf", lambda a: tuple(torch.geqrf(a)), (a53,)),
    Case("geqrf_wide_batched_double", lambda a: tuple(torch.geqrf(a)), (r(2, 3, 5).double(),)),
    Case("householder_product", torch.linalg.householder_product, (a53, r(3))),
    Case("householder_product_fewer_tau", torch.linalg.householder_product, (r(2, 5, 4).double(), r(2, 2).double())),
    Case("orgqr", torch.orgqr, (a44, r(3))),
    # TorchScript records torch.orgqr as linalg_householder_product, torch.export as orgqr
    Case("orgqr_pt2", torch.orgqr, (r(2, 5, 3).double(), r(2, 3).double()), torchscript=False),
    Case("geqrf_householder_product", geqrf_then_product, (b243,)),
    Case("ormqr_left", lambda a, t, c: torch.ormqr(a, t, c), (a53, r(3), r(5, 2))),
    Case("ormqr_left_t", lambda a, t, c: torch.ormqr(a, t, c, transpose=True), (a53, r(3), r(5, 2))),
    Case("ormqr_right", lambda a, t, c: torch.ormqr(a, t, c, left=False), (r(4, 3).double(), r(3).double(), r(2, 4).double())),
    Case("ormqr_right_t_batched", lambda a, t, c: torch.ormqr(a, t, c, left=False, transpose=True),
         (r(2, 4, 4), r(2, 4), r(2, 3, 4))),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
