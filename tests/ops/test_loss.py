"""Loss functions (src/symbolics/loss.cpp)."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape, scale=1.0):
    return torch.randn(*shape) * scale


N, C = 5, 4
logits = r(N, C, scale=2.0)
logp = F.log_softmax(logits, 1)
target = torch.tensor([0, 3, 1, 1, 2])
target_ignored = torch.tensor([0, 3, -100, 1, 2])
target_ignore1 = torch.tensor([1, 3, 1, 0, 2])
w = torch.rand(C) + 0.5
logits4 = r(2, C, 3, 2)
target4 = torch.randint(0, C, (2, 3, 2))
target4[0, 1, 1] = 2
probs = torch.softmax(r(N, C), 1)
x34, y34 = r(3, 4), r(3, 4)
p34 = torch.rand(3, 4) * 0.98 + 0.01
t34 = torch.rand(3, 4)
sign3 = torch.tensor([1.0, -1.0, 1.0])
sign34 = torch.sign(r(3, 4))
# Class lists ended by -1 (later entries ignored), one with a repeated class, one full, one empty.
multilabel = torch.tensor([[3, 0, -1, 1], [1, -1, 2, 2], [2, 2, -1, 0], [0, 1, 2, 3], [-1, 0, 1, 2]])

REDUCTIONS = ("none", "mean", "sum")
NLL = dict(min_opset=12, error_below={11: "supported from opset 12"})


def nll_cases():
    cases = []
    for red in REDUCTIONS:
        cases += [
            Case(f"nll_{red}", lambda x, t, red=red: F.nll_loss(x, t, reduction=red), (logp, target), **NLL),
            Case(f"nll_weight_{red}", lambda x, t, red=red: F.nll_loss(x, t, weight=w, reduction=red),
                 (logp, target), min_opset=12),
            Case(f"nll_ignore_{red}", lambda x, t, red=red: F.nll_loss(x, t, weight=w, reduction=red),
                 (logp, target_ignored), min_opset=12),
            Case(f"cross_entropy_{red}", lambda x, t, red=red: F.cross_entropy(x, t, reduction=red),
                 (logits, target), **NLL),
            Case(f"cross_entropy_smooth_{red}",
                 lambda x, t, red=red: F.cross_entropy(x, t, reduction=red, label_smoothing=0.2),
                 (logits, target_ignored), min_opset=12),
            Case(f"cross_entropy_smooth_weight_{red}",
                 lambda x, t, red=red: F.cross_entropy(x, t, weight=w, reduction=red, ignore_index=1,
                                                       label_smoothing=0.1),
                 (logits, target_ignore1), min_opset=12),
            Case(f"cross_entropy_probs_{red}", lambda x, t, red=red: F.cross_entropy(x, t, reduction=red),
                 (logits, probs), min_opset=12),
            Case(f"cross_entropy_probs_weight_smooth_{red}",
                 lambda x, t, red=red: F.cross_entropy(x, t, weight=w, reduction=red, label_smoothing=0.3),
                 (logits4, torch.softmax(r(2, C, 3, 2), 1)), min_opset=12),
        ]
    return cases


def pointwise_cases():
    cases = []
    for red in REDUCTIONS:
        cases += [
            Case(f"bce_logits_{red}", lambda x, y, red=red: F.binary_cross_entropy_with_logits(x, y, reduction=red),
                 (r(3, 4, scale=5.0), t34)),
            Case(f"bce_{red}", lambda x, y, red=red: F.binary_cross_entropy(x, y, reduction=red), (p34, t34)),
            Case(f"kl_div_{red}", lambda x, y, red=red: F.kl_div(x, y, reduction=red), (x34, t34)),
            Case(f"mse_{red}", lambda x, y, red=red: F.mse_loss(x, y, reduction=red), (x34, y34)),
            Case(f"l1_{red}", lambda x, y, red=red: F.l1_loss(x, y, reduction=red), (x34, y34)),
            Case(f"smooth_l1_{red}", lambda x, y, red=red: F.smooth_l1_loss(x, y, reduction=red), (x34, y34)),
            Case(f"huber_{red}", lambda x, y, red=red: F.huber_loss(x, y, reduction=red), (x34, y34)),
            Case(f"soft_margin_{red}", lambda x, y, red=red: F.soft_margin_loss(x, y, reduction=red),
                 (x34, sign34)),
            Case(f"margin_ranking_{red}",
                 lambda a, b, y, red=red: F.margin_ranking_loss(a, b, y, margin=0.3, reduction=red),
                 (r(3), r(3), sign3)),
            Case(f"hinge_embedding_{red}",
                 lambda x, y, red=red: F.hinge_embedding_loss(x, y, reduction=red), (x34, sign34)),
            Case(f"cosine_embedding_{red}",
                 lambda a, b, y, red=red: F.cosine_embedding_loss(a, b, y, margin=0.2, reduction=red),
                 (x34[:3], y34[:3], sign3)),
            Case(f"poisson_nll_{red}", lambda x, y, red=red: F.poisson_nll_loss(x, y, reduction=red),
                 (x34, t34 * 3)),
            Case(f"triplet_{red}", lambda a, p, n, red=red: F.triplet_margin_loss(a, p, n, reduction=red),
                 (x34, y34, r(3, 4))),
            Case(f"multilabel_margin_{red}", lambda x, t, red=red: F.multilabel_margin_loss(x, t, reduction=red),
                 (logits, multilabel)),
            Case(f"multi_margin_{red}", lambda x, t, red=red: F.multi_margin_loss(x, t, reduction=red),
                 (logits, target)),
        ]
    return cases


CASES = nll_cases() + pointwise_cases() + [
    # nll_loss variants
    Case("nll_4d", lambda x, t: F.nll_loss(x, t), (F.log_softmax(logits4, 1), target4), min_opset=12),
    Case("nll_4d_none_ignore", lambda x, t: F.nll_loss(x, t, reduction="none", ignore_index=2),
         (F.log_softmax(logits4, 1), target4), min_opset=12),
    Case("nll_unbatched", lambda x: F.nll_loss(x, torch.tensor(2)), (logp[0],), min_opset=12),
    Case("nll_unbatched_none", lambda x: F.nll_loss(x, torch.tensor(1), reduction="none"), (logp[0],),
         min_opset=12),
    Case("nll_loss_aten", lambda x, t: torch._C._nn.nll_loss(x, t, w, 2, 1), (logp, target), **NLL),
    Case("nll_loss2d_aten", lambda x, t: torch._C._nn.nll_loss2d(x, t, None, 1, -100),
         (F.log_softmax(logits4, 1), target4), **NLL),
    Case("cross_entropy_double", lambda x, t: F.cross_entropy(x, t, weight=w.double(), label_smoothing=0.1),
         (logits.double(), target), min_opset=12),
    Case("cross_entropy_probs_double", lambda x, p: F.cross_entropy(x, p), (logits.double(), probs.double()),
         min_opset=12),
    Case("nll_double", lambda x, t: F.nll_loss(x, t), (logp.double(), target), min_opset=12),
    # cross entropy variants
    Case("cross_entropy_4d", lambda x, t: F.cross_entropy(x, t, weight=w), (logits4, target4), min_opset=12),
    Case("cross_entropy_4d_smooth", lambda x, t: F.cross_entropy(x, t, ignore_index=2, label_smoothing=0.25),
         (logits4, target4), min_opset=12),
    Case("cross_entropy_unbatched", lambda x: F.cross_entropy(x, torch.tensor(3)), (logits[0],), min_opset=12),
    Case("cross_entropy_unbatched_smooth_none",
         lambda x: F.cross_entropy(x, torch.tensor(3), reduction="none", label_smoothing=0.1), (logits[0],),
         min_opset=12),
    Case("cross_entropy_unbatched_probs", lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
         (logits[0], probs[0]), min_opset=12),
    # binary cross entropy
    Case("bce_logits_weight", lambda x, y: F.binary_cross_entropy_with_logits(x, y, weight=w),
         (r(3, 4, scale=5.0), t34)),
    Case("bce_logits_pos_weight", lambda x, y: F.binary_cross_entropy_with_logits(
        x, y, pos_weight=torch.tensor([0.5, 1.0, 2.0, 3.0]), reduction="sum"), (r(3, 4, scale=5.0), t34)),
    Case("bce_logits_both_weights", lambda x, y, wt, pw: F.binary_cross_entropy_with_logits(
        x, y, weight=wt, pos_weight=pw, reduction="none"), (r(3, 4, scale=30.0), t34, torch.rand(3, 1), torch.rand(4))),
    Case("bce_logits_double", lambda x, y: F.binary_cross_entropy_with_logits(x, y), (x34.double(), t34.double())),
    # (F.binary_cross_entropy with a weight does not trace: call the operator)
    Case("bce_weight", lambda x, y, wt: torch._C._nn.binary_cross_entropy(x, y, wt, 1), (p34, t34, torch.rand(4))),
    Case("bce_weight_sum", lambda x, y: torch._C._nn.binary_cross_entropy(x, y, w, 2), (p34, t34)),
    Case("bce_clamped_log", lambda x, y: F.binary_cross_entropy(x, y, reduction="none"),
         (torch.tensor([0.0, 1.0, 0.5, 1.0]), torch.tensor([1.0, 0.0, 0.5, 1.0]))),
    # kl_div
    Case("kl_div_log_target", lambda x, y: F.kl_div(x, y, reduction="sum", log_target=True), (x34, y34)),
    Case("kl_div_log_target_none", lambda x, y: F.kl_div(x, y, reduction="none", log_target=True), (x34, y34)),
    Case("kl_div_batchmean", lambda x, y: F.kl_div(x, y, reduction="batchmean"), (x34, t34)),
    Case("kl_div_zero_target", lambda x, y: F.kl_div(x, y, reduction="none"),
         (x34[0], torch.tensor([0.0, 0.5, 0.0, 0.25]))),
    # regression
    Case("mse_broadcast", lambda x, y: F.mse_loss(x, y), (x34, r(4))),
    Case("l1_double", lambda x, y: F.l1_loss(x, y), (x34.double(), y34.double())),
    Case("smooth_l1_beta", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="none"), (x34, y34)),
    Case("smooth_l1_beta0", lambda x, y: F.smooth_l1_loss(x, y, beta=0.0), (x34, y34)),
    Case("huber_delta", lambda x, y: F.huber_loss(x, y, delta=0.4, reduction="none"), (x34, y34)),
    # margins and embeddings
    Case("margin_ranking_default", lambda a, b, y: F.margin_ranking_loss(a, b, y), (r(3), r(3), sign3)),
    Case("hinge_embedding_margin", lambda x, y: F.hinge_embedding_loss(x, y, margin=0.5, reduction="none"),
         (x34, sign34)),
    Case("cosine_embedding_1d", lambda a, b: F.cosine_embedding_loss(a, b, torch.tensor(-1.0), reduction="none"),
         (r(4), r(4))),
    Case("poisson_nll_args", lambda x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, eps=1e-4),
         (p34 * 4, t34 * 3)),
    Case("poisson_nll_full_none", lambda x, y: F.poisson_nll_loss(x, y, full=True, reduction="none"),
         (x34, torch.tensor([0.0, 0.5, 1.0, 2.5]))),
    Case("triplet_args", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5, p=1.0, eps=1e-3, swap=True),
         (x34, y34, r(3, 4))),
    Case("triplet_p3_1d", lambda a, p, n: F.triplet_margin_loss(a, p, n, p=3.0, reduction="none"),
         (r(4), r(4), r(4))),
    Case("multi_margin_p2", lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.7), (logits, target)),
    Case("multi_margin_weight", lambda x, t: F.multi_margin_loss(x, t, weight=w, reduction="none"),
         (logits, target)),
    # double precision through the decompositions
    Case("bce_double", lambda x, y: F.binary_cross_entropy(x, y), (p34.double(), t34.double())),
    Case("kl_div_double", lambda x, y: F.kl_div(x, y, reduction="sum"), (x34.double(), t34.double())),
    Case("huber_double", lambda x, y: F.huber_loss(x, y, delta=0.5), (x34.double(), y34.double())),
    Case("poisson_nll_double", lambda x, y: F.poisson_nll_loss(x, y, full=True), (x34.double(), t34.double() * 3)),
    Case("margin_ranking_double", lambda a, b, y: F.margin_ranking_loss(a, b, y), (r(3).double(), r(3).double(),
                                                                                     sign3.double())),
    Case("hinge_embedding_double", lambda x, y: F.hinge_embedding_loss(x, y), (x34.double(), sign34.double())),
    Case("cosine_embedding_double", lambda a, b, y: F.cosine_embedding_loss(a, b, y),
         (x34.double(), y34.double(), sign3.double())),
    Case("triplet_double", lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
         (x34.double(), y34.double(), r(3, 4).double())),
    Case("multi_margin_double", lambda x, t: F.multi_margin_loss(x, t, p=2, weight=w.double()),
         (logits.double(), target)),
    Case("multilabel_margin_double", lambda x, t: F.multilabel_margin_loss(x, t), (logits.double(), multilabel)),
    Case("multi_margin_1d", lambda x: F.multi_margin_loss(x, torch.tensor([2]), reduction="none"), (logits[0],)),
    Case("multilabel_margin_1d", lambda x: F.multilabel_margin_loss(x, torch.tensor([2, 0, -1, 3]), reduction="none"),
         (logits[0],)),
    Case("multilabel_margin_1d_mean", lambda x, t: F.multilabel_margin_loss(x, t), (logits[0], multilabel[0])),
    Case("multi_margin_1d_scalar_target", lambda x: F.multi_margin_loss(x, torch.tensor(1), reduction="none"),
         (logits[0],)),
    Case("soft_margin_double", lambda x, y: F.soft_margin_loss(x, y), (r(3, 4, scale=40.0).double(), sign34.double())),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
