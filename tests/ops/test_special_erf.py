"""torch.special's error-function family, floating-point bits, gcd/lcm and
the torch.special aliases (src/symbolics/special_erf.cpp), through both
frontends (TorchScript and torch.export programs).

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


CASES = optest.enable_pt2([
    # erfc / erfcx / log_ndtr / ndtri / ndtr / erfinv
    Case("erfc", lambda x: torch.erfc(x), (torch.cat([lin(-4.0, 4.0), t(0.0, -0.0, inf, -inf, nan)]),)),
    Case("erfc_tail", lambda x: torch.erfc(x), (lin(3.0, 9.5),)),
    Case("erfc_double", seq(lambda x: S.erfc(x)), (torch.cat([lin(-6.0, 27.0, 67, torch.float64)]),)),
    Case("erfc_int", lambda x: torch.erfc(x), (torch.arange(-3, 4),)),
    Case("erfcx", seq(lambda x: S.erfcx(x)), (torch.cat([lin(-3.0, 5.0), t(0.0, 49.9, 50.1, inf, nan)]),)),
    Case("erfcx_large", seq(lambda x: S.erfcx(x)), (logs(0, 12),)),
    Case("erfcx_neg", seq(lambda x: S.erfcx(x)), (torch.cat([lin(-9.0, -3.0, 13), t(-10.0, -inf)]),)),
    Case("erfcx_double", seq(lambda x: S.erfcx(x)), (torch.cat([lin(-26.0, 60.0, 87, torch.float64),
                                                           logs(2, 300, 7, torch.float64)]),)),
    Case("log_ndtr", seq(lambda x: S.log_ndtr(x)), (torch.cat([lin(-3.0, 6.0), t(inf, -inf, nan, -1.0)]),)),
    Case("log_ndtr_neg", seq(lambda x: S.log_ndtr(x)), (lin(-40.0, -3.0),)),
    Case("log_ndtr_far", seq(lambda x: S.log_ndtr(x)), (t(-1e3, -1e5, -1e10, -1e18),)),
    Case("log_ndtr_double", seq(lambda x: S.log_ndtr(x)), (lin(-1e3, 40.0, 81, torch.float64),)),
    Case("ndtri", seq(lambda x: S.ndtri(x)), (torch.cat([lin(0.01, 0.99, 99), t(0.0, 1.0, -0.5, 1.5, nan)]),)),
    Case("ndtri_tails", seq(lambda x: S.ndtri(x)), (torch.cat([logs(-38, -1), 1 - logs(-7, -1)]),)),
    Case("ndtri_double", seq(lambda x: S.ndtri(x)), (torch.cat([logs(-300, -1, 60, torch.float64),
                                                           1 - logs(-15, -1, 29, torch.float64)]),)),
    Case("ndtr", seq(lambda x: S.ndtr(x)), (lin(-6.0, 6.0),)),
    Case("erfinv_range", lambda x: torch.erfinv(x),
         (torch.cat([lin(-0.999, 0.999, 81), t(1 - 6e-8, -(1 - 6e-8), 0.9999, -0.99999, 1.0, -1.0, 1.5, 0.0)]),)),
    Case("erfinv_near_one", lambda x: torch.erfinv(x), (1 - logs(-7, -1, 25),)),
    Case("special_erfinv", seq(lambda x: S.erfinv(x)), (lin(-0.99, 0.99, 21),)),
    Case("special_erf", seq(lambda x: S.erf(x)), (lin(-3.0, 3.0, 21),)),
    # floating-point bits
    Case("nextafter", lambda x, y: torch.nextafter(x, y),
         (t(1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 1e-45, 2.0, 3.0, inf, -inf, 3.4028235e38, 5.0, nan, 1.0, -0.0),
          t(2.0, 0.0, -2.0, 0.0, 1.0, -1.0, 0.0, 0.0, 3.0, 0.0, 0.0, inf, nan, 1.0, 2.0, 0.0))),
    Case("nextafter_rand", lambda x, y: torch.nextafter(x, y), (torch.randn(3, 50) * 1e3, torch.randn(3, 50) * 1e3)),
    Case("nextafter_double", lambda x, y: torch.nextafter(x, y),
         (torch.cat([torch.randn(40, dtype=torch.float64) * 1e5, t(0.0, 4.9e-324, 1.0, -1.0, 0.5, dtype=torch.float64)]),
          torch.cat([torch.randn(40, dtype=torch.float64) * 1e5, t(-1.0, 0.0, 0.0, 0.0, 1.0, dtype=torch.float64)]))),
    # (pt2=False: torch.export cannot serialize the torch.return_types.frexp output)
    Case("frexp", lambda x: torch.frexp(x),
         (torch.cat([torch.randn(30) * 1e3, t(0.0, -0.0, 1.0, 0.5, 2.0, -4.0, 1e-45, 1e-40, 3.4e38, inf, -inf, nan)]),),
         pt2=False),
    Case("frexp_tuple", lambda x: tuple(torch.frexp(x)), (torch.randn(3, 4) * 100,)),
    Case("frexp_double", lambda x: torch.frexp(x),
         (torch.cat([torch.randn(20, dtype=torch.float64) * 1e100,
                     t(4.9e-324, 1e-310, 1.7e308, 0.75, -1.0, 1024.0, dtype=torch.float64)]),), pt2=False),
    Case("ldexp", lambda x, e: torch.ldexp(x, e), (torch.randn(2, 5), torch.randint(-20, 20, (2, 5)))),
    Case("ldexp_int", lambda x, e: torch.ldexp(x, e), (torch.arange(1, 6), torch.arange(-2, 3))),
    # integers
    Case("gcd", lambda a, b: torch.gcd(a, b),
         (torch.tensor([0, 0, 12, -12, 17, 1, 7540113804746346429, 4660046610375530309, -36, 1000000007]),
          torch.tensor([0, 5, 18, 18, -51, 99, 4660046610375530309, 2880067194370816120, -48, 998244353]))),
    Case("gcd_broadcast", lambda a, b: torch.gcd(a, b),
         (torch.randint(-1000, 1000, (3, 1), dtype=torch.int32), torch.randint(-1000, 1000, (4,), dtype=torch.int32))),
    Case("gcd_int8", lambda a, b: torch.gcd(a, b),
         (torch.tensor([0, 12, -12, 127, 100], dtype=torch.int8), torch.tensor([0, 18, 8, 1, -75], dtype=torch.int8))),
    Case("lcm", lambda a, b: torch.lcm(a, b),
         (torch.tensor([0, 0, 12, -12, 17, 1, 1000003, -36]), torch.tensor([0, 5, 18, 18, -51, 99, 999983, -48]))),
    Case("lcm_int32", lambda a, b: torch.lcm(a, b),
         (torch.randint(-100, 100, (2, 6), dtype=torch.int32), torch.randint(-100, 100, (2, 6), dtype=torch.int32))),
    # torch.special aliases
    Case("special_xlogy", seq(lambda x, y: S.xlogy(x, y)), (torch.rand(5), torch.rand(5) + 0.1)),
    Case("special_xlog1py", seq(lambda x, y: S.xlog1py(x, y)), (torch.rand(5), torch.rand(5))),
    Case("special_entr", seq(lambda x: S.entr(x)), (t(0.0, 0.5, 1.0, 2.0, -1.0),)),
    Case("special_sinc", seq(lambda x: S.sinc(x)), (lin(-3.0, 3.0, 13),)),
    Case("special_logit", seq(lambda x: S.logit(x)), (torch.rand(6) * 0.98 + 0.01,)),
    Case("special_logit_eps", seq(lambda x: S.logit(x, eps=1e-3)), (t(0.0, 0.5, 1.0),)),
    Case("special_expit", seq(lambda x: S.expit(x)), (torch.randn(6),)),
    Case("special_exp2", seq(lambda x: S.exp2(x)), (lin(-5.0, 5.0, 11),)),
    Case("special_expm1", seq(lambda x: S.expm1(x)), (t(-1.0, -1e-3, 0.0, 1e-3, 2.0),)),
    Case("special_log1p", seq(lambda x: S.log1p(x)), (t(-0.5, 0.0, 1e-3, 3.0),)),
    Case("special_round", seq(lambda x: S.round(x)), (t(-2.5, -0.5, 0.5, 1.5, 2.4, 2.6),), min_opset=11),
    Case("special_log_softmax", seq(lambda x: S.log_softmax(x, 1)), (torch.randn(2, 5),)),
    Case("special_softmax", seq(lambda x: S.softmax(x, 0)), (torch.randn(3, 4),)),
    Case("special_logsumexp", seq(lambda x: S.logsumexp(x, [1], keepdim=True)), (torch.randn(2, 5),)),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
