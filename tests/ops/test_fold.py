"""Sliding windows as columns (src/symbolics/fold.cpp): im2col (nn.Unfold)
at every opset, col2im (nn.Fold) as one Col2Im from opset 18 and a grouped
ConvTranspose before."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=3.0):
    return torch.randn(*shape) * scale


CASES = [
    Case("im2col", nn.Unfold(2), (r(1, 2, 4, 4),)),
    Case("im2col_params", lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (r(2, 3, 5, 6),)),
    Case("im2col_unbatched", lambda x: F.unfold(x, 3, stride=2), (r(2, 7, 7),)),
    Case("col2im", nn.Fold((4, 5), 2), (r(2, 3 * 4, 12),), pt2=True),
    Case("col2im_params", lambda x: F.fold(x, (6, 7), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
         (r(2, 2 * 6, 24),), pt2=True),
    Case("col2im_unbatched", lambda x: F.fold(x, (5, 5), 3, stride=2), (r(2 * 9, 4),), pt2=True),
    # fold(unfold(x)) multiplies each pixel by the number of windows covering it
    Case("col2im_uncovered_rows", lambda x: F.fold(x, (7, 6), 3, stride=2), (r(1, 9, 6),), pt2=True),
    Case("col2im_double", lambda x: F.fold(x, (4, 5), 2, padding=(1, 0)), (r(2, 8, 20).double(),), pt2=True),
    Case("fold_of_unfold", lambda x: F.fold(F.unfold(x, 3, padding=1), (6, 6), 3, padding=1), (r(1, 2, 6, 6),),
         pt2=True),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
