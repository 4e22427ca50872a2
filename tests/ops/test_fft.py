"""Fourier transforms (src/symbolics/fft.cpp): torch.fft (stft and istft are
in test_stft.py) in models whose inputs and outputs are real (complex values
travel as (real, imag) pairs), through both frontends (TorchScript and
torch.export programs).
Opsets below 17 use DFT matrices, 17-19 DFT with an axis attribute, 20 on DFT
with an axis input."""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
fft = torch.fft
var = torch.view_as_real
OPSETS = (9, 11, 17, 18, 20, 23)


def randn(*s, dtype=torch.float32):
    return torch.randn(*s, dtype=dtype)


class Filter(nn.Module):
    """x -> rfft -> times a complex filter (a buffer) -> irfft."""

    def __init__(self, n, dtype=torch.complex64):
        super().__init__()
        self.register_buffer("h", torch.randn(n // 2 + 1, dtype=dtype))

    def forward(self, x):
        return fft.irfft(fft.rfft(x) * self.h, n=x.shape[-1])



x8 = randn(3, 8)
x7 = randn(2, 7)
x64 = randn(4, 6, dtype=torch.float64)
x3d = randn(2, 5, 6)

CASES = optest.enable_pt2([
    # rfft / irfft
    Case("rfft_even", lambda x: var(fft.rfft(x)), (x8,), opsets=OPSETS),
    Case("rfft_odd_ortho", lambda x: var(fft.rfft(x, norm="ortho")), (x7,), opsets=OPSETS),
    Case("rfft_n_pad_forward", lambda x: var(fft.rfft(x, n=11, dim=0, norm="forward")), (x7,), opsets=OPSETS),
    Case("rfft_n_trunc_double", lambda x: var(fft.rfft(x, n=4)), (x64,), opsets=OPSETS),
    Case("rfft_long", lambda x: var(fft.rfft(x * 100)), (randn(2, 64),), opsets=OPSETS),
    Case("rfft_irfft_1000", lambda x: fft.irfft(fft.rfft(x) * 3, n=1000), (randn(2, 1000),), opsets=OPSETS),
    Case("rfft_3000", lambda x: var(fft.rfft(x)), (randn(3000),), opsets=(17, 20),
         error_below={11: "export at opset 17 or later"}),  # (a 6000x6000 DFT matrix below 17: refused)
    Case("rfft_1d", lambda x: var(fft.rfft(x)), (randn(9),), opsets=OPSETS),
    Case("filter_even", Filter(16), (randn(3, 16),), opsets=OPSETS),
    Case("filter_odd_double", Filter(9, torch.complex128), (randn(2, 9, dtype=torch.float64),), opsets=OPSETS),
    Case("irfft_n_odd", lambda x: fft.irfft(fft.rfft(x), n=7), (x7,), opsets=OPSETS),
    Case("irfft_default_n", lambda x: fft.irfft(fft.rfft(x) * 1.5, norm="ortho"), (x8,), opsets=OPSETS),
    Case("irfft_n_pad", lambda x: fft.irfft(fft.rfft(x, dim=0), n=10, dim=0, norm="forward"), (x8,), opsets=OPSETS),
    Case("irfft_real_input", lambda x: fft.irfft(x, n=6), (randn(2, 4),), opsets=OPSETS),
    # fft / ifft, real and complex input
    Case("fft_real", lambda x: var(fft.fft(x)), (x7,), opsets=OPSETS),
    Case("fft_n_dim0_ortho", lambda x: var(fft.fft(x, n=5, dim=0, norm="ortho")), (x8,), opsets=OPSETS),
    Case("fft_complex_double", lambda x: var(fft.fft(torch.view_as_complex(x), norm="forward")),
         (randn(3, 5, 2, dtype=torch.float64),), opsets=OPSETS),
    Case("ifft_of_fft", lambda x: var(fft.ifft(fft.fft(x) * fft.fft(x[:1] * 2), n=9)), (x8,), opsets=OPSETS),
    Case("ifft_real", lambda x: var(fft.ifft(x, norm="ortho").resolve_conj()), (x7,), opsets=OPSETS),
    # hfft / ihfft
    Case("hfft", lambda x: fft.hfft(fft.rfft(x)), (x8,), opsets=OPSETS),
    Case("hfft_n_odd_ortho", lambda x: fft.hfft(fft.fft(x), n=5, norm="ortho"), (x7,), opsets=OPSETS),
    Case("ihfft", lambda x: var(fft.ihfft(x).resolve_conj()), (x7,), opsets=OPSETS),
    Case("ihfft_forward_double", lambda x: fft.ihfft(x, n=8, norm="forward").abs(), (x64,), opsets=OPSETS),
    # two and more dims
    Case("fft2", lambda x: var(fft.fft2(x)), (x3d,), opsets=OPSETS),
    Case("ifft2_s", lambda x: var(fft.ifft2(x, s=(4, 7), norm="ortho")), (x3d,), opsets=OPSETS),
    Case("fftn_all", lambda x: var(fft.fftn(x)), (x3d,), opsets=OPSETS),
    Case("fftn_s_minus1", lambda x: var(fft.fftn(x, s=(-1, 4), dim=(-1, 0))), (randn(3, 4),), opsets=OPSETS),
    Case("fftn_0d", lambda x: var(fft.fftn(x)), (torch.tensor(2.5),), opsets=OPSETS),
    Case("fftn_s_only", lambda x: var(fft.fftn(x, s=(3, 4))), (x3d,), opsets=OPSETS),
    Case("ifftn_dims", lambda x: var(fft.ifftn(fft.fftn(x, dim=(0, 2)), dim=(2, 0))), (x3d,), opsets=OPSETS),
    Case("rfft2", lambda x: var(fft.rfft2(x)), (x3d,), opsets=OPSETS),
    Case("irfft2", lambda x: fft.irfft2(fft.rfft2(x), s=(5, 6)), (x3d,), opsets=OPSETS),
    Case("rfftn_irfftn_double", lambda x: fft.irfftn(fft.rfftn(x, dim=(0, 1)) * 0.5, s=(4, 5), dim=(0, 1),
                                                      norm="forward"), (x64,), opsets=OPSETS),
    Case("hfft2", lambda x: fft.hfft2(fft.rfft2(x)), (x3d,), opsets=OPSETS),
    Case("ihfft2", lambda x: var(fft.ihfft2(x).resolve_conj()), (x3d,), opsets=OPSETS),
    Case("hfftn", lambda x: fft.hfftn(fft.rfftn(x), norm="ortho"), (x3d,), opsets=OPSETS),
    Case("ihfftn", lambda x: var(fft.ihfftn(x, dim=(0, 2)).resolve_conj()), (x3d,), opsets=OPSETS),
    # torch.fft's kernels called directly
    Case("fft_r2c_c2r", lambda x: torch._fft_c2r(torch._fft_r2c(x, [0, 1], 1, True), [0, 1], 2, 8), (x8,),
         opsets=OPSETS),
    Case("fft_r2c_full", lambda x: var(torch._fft_r2c(x, [1], 2, False)), (x7,), opsets=OPSETS),
    Case("fft_c2c", lambda x: var(torch._fft_c2c(torch.complex(x, x * 2), [0], 0, False)), (x7,), opsets=OPSETS),
    # shifts and frequencies
    Case("fftshift", lambda x: fft.fftshift(x), (x7,)),
    Case("ifftshift_dim", lambda x: fft.ifftshift(x, dim=1), (x3d,)),
    Case("fftshift_complex", lambda x: var(fft.fftshift(fft.fft(x), dim=-1)), (x7,), opsets=OPSETS),
    Case("ifftshift_complex_odd", lambda x: var(fft.ifftshift(fft.fft(x))), (x7,), opsets=OPSETS),
    Case("fftfreq", lambda x: x + fft.fftfreq(7, d=0.5), (x7,)),
    Case("rfftfreq_double", lambda x: x + fft.rfftfreq(8, dtype=torch.float64), (randn(5, dtype=torch.float64),)),
    Case("fftfreq_even", lambda x: x * fft.fftfreq(6), (randn(6),)),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['fftn_0d'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
