"""Statistics: cov, corrcoef, quantile, nanquantile (src/symbolics/statistics.cpp),
through both frontends (TorchScript and torch.export programs)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
inf = float("inf")
nan = float("nan")
randn = torch.randn

# torch.export cannot capture cov / corrcoef: their weight checks read tensor
# values (aten.equal / .item()) while tracing.
NO_EXPORT = dict(pt2=False)

# ties and repeated values
TIES = torch.tensor([[1.0, 2.0, 2.0, 2.0, 5.0, 1.0], [3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [0.0, -1.0, 4.0, 4.0, -1.0, 0.5]])
WITH_NAN = torch.tensor([[1.0, nan, 3.0, 2.0, 7.0], [nan, nan, nan, nan, nan], [4.0, -inf, 1.0, 0.0, inf],
                         [5.0, 1.0, nan, 2.0, nan], [inf, nan, 1.0, nan, 2.0]])

Q = torch.tensor([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 1.0])


def quantile_cases(name, fn, **kw):
    """The five interpolation modes of one form."""
    return [Case(f"{name}_{mode}", (lambda m: lambda *a: fn(*a, interpolation=m))(mode), **kw)
            for mode in ("linear", "lower", "higher", "midpoint", "nearest")]


def axes(d, names):
    """CLI flags making the given input dims dynamic."""
    return ("--dynamic-axes", json.dumps(d, separators=(",", ":")), "--input-names", ",".join(names))


# Dynamic-axes cases run the exported model at other sizes too (TorchScript
# only: the torch.export programs here have static shapes).
DYN = dict(pt2=False)

CASES = optest.enable_pt2([
    # cov
    Case("cov_2d", lambda x: torch.cov(x), (randn(3, 6),), **NO_EXPORT),
    Case("cov_1d", lambda x: torch.cov(x), (randn(7),), **NO_EXPORT),
    Case("cov_correction0_double", lambda x: torch.cov(x, correction=0), (randn(4, 5).double() * 100,), **NO_EXPORT),
    Case("cov_correction2", lambda x: torch.cov(x, correction=2), (randn(2, 6),), **NO_EXPORT),
    Case("cov_int", lambda x: torch.cov(x), (torch.randint(-10, 10, (3, 5)),), **NO_EXPORT),
    Case("cov_one_var_row", lambda x: torch.cov(x), (randn(1, 5),), **NO_EXPORT),
    Case("cov_fweights", lambda x, f: torch.cov(x, fweights=f), (randn(3, 5), torch.tensor([1, 2, 0, 3, 1])),
         **NO_EXPORT),
    Case("cov_aweights", lambda x, a: torch.cov(x, aweights=a), (randn(3, 5), torch.rand(5) + 0.1), **NO_EXPORT),
    Case("cov_both_weights", lambda x, f, a: torch.cov(x, correction=1, fweights=f, aweights=a),
         (randn(2, 6).double(), torch.tensor([2, 1, 1, 3, 1, 2]), torch.rand(6).double() + 0.1), **NO_EXPORT),
    Case("cov_both_weights_corr0", lambda x, f, a: torch.cov(x, correction=0, fweights=f, aweights=a),
         (randn(3, 4), torch.tensor([1, 1, 2, 3]), torch.rand(4) + 0.5), **NO_EXPORT),
    Case("cov_single_obs", lambda x: torch.cov(x), (randn(3, 1),), **NO_EXPORT),  # norm factor 0: inf/nan
    Case("cov_const_rows", lambda x: torch.cov(x), (torch.ones(2, 4),), **NO_EXPORT),
    # corrcoef
    Case("corrcoef", lambda x: torch.corrcoef(x), (randn(4, 8),), **NO_EXPORT),
    Case("corrcoef_double", lambda x: torch.corrcoef(x), (randn(3, 5).double(),), **NO_EXPORT),
    Case("corrcoef_1d", lambda x: torch.corrcoef(x), (randn(6),), **NO_EXPORT),
    Case("corrcoef_const_row", lambda x: torch.corrcoef(x), (torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]),),
         **NO_EXPORT),
    Case("corrcoef_perfect", lambda x: torch.corrcoef(x),
         (torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [-1.0, -2.0, -3.0, -4.0]]),), **NO_EXPORT),
    Case("corrcoef_int", lambda x: torch.corrcoef(x), (torch.randint(-10, 10, (3, 6)),), **NO_EXPORT),
    # quantile
    # (TopK ascending and GatherElements start at opset 11)
    Case("quantile_scalar_all", lambda x: torch.quantile(x, 0.3), (randn(4, 5),), min_opset=11,
         error_below={9: "supported from opset 11"}),
    Case("quantile_scalar_dim", lambda x: torch.quantile(x, 0.75, dim=1), (randn(3, 6),), min_opset=11),
    Case("quantile_dim0_keepdim", lambda x: torch.quantile(x, 0.5, dim=0, keepdim=True), (randn(5, 3, 2),),
         min_opset=11),
    Case("quantile_tensor_q", lambda x, q: torch.quantile(x, q, dim=-1), (randn(2, 3, 7), Q), min_opset=11),
    Case("quantile_tensor_q_keepdim", lambda x, q: torch.quantile(x, q, dim=1, keepdim=True), (randn(2, 4, 3), Q),
         min_opset=11),
    Case("quantile_tensor_q_all_keepdim", lambda x, q: torch.quantile(x, q, keepdim=True), (randn(3, 4), Q),
         min_opset=11),
    Case("quantile_0d_q", lambda x, q: torch.quantile(x, q, dim=0), (randn(5, 2), torch.tensor(0.4)),
         min_opset=11),
    Case("quantile_double", lambda x, q: torch.quantile(x, q, dim=1), (randn(3, 9).double() * 1e3, Q.double()),
         min_opset=11),
    Case("quantile_1d", lambda x: torch.quantile(x, 0.9), (randn(10),), min_opset=11),
    Case("quantile_0d_input", lambda x: torch.quantile(x, 0.2), (torch.tensor(1.5),), min_opset=11),
    Case("quantile_single", lambda x, q: torch.quantile(x, q, dim=1), (randn(3, 1), Q), min_opset=11),
    Case("quantile_nan", lambda x, q: torch.quantile(x, q, dim=1), (WITH_NAN, Q), min_opset=11),
    Case("quantile_inf", lambda x: torch.quantile(x, 0.5, dim=1),
         (torch.tensor([[inf, -inf, 1.0, 2.0], [inf, inf, 1.0, 0.0], [-inf, -inf, -inf, 3.0]]),), min_opset=11),
    *quantile_cases("quantile_ties", lambda x, q, **kw: torch.quantile(x, q, dim=1, **kw), args=(TIES, Q),
                    min_opset=11),
    *quantile_cases("quantile_even", lambda x, q, **kw: torch.quantile(x, q, dim=0, **kw),
                    args=(randn(5, 3).double(), torch.tensor([0.125, 0.375, 0.5, 0.625, 0.875]).double()),
                    min_opset=11),
    *quantile_cases("quantile_scalar", lambda x, **kw: torch.quantile(x, 0.5, dim=-1, keepdim=True, **kw),
                    args=(randn(2, 3, 4),), min_opset=11),
    # ranks are computed in double from q in the input's dtype: 0.6f * 5 > 3, 0.6 * 5 == 3
    Case("quantile_rank_rounding_float", lambda x: torch.quantile(x, 0.6, interpolation="higher"),
         (torch.arange(6.0),), min_opset=11),
    Case("quantile_rank_rounding_double", lambda x: torch.quantile(x, 0.6, interpolation="higher"),
         (torch.arange(6.0).double(),), min_opset=11),
    Case("quantile_rank_rounding_linear", lambda x: torch.quantile(x, 0.6),
         (torch.tensor([0.0, 1.0, 2.0, 3.0, 1e7, 1e7]),), min_opset=11),
    # nanquantile
    Case("nanquantile_dim", lambda x, q: torch.nanquantile(x, q, dim=1), (WITH_NAN, Q), min_opset=11),
    Case("nanquantile_all", lambda x: torch.nanquantile(x, 0.4), (WITH_NAN,), min_opset=11,
         error_below={9: "supported from opset 11"}),
    Case("nanquantile_keepdim_double", lambda x: torch.nanquantile(x, 0.8, dim=0, keepdim=True),
         (WITH_NAN.double().t(),), min_opset=11),
    Case("nanquantile_no_nan", lambda x, q: torch.nanquantile(x, q, dim=-1), (randn(2, 3, 5), Q), min_opset=11),
    *quantile_cases("nanquantile", lambda x, q, **kw: torch.nanquantile(x, q, dim=1, **kw), args=(WITH_NAN, Q),
                    min_opset=11),
    # dynamic sizes
    Case("cov_dynamic", lambda x: torch.cov(x), (randn(3, 6),), extra=axes({"x": {"1": "n"}}, ["x"]),
         more_args=[(randn(3, 11),), (randn(3, 2),)], **DYN),
    Case("quantile_dynamic", lambda x, q: torch.quantile(x, q, dim=1), (randn(3, 6), Q),
         extra=axes({"x": {"0": "b", "1": "n"}}, ["x", "q"]), more_args=[(randn(2, 9), Q), (randn(4, 1), Q)],
         min_opset=11, **DYN),
    Case("nanquantile_dynamic", lambda x: torch.nanquantile(x, 0.3), (WITH_NAN,),
         extra=axes({"x": {"0": "b", "1": "n"}}, ["x"]), more_args=[(WITH_NAN[1:, 1:],), (randn(5, 7),)],
         min_opset=11, **DYN),
])


results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
