"""Scans and cumulative operators (src/symbolics/scan.cpp), through both
frontends (TorchScript and torch.export programs)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf = float("inf")

CASES = optest.enable_pt2([
    Case("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), (torch.randn(2, 5, 3) * 10,)),
    Case("logcumsumexp_neg_inf", lambda x: torch.logcumsumexp(x, 0), (torch.tensor([-inf, -inf, 1.0, -inf, 80.0]),)),
    Case("logcumsumexp_double", lambda x: torch.logcumsumexp(x, -1), (torch.randn(3, 4).double() * 100,)),
    Case("logcumsumexp_0d", lambda x: torch.logcumsumexp(x, 0), (torch.tensor(2.5),)),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
