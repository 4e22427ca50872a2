"""torch.special's gamma family (src/symbolics/special.cpp): lgamma, digamma,
polygamma, mvlgamma, Hurwitz zeta and the incomplete gamma functions, through
both frontends (TorchScript and torch.export programs).

Each range of a function is its own case, so the harness's tolerance
(1e-4 * (1 + |torch|) per element) is relative to values of one magnitude."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402
from special_inputs import lin, logs, seq, t  # noqa: E402,F401

torch.manual_seed(0)
inf, nan = float("inf"), float("nan")
S = torch.special


# negative non-integers, some within 1e-3 of a pole
NEG = torch.cat([lin(-9.95, -0.05, 40), t(-3 + 1e-3, -3 - 1e-3, -1e-4, -20.5, -100.25, -7.999)])
NEG64 = NEG.double()
POLES = t(0.0, -0.0, -1.0, -2.0, -7.0, inf, -inf, nan)

CASES = optest.enable_pt2([
    # lgamma / gammaln
    Case("lgamma_small", lambda x: torch.lgamma(x), (torch.cat([lin(1e-3, 3.0), t(1.0, 2.0, 1e-30, 0.5)]),)),
    Case("lgamma_mid", lambda x: torch.lgamma(x), (lin(3.0, 40.0),)),
    Case("lgamma_large", lambda x: torch.lgamma(x), (logs(2, 30),)),
    Case("lgamma_huge", lambda x: torch.lgamma(x), (t(1e36, 3e38, 1e37),)),
    Case("lgamma_neg", lambda x: torch.lgamma(x), (NEG,)),
    Case("lgamma_poles", lambda x: torch.lgamma(x), (POLES,)),
    Case("lgamma_double", lambda x: torch.lgamma(x), (torch.cat([lin(-9.9, 30, 80, torch.float64), NEG64]),)),
    Case("lgamma_double_large", lambda x: torch.lgamma(x), (logs(2, 300, dtype=torch.float64),)),
    Case("lgamma_int", lambda x: torch.lgamma(x), (torch.arange(1, 20),)),
    Case("gammaln_2d", seq(lambda x: S.gammaln(x)), (torch.rand(3, 4) * 10,)),
    Case("lgamma_0d", lambda x: torch.lgamma(x), (torch.tensor(0.25),)),
    Case("lgamma_empty", lambda x: torch.lgamma(x), (torch.zeros(0, 3),)),
    # digamma / psi
    Case("digamma_small", lambda x: torch.digamma(x), (torch.cat([lin(0.05, 3.0), t(1.4616321449683622)]),)),
    Case("digamma_tiny", lambda x: torch.digamma(x), (logs(-30, -2),)),
    Case("digamma_large", lambda x: torch.digamma(x), (torch.cat([lin(3.0, 40.0), logs(2, 38)]),)),
    Case("digamma_neg", lambda x: torch.digamma(x), (NEG,)),
    Case("digamma_poles", lambda x: torch.digamma(x), (POLES,)),
    Case("digamma_double", lambda x: torch.digamma(x), (torch.cat([lin(-9.9, 30, 80, torch.float64), NEG64]),)),
    Case("digamma_int", lambda x: torch.digamma(x), (torch.arange(1, 12),)),
    Case("special_digamma", seq(lambda x: S.digamma(x)), (torch.rand(2, 3) * 5 + 0.1,)),
    Case("special_psi", seq(lambda x: S.psi(x)), (torch.rand(4) * 5 + 0.1,)),
    # polygamma
    Case("polygamma_0", lambda x: torch.polygamma(0, x), (lin(0.1, 20.0),)),
    Case("polygamma_1", lambda x: torch.polygamma(1, x), (lin(0.1, 20.0),)),
    Case("polygamma_1_large", lambda x: torch.polygamma(1, x), (logs(1, 30),)),
    Case("polygamma_1_neg", lambda x: torch.polygamma(1, x), (lin(-4.83, -0.17, 24),)),
    Case("polygamma_2", lambda x: torch.polygamma(2, x), (lin(0.5, 20.0),)),
    Case("polygamma_2_neg", lambda x: torch.polygamma(2, x), (lin(-3.7, -0.3, 18),)),
    Case("polygamma_3", lambda x: torch.polygamma(3, x), (lin(0.5, 30.0),)),
    Case("polygamma_5_double", lambda x: torch.polygamma(5, x), (lin(0.5, 30.0, dtype=torch.float64),)),
    Case("special_polygamma", seq(lambda x: S.polygamma(4, x)), (torch.rand(2, 5) * 5 + 1,)),
    # mvlgamma / multigammaln
    Case("mvlgamma_1", lambda x: torch.mvlgamma(x, 1), (lin(0.1, 30.0),)),
    Case("mvlgamma_3", lambda x: torch.mvlgamma(x, 3), (torch.rand(2, 3) * 10 + 1.01,)),
    Case("multigammaln_double", seq(lambda x: S.multigammaln(x, 4)), (lin(1.6, 50.0, dtype=torch.float64),)),
    Case("mvlgamma_0d", lambda x: torch.mvlgamma(x, 2), (torch.tensor(3.5),)),
    # Hurwitz zeta
    Case("zeta", seq(lambda x, q: S.zeta(x, q)), (lin(1.5, 10.0, 20).unsqueeze(1), lin(0.1, 20.0, 7))),
    Case("zeta_large_s", seq(lambda x, q: S.zeta(x, q)), (t(20.0, 50.0, 100.0, 300.0, 30.0), t(0.5, 1.0, 2.0, 0.9, 50.0))),
    Case("zeta_neg_q", seq(lambda x, q: S.zeta(x, q)), (t(2.0, 3.0, 4.0, 2.0, 3.0, 6.0),
                                                   t(-0.5, -1.25, -2.7, -10.5, -0.01, -3.5))),
    Case("zeta_special", seq(lambda x, q: S.zeta(x, q)), (t(1.0, 0.5, 2.5, 2.0, 2.0, nan, 2.0),
                                                     t(2.0, 2.0, -1.5, -2.0, 0.0, 1.0, nan))),
    Case("zeta_double", seq(lambda x, q: S.zeta(x, q)), (lin(1.1, 12.0, 9, torch.float64).unsqueeze(1),
                                                    lin(0.05, 30.0, 5, torch.float64))),
    Case("zeta_scalar_self", seq(lambda q: S.zeta(3.0, q)), (lin(0.5, 10.0, 9),)),
    Case("zeta_scalar_other", seq(lambda x: S.zeta(x, 2.0)), (lin(1.5, 9.0, 9),)),
    Case("zeta_int", seq(lambda x, q: S.zeta(x, q)), (torch.arange(2, 7), torch.arange(1, 6))),
    # regularized incomplete gamma
    Case("igamma", lambda a, x: torch.igamma(a, x), (logs(-2, 2, 9).unsqueeze(1), logs(-2, 2.5, 11))),
    Case("igammac", lambda a, x: torch.igammac(a, x), (logs(-2, 2, 9).unsqueeze(1), logs(-2, 2.5, 11))),
    Case("igamma_large_a", lambda a, x: torch.igamma(a, x), (t(1e3, 1e3, 1e4, 1e4, 3e4, 500.0),
                                                             t(990.0, 1020.0, 9950.0, 1e4, 3.01e4, 700.0))),
    Case("igammac_large_a", lambda a, x: torch.igammac(a, x), (t(1e3, 1e3, 1e4, 1e4, 3e4, 500.0),
                                                               t(990.0, 1020.0, 9950.0, 1e4, 3.01e4, 300.0))),
    Case("igamma_edges", lambda a, x: torch.igamma(a, x),
         (t(0.0, 0.0, 1.0, inf, inf, 2.0, -1.0, 1.0, nan, 1.0, 1e-3), t(1.0, 0.0, 0.0, 2.0, inf, inf, 1.0, -1.0, 1.0, nan, 5.0))),
    Case("igammac_edges", lambda a, x: torch.igammac(a, x),
         (t(0.0, 0.0, 1.0, inf, inf, 2.0, -1.0, 1.0, nan, 1.0, 1e-3), t(1.0, 0.0, 0.0, 2.0, inf, inf, 1.0, -1.0, 1.0, nan, 5.0))),
    Case("gammainc_double", seq(lambda a, x: S.gammainc(a, x)),
         (logs(-3, 3, 13, torch.float64).unsqueeze(1), logs(-3, 3.5, 13, torch.float64))),
    Case("gammaincc_double", seq(lambda a, x: S.gammaincc(a, x)),
         (logs(-3, 3, 13, torch.float64).unsqueeze(1), logs(-3, 3.5, 13, torch.float64))),
    Case("igammac_tiny_a", lambda a, x: torch.igammac(a, x), (logs(-12, -1, 6).unsqueeze(1), t(1e-3, 0.5, 1.0, 1.1, 3.0))),
    Case("igamma_scalar", lambda a: torch.igamma(a, torch.tensor(2.0, dtype=torch.float64)), (logs(-1, 1, 7),)),
    Case("igammac_empty", lambda a, x: torch.igammac(a, x), (torch.zeros(0, 2), torch.ones(2))),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
