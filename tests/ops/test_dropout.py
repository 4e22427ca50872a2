"""Dropout (src/symbolics/dropout.cpp).

Inference: the identity. Training mode (a trace of F.dropout(training=True),
or a scripted module exported with --training train) draws a random mask, so
those cases compare shapes, or values of deterministic properties: kept
elements are x / (1 - p), whole channels are dropped together, the fraction
dropped is about p, alpha dropout's outputs are a*x + alpha*a*p or alpha*a*(p - 1).
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest  # noqa: E402
from optest import Case  # noqa: E402

torch.manual_seed(0)
TRAIN = ("--training", "train")
ALPHA = 1.7580993408473766


def r(*shape):
    return torch.randn(*shape)


def pos(*shape):
    return torch.rand(*shape) + 0.5  # never 0, so y == 0 means dropped


class TrainDropout(nn.Module):
    """torch.<fn>(x, p, self.training): follows --training."""

    def __init__(self, p: float, kind: int):
        super().__init__()
        self.p = p
        self.kind = kind

    def forward(self, x):
        return torch.dropout(x, self.p, self.training)


class TrainFeatureDropout(TrainDropout):
    def forward(self, x):
        return torch.feature_dropout(x, self.p, self.training)


class TrainAlphaDropout(TrainDropout):
    def forward(self, x):
        return torch.alpha_dropout(x, self.p, self.training)


class TrainFeatureAlphaDropout(TrainDropout):
    def forward(self, x):
        return torch.feature_alpha_dropout(x, self.p, self.training)


def _restore(x, p):
    """Kept elements are x / (1 - p): (y * (1 - p) where kept, else x) == x."""
    y = F.dropout(x, p, True)
    return torch.where(y == 0, x, y * (1 - p))


def dropped_fraction(fn, p):
    return lambda x: (fn(x, p, True) == 0).float().mean().reshape(1)


def channel_uniform(fn, p):
    """Feature dropout drops whole channels: per channel, the dropped fraction is 0 or 1."""
    def f(x):
        z = (fn(x, p, True) == 0).float().mean(dim=[2, 3])
        return z * (1 - z)
    return f


def alpha_restore(fn, p):
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    dropped = ALPHA * a * (p - 1)

    def f(x):
        y = fn(x, p, True)
        return torch.where((y - dropped).abs() < 1e-5, x, (y - ALPHA * a * p) / a)
    return f


CASES = [
    # ---- inference: identity
    Case("dropout_eval", nn.Dropout(0.5), (r(3, 4),)),
    Case("dropout_functional_eval", lambda x: F.dropout(x, 0.2, training=False) + 1, (r(3, 4),)),
    Case("dropout_inplace_eval", lambda x: F.dropout(x * 2, 0.5, False, inplace=True), (r(3, 4),)),
    Case("dropout1d_eval", nn.Dropout1d(0.5), (r(2, 3, 4),)),
    Case("dropout2d_eval", nn.Dropout2d(0.5), (r(2, 3, 4, 5),)),
    Case("dropout3d_eval", nn.Dropout3d(0.5), (r(2, 3, 2, 4, 5),)),
    Case("feature_dropout_inplace_eval", lambda x: F.dropout2d(x * 1, 0.5, False, inplace=True), (r(2, 3, 4, 5),)),
    Case("alpha_dropout_eval", nn.AlphaDropout(0.5), (r(3, 4),)),
    Case("alpha_dropout_inplace_eval", lambda x: F.alpha_dropout(x * 1, 0.5, False, inplace=True), (r(3, 4),)),
    Case("feature_alpha_dropout_eval", nn.FeatureAlphaDropout(0.5), (r(2, 3, 4, 5),)),
    Case("feature_alpha_dropout_inplace_eval", lambda x: F.feature_alpha_dropout(x * 1, 0.5, False, inplace=True),
         (r(2, 3, 4, 5),)),
    Case("dropout_script_eval", TrainDropout(0.5, 0), (r(3, 4),), script=True),
    # ---- training mode: shapes
    Case("dropout_train", lambda x: F.dropout(x, 0.5, True), (r(3, 4),), check="shape"),
    Case("dropout_train_double", lambda x: F.dropout(x, 0.3, True), (r(3, 4).double(),), check="shape"),
    Case("dropout_train_inplace", lambda x: F.dropout(x * 1, 0.5, True, inplace=True), (r(3, 4),), check="shape"),
    Case("feature_dropout_train", lambda x: F.dropout2d(x, 0.5, True), (r(2, 3, 4, 5),), check="shape"),
    Case("alpha_dropout_train", lambda x: F.alpha_dropout(x, 0.5, True), (r(3, 4),), check="shape"),
    Case("feature_alpha_dropout_train", lambda x: F.feature_alpha_dropout(x, 0.5, True), (r(2, 3, 4),),
         check="shape"),
    Case("dropout_script_train", TrainDropout(0.5, 0), (r(3, 4),), script=True, extra=TRAIN, check="shape"),
    Case("feature_dropout_script_train", TrainFeatureDropout(0.5, 0), (r(2, 3, 4),), script=True, extra=TRAIN,
         check="shape"),
    Case("alpha_dropout_script_train", TrainAlphaDropout(0.5, 0), (r(3, 4),), script=True, extra=TRAIN,
         check="shape"),
    Case("feature_alpha_dropout_script_train", TrainFeatureAlphaDropout(0.5, 0), (r(2, 3, 4, 5),), script=True,
         extra=TRAIN, check="shape"),
    # ---- training mode: deterministic properties
    Case("dropout_train_kept_scaled", lambda x: _restore(x, 0.3), (pos(4, 50),)),
    Case("dropout_train_rate", dropped_fraction(F.dropout, 0.3), (pos(100, 100),), atol_scale=0.05),
    Case("dropout_train_p0", lambda x: F.dropout(x, 0.0, True), (r(3, 4),)),
    Case("dropout_train_p1", lambda x: F.dropout(x, 1.0, True), (r(3, 4),)),
    Case("feature_dropout_train_channels", channel_uniform(F.dropout2d, 0.5), (pos(4, 8, 3, 3),)),
    Case("feature_dropout_train_rate", dropped_fraction(F.dropout2d, 0.7), (pos(50, 200, 2, 1),), atol_scale=0.05),
    Case("feature_dropout_train_p1", lambda x: F.dropout2d(x, 1.0, True), (r(2, 3, 4, 5),)),
    Case("alpha_dropout_train_values", alpha_restore(F.alpha_dropout, 0.4), (r(6, 40),)),
    Case("alpha_dropout_train_p1", lambda x: F.alpha_dropout(x, 1.0, True), (r(3, 4),)),
    Case("feature_alpha_dropout_train_values", alpha_restore(F.feature_alpha_dropout, 0.3), (r(4, 6, 5),)),
    # ---- native_dropout: (output, mask)
    Case("native_dropout_eval", lambda x: torch.native_dropout(x, 0.5, False), (r(3, 4),)),
    Case("native_dropout_train", lambda x: torch.native_dropout(x, 0.5, True), (r(3, 4),), check="shape"),
    Case("native_dropout_train_mask",
         lambda x: (lambda y, m: torch.where(m, y * 0.6, x))(*torch.native_dropout(x, 0.4, True)), (r(5, 40),)),
    Case("native_dropout_train_p0", lambda x: torch.native_dropout(x, 0.0, True), (r(3, 4),)),
    Case("native_dropout_train_p1", lambda x: torch.native_dropout(x, 1.0, True), (r(3, 4),)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
