"""Set operators (src/symbolics/sets.cpp: isin; the unique family is in
sort.cpp and checked here through both frontends)."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
nan = float("nan")
inf = float("inf")

FLOATS = torch.tensor([[1.0, nan, -0.0, 2.5], [inf, 3.0, 1.0, -inf]])
SET = torch.tensor([0.0, 1.0, nan, inf, 7.0])


def seq(f):
    return nn.Sequential(optest.Lambda(f))


CASES = optest.enable_pt2([
    Case("isin", lambda x, s: torch.isin(x, s), (FLOATS, SET)),
    Case("isin_invert", lambda x, s: torch.isin(x, s, invert=True), (FLOATS, SET)),
    Case("isin_assume_unique", lambda x, s: torch.isin(x, s, assume_unique=True), (FLOATS.double(), SET.double())),
    Case("isin_int_batched", lambda x, s: torch.isin(x, s), (torch.randint(-5, 5, (2, 3, 4)), torch.tensor([[0, 3], [-5, 9]]))),
    Case("isin_mixed_dtypes", lambda x, s: torch.isin(x, s), (torch.tensor([1, 2, 3]), torch.tensor([1.0, 2.5]))),
    Case("isin_int32", lambda x, s: torch.isin(x, s), (torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor([3, 4], dtype=torch.int32))),
    Case("isin_tensor_scalar", lambda x: torch.isin(x, 3.0), (torch.tensor([[1.0, 3.0], [3.0, -3.0]]),)),
    Case("isin_scalar_tensor", lambda s: torch.isin(2, s), (torch.tensor([1, 2, 3]),)),
    Case("isin_0d", lambda x, s: torch.isin(x, s), (torch.tensor(2.0), torch.tensor([2.0, 5.0]))),
    Case("isin_empty_set", lambda x, s: torch.isin(x, s), (torch.tensor([1.0, 2.0]), torch.zeros(0))),
    Case("isin_empty_elements", lambda x, s: torch.isin(x, s), (torch.zeros(0, 3), torch.tensor([1.0]))),

    # the unique family (registered in sort.cpp, ONNX Unique from opset 11)
    Case("unique_sorted", lambda x: torch.unique(x), (torch.tensor([3.0, 1.0, 2.0, 1.0, 3.0, -1.0]),), min_opset=11),
    Case("unique_inverse_counts", lambda x: torch.unique(x, return_inverse=True, return_counts=True),
         (torch.randint(0, 4, (3, 5)),), min_opset=11),
    # (sorted=False: test_sort.py)
    Case("tensor_unique", lambda x: x.unique(return_counts=True), (torch.tensor([2, 2, 7, 0, 7]),), min_opset=11),
    Case("unique_dim", lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True),
         (torch.tensor([[1, 2], [0, 5], [1, 2], [0, 1]]),), min_opset=11),
    Case("unique_dim1", lambda x: torch.unique(x, dim=1), (torch.tensor([[1.0, 0.0, 1.0], [2.0, 5.0, 2.0]]),), min_opset=11),
    Case("unique_consecutive", lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True),
         (torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]),), min_opset=11),
    Case("unique_consecutive_2d", lambda x: torch.unique_consecutive(x), (torch.tensor([[1.0, 1.0], [1.0, 2.0]]),),
         min_opset=11),
    Case("unique_consecutive_dim", lambda x: torch.unique_consecutive(x, return_counts=True, dim=0),
         (torch.tensor([[1, 2], [1, 2], [0, 1], [1, 2]]),), min_opset=11),
])

# NaNs are each their own value, last, in their order (ONNX Runtime's Unique
# drops them). PyTorch 1.13's kernel gives them index 0 and count 0: its
# reference is wrong there, so these run on torch 2.x only.
if int(torch.__version__.split(".")[0]) >= 2:
    CASES += optest.enable_pt2([
        Case("unique_nans", lambda x: torch.unique(x, return_inverse=True, return_counts=True),
             (torch.tensor([[nan, 1.0, inf], [nan, 3.0, 1.0]]),), min_opset=11),
        Case("unique_all_nan", lambda x: torch.unique(x, return_inverse=True, return_counts=True),
             (torch.tensor([nan, nan]).double(),), min_opset=11),
    ])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
