"""Activation functions (src/symbolics/activation.cpp)."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
x = torch.randn(2, 3, 4, 5) * 3


def r(*shape, scale=3.0):
    return torch.randn(*shape) * scale


CASES = [
    Case("relu", lambda x: torch.relu(x), (x,)),
    Case("relu_inplace", lambda x: torch.relu_(x * 1), (x,)),
    Case("sigmoid", torch.sigmoid, (x,)),
    Case("tanh", torch.tanh, (x,)),
    Case("selu", F.selu, (x,)),
    Case("softsign", F.softsign, (x,)),
    Case("leaky_relu", lambda x: F.leaky_relu(x, 0.2), (x,)),
    Case("leaky_relu_inplace", nn.LeakyReLU(0.1, inplace=True), (r(3, 4),)),
    Case("hardtanh", lambda x: F.hardtanh(x, -2.0, 1.5), (x,)),
    Case("relu6", nn.ReLU6(), (x,)),
    Case("relu6_functional", F.relu6, (x,)),
    Case("gelu", F.gelu, (x,), opsets=(9, 13, 17, 20, 23)),
    Case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), (x,), opsets=(9, 13, 17, 20, 23)),
    Case("elu", lambda x: F.elu(x, 0.7), (x,)),
    Case("celu", lambda x: F.celu(x, 1.3), (x,), opsets=(9, 11, 12, 17)),
    Case("celu_double", lambda x: F.celu(x, 0.7), (x.double(),), opsets=(9, 12, 17)),  # ONNX Celu is float only
    Case("silu", F.silu, (x,)),
    # opset 24: Swish (ONNX Runtime 1.32 runs it at 24 only: at 25+ the product stays)
    Case("silu_swish", F.silu, (x,), opsets=(23, 24, 25, 28), expect_ops={24: ("Swish",)}, pt2=True),
    Case("x_sigmoid_x_swish", lambda a: a * torch.sigmoid(a), (x.double(),), opsets=(24,), expect_ops={24: ("Swish",)}),
    Case("silu_half_swish", F.silu, (x.half(),), opsets=(24,), expect_ops={24: ("Swish",)}),
    Case("mish", F.mish, (x,)),
    Case("softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0), (x,)),
    Case("softplus_default", F.softplus, (r(10, scale=30.0),)),
    Case("hardsigmoid", F.hardsigmoid, (x,)),
    Case("hardswish", F.hardswish, (x,), opsets=(9, 13, 14, 17)),
    Case("prelu_channels", nn.PReLU(3), (x[:, :, :, 0],)),
    Case("prelu_4d", nn.PReLU(3), (x,)),
    Case("prelu_single", nn.PReLU(), (x,)),
    Case("prelu_0d", nn.PReLU(), (torch.scalar_tensor(-1.5),)),  # stays 0-d
    Case("prelu_1d", nn.PReLU(), (x[0, 0, 0],)),
    Case("threshold", lambda x: F.threshold(x, 0.5, -1.0), (x,)),
    Case("glu", lambda x: F.glu(x, dim=1), (r(2, 6, 3),)),
    Case("glu_last", lambda x: F.glu(x, dim=-1), (r(2, 6),)),
    # a dynamic dim: the halves from its run-time size (Slice; Split's num_outputs from opset 18), not the
    # example's (issue 43); opset 9 (no Slice with run-time bounds) needs it static
    Case("glu_dynamic", lambda x: F.glu(x, dim=1), (r(2, 6),), opsets=(11, 13, 17, 18), error_below={9: "is dynamic"},
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"), pt2=False,
         more_args=[(r(3, 10),), (r(1, 2),)]),
    Case("log_sigmoid", F.logsigmoid, (r(4, 5, scale=20.0),)),
    Case("hardshrink", lambda x: F.hardshrink(x, 0.7), (x,)),
    Case("softshrink", lambda x: F.softshrink(x, 0.7), (x,)),
    Case("tanhshrink", F.tanhshrink, (x,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
