"""Shape and movement ops on complex tensors (src/symbolics/complex_shape.cpp)
inside models whose inputs and outputs are real: complex values travel as
(real, imag) pairs, through both frontends (TorchScript and torch.export
programs)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
var = torch.view_as_real
vac = torch.view_as_complex


def randn(*s, dtype=torch.float32):
    return torch.randn(*s, dtype=dtype)


def z(x):
    """A complex tensor from a real [..., 2] one."""
    return vac(x)


a = randn(3, 4, 2)
b = randn(3, 4, 2)

CASES = optest.enable_pt2([
    # shapes of complex tensors
    Case("transpose_permute", lambda x: var(z(x).transpose(0, 1).permute(1, 0) * 2), (a,)),
    Case("reshape_view", lambda x: var(z(x).reshape(-1, 2).view(2, 6) * 1), (a,)),
    Case("size", lambda x: var(z(x) * z(x).shape[1]), (a,)),
    Case("flatten", lambda x: var(torch.flatten(z(x)) + 1), (a,)),
    Case("unsqueeze_squeeze", lambda x: var(z(x).unsqueeze(-1).squeeze(-1).unsqueeze(0)), (a,)),
    Case("select_slice", lambda x: var(z(x)[1, 1:3] + z(x)[:, 0].sum()), (a,)),
    Case("cat_stack", lambda x, y: var(torch.cat([z(x), z(y)], -1) * torch.stack([z(x), z(y)], 0).sum(0).sum()),
         (a, b)),
    Case("cat_real", lambda x, y: var(torch.cat([z(x), y], 0)), (a, randn(2, 4))),
    Case("flip_clone", lambda x: var(z(x).flip(-1).clone()), (a,), min_opset=10),
    # squeeze of a dynamic dim: PyTorch decides it at run time, so it is refused, whatever the example's
    # size (issue 43: a size other than 1 was kept as is); a static dim of 1 goes as before
    Case("squeeze_dynamic_dim", lambda x: var(z(x).squeeze(1) * 2), (randn(3, 4, 2),), opsets=(),
         error_below={13: "is dynamic", 17: "is dynamic"},
         extra=("--dynamic-axes", '{"x":[0,1]}', "--input-names", "x"), pt2=False),
    Case("squeeze_static_dim_of_dynamic", lambda x: var(z(x).squeeze(1) * 2), (randn(3, 1, 2),), opsets=(13, 17),
         extra=("--dynamic-axes", '{"x":[0]}', "--input-names", "x"), pt2=False, more_args=[(randn(5, 1, 2),)]),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
