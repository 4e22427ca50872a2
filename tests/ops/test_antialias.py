"""Antialiased bilinear and bicubic interpolation below opset 18
(src/symbolics/antialias.cpp: a constant MatMul per axis with PyTorch's
weights); from 18 they are Resize with antialias (test_resize.py)."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape) * 3


BELOW = (9, 11, 13, 17)


def aa(mode, **kw):
    return lambda a: F.interpolate(a, mode=mode, antialias=True, **kw)


CASES = optest.enable_pt2([
    Case("aa_bilinear_down", aa("bilinear", scale_factor=0.5), (r(1, 2, 8, 8),), opsets=BELOW),
    Case("aa_bilinear_size", aa("bilinear", size=(5, 11)), (r(2, 3, 16, 7),), opsets=BELOW),
    Case("aa_bilinear_align", aa("bilinear", size=(4, 9), align_corners=True), (r(1, 1, 13, 6),), opsets=BELOW),
    Case("aa_bilinear_up", aa("bilinear", scale_factor=2.5), (r(1, 2, 3, 4),), opsets=BELOW),
    Case("aa_bicubic_down", aa("bicubic", scale_factor=(0.3, 0.5)), (r(1, 2, 20, 10),), opsets=BELOW),
    Case("aa_bicubic_size", aa("bicubic", size=(7, 3)), (r(2, 1, 15, 9).double(),), opsets=BELOW),
    Case("aa_bicubic_same_width", aa("bicubic", size=(6, 9)), (r(1, 2, 12, 9),), opsets=BELOW),
    # an output size computed at run time: below opset 18 the weights are constants for the example's
    # output size (issue 43: output_size was never read), so it is refused; from 18, Resize takes it
    Case("aa_bilinear_size_at_run_time",
         lambda a, b: F.interpolate(a, size=b.shape[-2:], mode="bilinear", antialias=True),
         (r(1, 2, 8, 8), r(1, 1, 5, 6)), opsets=(18,), error_below={9: "computed at run time", 17: "computed at run time"},
         extra=("--dynamic-axes", '{"b":[2,3]}', "--input-names", "a,b"), pt2=False,
         more_args=[(r(1, 2, 8, 8), r(1, 1, 3, 11))]),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
