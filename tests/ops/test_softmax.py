"""softmax / log_softmax (src/symbolics/softmax.cpp)."""
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


x = r(2, 3, 4, 5)
x3 = r(3, 4, 5)
big = r(4, 6, scale=200.0)
xi = torch.randint(-5, 5, (3, 4))
v = torch.tensor([2.5])
OPSETS = (9, 11, 12, 13, 17)  # Softmax works on any axis from opset 13

CASES = []
for name, fn in [("softmax", F.softmax), ("log_softmax", F.log_softmax)]:
    CASES += [
        Case(f"{name}_last", lambda a, fn=fn: fn(a, -1), (x,), opsets=OPSETS),
        Case(f"{name}_last_pos", lambda a, fn=fn: fn(a, 3), (x,), opsets=OPSETS),
        Case(f"{name}_dim0", lambda a, fn=fn: fn(a, 0), (x3,), opsets=OPSETS),
        Case(f"{name}_dim1", lambda a, fn=fn: fn(a, 1), (x,), opsets=OPSETS),
        Case(f"{name}_dim_neg2", lambda a, fn=fn: fn(a, -2), (x,), opsets=OPSETS),
        Case(f"{name}_1d", lambda a, fn=fn: fn(a, 0), (r(7),), opsets=OPSETS),
        Case(f"{name}_2d_dim0", lambda a, fn=fn: fn(a, 0), (big,), opsets=OPSETS),
        Case(f"{name}_large", lambda a, fn=fn: fn(a, -1), (big,), opsets=OPSETS),
        Case(f"{name}_dtype", lambda a, fn=fn: fn(a, 1, dtype=torch.float64), (x3,), opsets=OPSETS),
        Case(f"{name}_double", lambda a, fn=fn: fn(a, -1), (x3.double(),), opsets=OPSETS),
        Case(f"{name}_int_dtype", lambda a, fn=fn: fn(a, 0, dtype=torch.float32), (xi,), opsets=OPSETS),
        Case(f"{name}_0d", lambda a, fn=fn: fn(a[0], 0), (v,), opsets=OPSETS),
    ]
CASES += [
    Case("softmax_module", nn.Softmax(dim=1), (x,), opsets=OPSETS),
    Case("softmax2d_module", nn.Softmax2d(), (x,), opsets=OPSETS),
    Case("log_softmax_module", nn.LogSoftmax(dim=-1), (x3,), opsets=OPSETS),
    Case("softmax_method", lambda a: a.softmax(2), (x,), opsets=OPSETS),
    Case("log_softmax_method", lambda a: a.log_softmax(0, torch.float64), (x3,), opsets=OPSETS),
    Case("_softmax", lambda a: torch._softmax(a, 1, False), (x3,), opsets=OPSETS),
    Case("_softmax_last", lambda a: torch._softmax(a, -1, False), (x3,), opsets=OPSETS),
    Case("_log_softmax", lambda a: torch._log_softmax(a, 0, False), (x3,), opsets=OPSETS),
    Case("_log_softmax_last", lambda a: torch._log_softmax(a, 2, False), (x3,), opsets=OPSETS),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
