"""Symmetric eigendecomposition (src/symbolics/linalg_eigh.cpp, Jacobi).
Eigenvectors are unique up to sign (and within repeated eigenvalues up to a
rotation), so the cases compare eigenvalues, the reconstruction V diag(w) V^T,
V^T V and |V| where eigenvalues are distinct."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def sym(*shape):
    a = torch.randn(*shape)
    return a + a.transpose(-2, -1)


def eigh_inv(a, uplo="L"):
    """Eigenvalues, the reconstruction and |V| (distinct eigenvalues)."""
    w, v = torch.linalg.eigh(a, UPLO=uplo)
    return w, (v * w.unsqueeze(-2)) @ v.transpose(-2, -1), v.abs()


def eigh_rep(a):
    """Repeated eigenvalues: V is any orthonormal basis of each eigenspace."""
    w, v = torch.linalg.eigh(a)
    return w, (v * w.unsqueeze(-2)) @ v.transpose(-2, -1), v.transpose(-2, -1) @ v


def eigh_rep_internal(a):
    w, v = torch.ops.aten._linalg_eigh(a, "L", True)
    return w, (v * w.unsqueeze(-2)) @ v.transpose(-2, -1), v.abs()


s5, s4b, s7 = sym(5, 5), sym(3, 4, 4), sym(7, 7)

CASES = optest.enable_pt2([
    Case("eigh", eigh_inv, (s5,)),
    Case("eigh_odd_double", eigh_inv, (s7.double(),)),
    Case("eigh_batched", eigh_inv, (s4b,)),
    Case("eigh_upper", lambda a: eigh_inv(a, "U"), (r(4, 4),)),
    Case("eigh_lower_nonsym", lambda a: eigh_inv(a, "L"), (r(2, 5, 5).double(),)),
    Case("eigh_identity", eigh_rep, (torch.eye(4),)),
    Case("eigh_repeated", eigh_rep, (torch.diag(torch.tensor([2.0, -1.0, 2.0, 2.0, 0.5])),)),
    Case("eigh_zero", eigh_rep, (torch.zeros(3, 3),)),
    Case("eigh_1x1", lambda a: tuple(torch.linalg.eigh(a)), (torch.tensor([[[-2.5]], [[4.0]]]),)),
    Case("eigh_large", lambda a: eigh_inv(a), (sym(4, 4) * 1e18,)),
    Case("eigh_16_double", eigh_inv, (sym(16, 16).double(),)),
    Case("eigvalsh", torch.linalg.eigvalsh, (s5,)),
    Case("eigh_values_only", lambda a: torch.linalg.eigh(a)[0], (s5.double(),)),  # unused eigenvectors
    # what torch.export records (no eigenvectors: an empty second output)
    Case("_linalg_eigh_values", lambda a: torch.ops.aten._linalg_eigh(a, "U", False), (s4b.double(),)),
    Case("_linalg_eigh", lambda a: eigh_rep_internal(a), (s5,)),
    Case("eigvalsh_upper_double", lambda a: torch.linalg.eigvalsh(a, UPLO="U"), (r(3, 6, 6).double(),)),
])

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
