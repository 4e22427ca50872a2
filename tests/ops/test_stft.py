"""Short-time Fourier transforms (src/symbolics/stft.cpp): stft and istft in
models whose inputs and outputs are real (complex values travel as (real,
imag) pairs), through both frontends (TorchScript and torch.export programs).
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
OPSETS = (9, 11, 17, 18, 20, 23)


def randn(*s, dtype=torch.float32):
    return torch.randn(*s, dtype=dtype)


class Spectrogram(nn.Module):
    def __init__(self, n_fft, hop=None, win_length=None, normalized=False, center=True, onesided=None, window=True):
        super().__init__()
        self.n_fft, self.hop, self.win_length = n_fft, hop, win_length
        self.normalized, self.center, self.onesided = normalized, center, onesided
        self.window = window

    def forward(self, x):
        w = torch.hann_window(self.win_length or self.n_fft, dtype=x.dtype) if self.window else None
        s = torch.stft(x, self.n_fft, self.hop, self.win_length, w, center=self.center, normalized=self.normalized,
                       onesided=self.onesided, return_complex=True)
        return s.abs()


class RoundTrip(nn.Module):
    """stft, scaled, istft (the window a buffer: hann, or one without zeros when not centered)."""

    def __init__(self, n_fft, hop, center=True, normalized=False, length=None, dtype=torch.float32):
        super().__init__()
        self.n_fft, self.hop, self.center, self.normalized, self.length = n_fft, hop, center, normalized, length
        w = torch.hann_window(n_fft, dtype=dtype)
        self.register_buffer("w", w if center else w + 0.2)

    def forward(self, x):
        s = torch.stft(x, self.n_fft, self.hop, window=self.w, center=self.center, normalized=self.normalized,
                       return_complex=True)
        s = s * 2.0
        return torch.istft(s, self.n_fft, self.hop, window=self.w, center=self.center, normalized=self.normalized,
                           length=self.length)


CASES = optest.enable_pt2([
    # stft / istft
    Case("stft_hann", Spectrogram(8), (randn(40),), opsets=OPSETS),
    Case("stft_batched_hop", Spectrogram(16, hop=5, normalized=True), (randn(2, 50),), opsets=OPSETS),
    Case("stft_win_length_double", Spectrogram(10, hop=3, win_length=6), (randn(33, dtype=torch.float64),),
         opsets=OPSETS),
    Case("stft_no_center_twosided", Spectrogram(8, hop=2, center=False, onesided=False, window=False),
         (randn(2, 21),), opsets=OPSETS),
    Case("stft_center_overload", lambda x: torch.ops.aten.stft.center(
        x, 8, 2, None, torch.hann_window(8), True, "reflect", True, None, True).abs(), (randn(2, 30),), opsets=OPSETS),
    Case("stft_center_constant_double", lambda x: torch.ops.aten.stft.center(
        x, 6, 3, 4, None, True, "constant", False, None, True).abs(), (randn(25, dtype=torch.float64),), opsets=OPSETS),
    Case("stft_real_output", lambda x: torch.stft(x, 8, 4, window=torch.hann_window(8), return_complex=False),
         (randn(30),), opsets=OPSETS, pt2=False),  # (torch.export refuses return_complex=False)
    Case("istft_roundtrip", RoundTrip(16, 4), (randn(64),), opsets=OPSETS),
    Case("istft_batched_length", RoundTrip(12, 5, length=50), (randn(2, 48),), opsets=OPSETS),
    Case("istft_no_center_double", RoundTrip(8, 2, center=False, normalized=True, dtype=torch.float64),
         (randn(30, dtype=torch.float64),), opsets=OPSETS),
])


# (PyTorch 1.13 computes these differently: 2.x only)
CASES = optest.needs_torch2(CASES, ['stft_center_overload', 'stft_center_constant_double'])
results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
