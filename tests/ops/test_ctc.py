"""CTC loss (src/symbolics/ctc.cpp): the alpha recursion as a Loop over time.
torch.export cannot capture ctc_loss (its output shape depends on data in
PyTorch's fake kernel), so these cases are TorchScript only."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def lp(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype).log_softmax(-1)


CASES = [
    Case("ctc_loss", lambda a, t: F.ctc_loss(a, t, [6, 5], [3, 2]), (lp(6, 2, 5), torch.tensor([[1, 2, 2], [3, 4, 0]])),
         min_opset=11, error_below={9: "supported from opset 11"}),
    Case("ctc_loss_tensors_none", lambda a, t, il, tl: F.ctc_loss(a, t, il, tl, reduction="none"),
         (lp(7, 3, 5), torch.tensor([1, 2, 2, 3, 1]), torch.tensor([7, 5, 6]), torch.tensor([3, 0, 2])), min_opset=11),
    Case("ctc_loss_sum_blank", lambda a, t, il, tl: F.ctc_loss(a, t, il, tl, blank=4, reduction="sum"),
         (lp(9, 2, 5), torch.tensor([[0, 1, 1, 3], [2, 2, 2, 0]]), torch.tensor([9, 8]), torch.tensor([4, 3])), min_opset=11),
    Case("ctc_loss_double", lambda a, t: F.ctc_loss(a, t, [12, 12], [4, 1]),
         (lp(12, 2, 6, dtype=torch.float64), torch.tensor([[1, 5, 5, 2], [3, 0, 0, 0]])), min_opset=11),
    # impossible alignments (target longer than the input allows): inf, or 0 with zero_infinity
    Case("ctc_loss_impossible", lambda a, t: F.ctc_loss(a, t, [3, 6], [3, 2], reduction="none"),
         (lp(6, 2, 4), torch.tensor([[1, 1, 1], [2, 3, 0]])), min_opset=11),
    Case("ctc_loss_zero_infinity", nn.CTCLoss(zero_infinity=True),
         (lp(6, 2, 4), torch.tensor([[1, 1, 1], [2, 3, 0]]), torch.tensor([3, 6]), torch.tensor([3, 2])), min_opset=11),
    Case("ctc_loss_unbatched", lambda a, t: F.ctc_loss(a, t, torch.tensor(8), torch.tensor(3)),
         (lp(8, 5), torch.tensor([1, 2, 1])), min_opset=11),
    Case("ctc_loss_long", lambda a, t, il, tl: F.ctc_loss(a, t, il, tl),
         (lp(50, 4, 20), torch.randint(1, 20, (4, 15)), torch.tensor([50, 40, 45, 30]), torch.tensor([15, 10, 1, 12])),
         min_opset=11),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
