"""Inputs and wrappers shared by the special-function test files
(test_special.py, test_special_erf.py)."""
import torch

import optest


class Nested(torch.nn.Module):
    """fn in a submodule: a traced top-level lambda records torch.special
    aliases under their canonical names, a submodule keeps them."""

    def __init__(self, fn):
        super().__init__()
        self.inner = optest.Lambda(fn)

    def forward(self, *args):
        return self.inner(*args)


def seq(fn):
    return Nested(fn)


def t(*v, dtype=torch.float32):
    return torch.tensor(v, dtype=dtype)


def lin(a, b, n=41, dtype=torch.float32):
    return torch.linspace(a, b, n, dtype=dtype)


def logs(a, b, n=41, dtype=torch.float32):  # 10^a .. 10^b
    return torch.logspace(a, b, n, dtype=dtype)
