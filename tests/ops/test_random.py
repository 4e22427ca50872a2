"""Random tensors (src/symbolics/random.cpp).

Random outputs are compared by shape and dtype (check="shape"); the *_range
cases turn the samples into booleans that must all be True (value ranges,
integrality, distinct samples without replacement), compared by value.
Random results have more than 64 elements: T2O_CHECK_META compares the values
of small tensors between its two example runs, and random draws differ.

Not exported: _standard_gamma, _sample_dirichlet and poisson (ONNX has no
way to sample them without loops).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
x = torch.randn(4, 30)
xd = torch.randn(4, 30, dtype=torch.float64)
xi = torch.randint(0, 10, (4, 30))
probs = torch.rand(3, 40) + 0.05
probs1 = torch.rand(80) + 0.05


def n(v):
    return torch.tensor([v])


def in_range(t, lo, hi):
    return ((t >= lo) & (t < hi)).all()


def is_integral(t):
    return (t == torch.floor(t)).all()


class ScriptRand(nn.Module):
    def forward(self, x):
        return torch.rand([5, 20], dtype=torch.float64), torch.randn([x.size(0), 30])


class ScriptRandint(nn.Module):
    def forward(self, x):
        return torch.randint(3, 9, [x.size(0), 30], dtype=torch.int32)


class ScriptRandperm(nn.Module):
    def forward(self, x):
        return torch.randperm(x.size(1) * 3)


class ScriptNormalSized(nn.Module):
    def forward(self, x):
        return torch.normal(2.0, 3.0, [x.size(0), 30])


def multinomial_distinct(p):
    s = torch.multinomial(p, p.shape[-1])  # every category exactly once
    return F.one_hot(s, p.shape[-1]).sum(-2) == 1


def rrelu_training_range(x):
    y = F.rrelu(x, 0.1, 0.3, training=True)
    return (((x >= 0) & (y == x)) | ((x < 0) & (y >= x * 0.3) & (y <= x * 0.1))).all()


CASES = [
    # rand / randn
    Case("rand", lambda x: torch.rand(x.shape[0], 30), (x,), check="shape"),
    Case("rand_dtype", lambda x: torch.rand(x.shape[0], 30, dtype=torch.float64), (x,), check="shape"),
    Case("rand_range", lambda x: in_range(torch.rand(x.shape[0], 30), 0, 1), (x,)),
    Case("rand_runtime_size", lambda n: torch.rand(n[0], 30), (n(3),), check="shape"),
    Case("rand_scripted", ScriptRand(), (x,), script=True, check="shape"),
    Case("randn", lambda x: torch.randn(x.shape[0], 30), (x,), check="shape"),
    Case("randn_dtype", lambda x: torch.randn((x.shape[0], 30), dtype=torch.float64), (x,), check="shape"),
    Case("randn_runtime_size", lambda n: torch.randn(2, n[0]), (n(40),), check="shape"),
    Case("rand_like", torch.rand_like, (x,), check="shape"),
    Case("rand_like_dtype", lambda x: torch.rand_like(x, dtype=torch.float64), (x,), check="shape"),
    Case("rand_like_range", lambda x: in_range(torch.rand_like(x), 0, 1), (xd,)),
    Case("randn_like", torch.randn_like, (xd,), check="shape"),
    Case("randn_like_dtype", lambda x: torch.randn_like(x, dtype=torch.float64), (x,), check="shape"),
    # randint
    Case("randint", lambda x: torch.randint(10, (x.shape[0], 30)), (x,), check="shape"),
    Case("randint_low", lambda x: torch.randint(-5, 5, (x.shape[0], 30)), (x,), check="shape"),
    Case("randint_dtype", lambda x: torch.randint(0, 7, (x.shape[0], 30), dtype=torch.float32), (x,),
         check="shape"),
    Case("randint_range", lambda x: in_range(torch.randint(-5, 3, (x.shape[0], 30)), -5, 3), (x,)),
    Case("randint_range_float", lambda x: is_integral(torch.randint(2, 9, (x.shape[0], 30), dtype=torch.float64))
         & in_range(torch.randint(2, 9, (x.shape[0], 30), dtype=torch.float64), 2, 9), (x,)),
    Case("randint_scripted", ScriptRandint(), (x,), script=True, check="shape"),
    Case("randint_like", lambda x: torch.randint_like(x, 10), (xi,), check="shape"),
    Case("randint_like_low", lambda x: torch.randint_like(x, 3, 10), (x,), check="shape"),
    Case("randint_like_dtype", lambda x: torch.randint_like(x, 3, 10, dtype=torch.int32), (x,), check="shape"),
    Case("randint_like_range", lambda x: in_range(torch.randint_like(x, -2, 4), -2, 4) & is_integral(
        torch.randint_like(x, -2, 4)), (x,)),
    # randperm (TopK takes k as an input from opset 10)
    Case("randperm", lambda x: torch.randperm(x.shape[1] * 3), (x,), opsets=(9, 10, 11, 17), check="shape"),
    Case("randperm_dtype", lambda x: torch.randperm(x.shape[1] * 3, dtype=torch.int32), (x,), opsets=(9, 10, 17),
         check="shape"),
    Case("randperm_is_permutation", lambda x: F.one_hot(torch.randperm(x.shape[1] * 3), x.shape[1] * 3).sum(0) == 1,
         (x,), opsets=(9, 10, 17)),
    Case("randperm_scripted", ScriptRandperm(), (x,), script=True, check="shape"),
    # normal
    Case("normal_tensor_float", lambda m: torch.normal(m, 2.0), (x,), check="shape"),
    Case("normal_float_tensor", lambda s: torch.normal(1.0, s.abs()), (xd,), check="shape"),
    Case("normal_tensor_tensor", lambda m, s: torch.normal(m, s.abs()), (torch.randn(4, 1), torch.randn(30)),
         check="shape"),
    Case("normal_sized", lambda x: torch.normal(2.0, 3.0, (x.shape[0], 30)), (x,), check="shape"),
    Case("normal_sized_scripted", ScriptNormalSized(), (x,), script=True, check="shape"),
    Case("normal_", lambda x: (x * 1).normal_(), (x,), check="shape"),
    Case("normal_args", lambda x: (x * 1).normal_(5.0, 0.5), (xd,), check="shape"),
    # uniform_ and other in-place fills
    Case("uniform_", lambda x: (x * 1).uniform_(), (x,), check="shape"),
    Case("uniform_range", lambda x: in_range((x * 1).uniform_(2.0, 5.0), 2.0, 5.0), (xd,)),
    Case("exponential_", lambda x: (x * 1).exponential_(), (x,), check="shape"),
    Case("exponential_range", lambda x: ((x * 1).exponential_(2.5) >= 0).all(), (x,)),
    Case("log_normal_", lambda x: (x * 1).log_normal_(), (x,), check="shape"),
    Case("log_normal_range", lambda x: ((x * 1).log_normal_(0.5, 0.25) > 0).all(), (xd,)),
    Case("cauchy_", lambda x: (x * 1).cauchy_(1.0, 2.0), (x,), check="shape"),
    Case("geometric_", lambda x: (x * 1).geometric_(0.3), (x,), check="shape"),
    Case("geometric_range", lambda x: (((x * 1).geometric_(0.3) >= 1) & is_integral((x * 1).geometric_(0.3))).all(),
         (x,)),
    Case("random_", lambda x: (x * 1).random_(), (x,), check="shape"),
    Case("random_range", lambda x: in_range((x * 1).random_(), 0, 2 ** 24 + 1) & is_integral((x * 1).random_()),
         (x,)),
    Case("random_to", lambda x: in_range((x * 1).random_(7), 0, 7), (xi,)),
    Case("random_from_to", lambda x: in_range((x * 1).random_(-3, 4), -3, 4) & is_integral((x * 1).random_(-3, 4)),
         (xd,)),
    Case("random_int", lambda x: (x * 1).random_(), (xi,), check="shape"),
    # bernoulli
    Case("bernoulli", lambda p: torch.bernoulli(p), (torch.rand(3, 40),), check="shape"),
    Case("bernoulli_range", lambda p: ((torch.bernoulli(p) == 0) | (torch.bernoulli(p) == 1)).all(),
         (torch.rand(3, 40, dtype=torch.float64),)),
    Case("bernoulli_certain", lambda p: torch.bernoulli(p), (torch.tensor([0.0, 1.0]).repeat(40),)),
    Case("bernoulli_p", lambda x: torch.bernoulli(x, 0.3), (x,), check="shape"),
    Case("bernoulli_p_certain", lambda x: torch.bernoulli(x, 1.0), (xd,)),
    Case("bernoulli_", lambda x: (x * 1).bernoulli_(0.25), (x,), check="shape"),
    Case("bernoulli_tensor", lambda x, p: (x * 1).bernoulli_(p), (x, torch.rand(30)), check="shape"),
    Case("bernoulli_tensor_certain", lambda x, p: (x * 1).bernoulli_(p), (x, torch.tensor([0.0, 1.0]).repeat(15))),
    Case("bernoulli_int", lambda x: (x * 1).bernoulli_(0.5), (xi,), check="shape"),
    # multinomial (TopK takes k as an input from opset 10)
    Case("multinomial", lambda p: torch.multinomial(p, 30), (probs,), opsets=(9, 10, 13, 17), check="shape"),
    Case("multinomial_1d", lambda p: torch.multinomial(p, 70), (probs1,), opsets=(9, 10, 17), check="shape"),
    Case("multinomial_replacement", lambda p: torch.multinomial(p, 70, replacement=True), (probs,), check="shape"),
    Case("multinomial_replacement_1d", lambda p: torch.multinomial(p, 80, True), (probs1,), check="shape"),
    Case("multinomial_distinct", multinomial_distinct, (probs,), opsets=(9, 10, 17)),
    Case("multinomial_zero_prob", lambda p: torch.multinomial(p, 70, replacement=True) % 2,
         (torch.tensor([0.0, 1.0]).repeat(3, 4),)),
    Case("multinomial_range", lambda p: in_range(torch.multinomial(p, 30), 0, 40), (probs,)),
    # rrelu: evaluation = leaky relu with the mean slope; training = random slopes
    Case("rrelu", lambda x: F.rrelu(x), (x,)),
    Case("rrelu_bounds", lambda x: F.rrelu(x, 0.2, 0.6), (x,)),
    Case("rrelu_inplace", lambda x: F.rrelu(x * 1, 0.1, 0.3, inplace=True), (x,)),
    Case("rrelu_module", nn.RReLU(0.05, 0.25), (xd,)),
    Case("rrelu_training", lambda x: F.rrelu(x, 0.1, 0.3, training=True), (x,), check="shape"),
    Case("rrelu_training_range", rrelu_training_range, (x,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
