"""Grouped matrix products (src/symbolics/grouped_mm.cpp): aten::_grouped_mm in its four layouts (offs: each
group's end, int32 as PyTorch wants it; groups that are empty, dims of multiples of 4 as its CPU kernel wants),
and transformers' custom op transformers::grouped_mm_fallback (mixtures of experts), whose rows no group
covers are zero."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def offs(*ends):
    return torch.tensor(ends, dtype=torch.int32)


CASES = []
# (torch.export's meta kernel of _grouped_mm takes bfloat16 only, which ONNX Runtime's CPU MatMul does not:
# the .pt2 frontend meets transformers' custom op instead, below)
if hasattr(torch, "_grouped_mm"):
    CASES += [
        # 2-D x 3-D: rows per expert (an empty group in the middle)
        Case("grouped_mm_2d_3d", lambda a, b, o: torch._grouped_mm(a, b, offs=o),
             (torch.randn(8, 4), torch.randn(3, 4, 8), offs(3, 3, 8)), min_opset=11,
             more_args=[(torch.randn(8, 4), torch.randn(3, 4, 8), offs(1, 6, 8))]),
        # 3-D x 2-D: columns per group
        Case("grouped_mm_3d_2d", lambda a, b, o: torch._grouped_mm(a, b, offs=o),
             (torch.randn(3, 8, 4), torch.randn(4, 12), offs(4, 8, 12)), min_opset=11),
        # 2-D x 2-D: groups along K, one product each
        Case("grouped_mm_2d_2d", lambda a, b, o: torch._grouped_mm(a, b, offs=o),
             (torch.randn(8, 8), torch.randn(8, 4), offs(4, 4, 8)), min_opset=11),
        # 3-D x 3-D: batched
        Case("grouped_mm_3d_3d", lambda a, b: torch._grouped_mm(a, b), (torch.randn(3, 8, 4), torch.randn(3, 4, 4)),
             min_opset=11),
    ]

try:  # transformers registers its custom op at import
    import transformers.integrations.moe  # noqa: F401
    HAVE_FALLBACK = hasattr(torch.ops, "transformers") and hasattr(torch.ops.transformers, "grouped_mm_fallback")
except Exception:
    HAVE_FALLBACK = False
if HAVE_FALLBACK:
    CASES += [
        # the last row belongs to no expert: zero
        Case("grouped_mm_fallback", lambda a, b, o: torch.ops.transformers.grouped_mm_fallback(a, b, o),
             (torch.randn(7, 4), torch.randn(3, 4, 5), torch.tensor([2, 5, 6])), min_opset=11, torchscript=False),
    ]


results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
