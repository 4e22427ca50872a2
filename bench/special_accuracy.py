"""Accuracy of torch2onnx's special-function lowerings in ONNX Runtime (float32), measured against
PyTorch in float64 over wide grids, next to PyTorch's own float32 error on the same grid.
Metric: max |y - y64| / (1 + |y64|) over the grid (finite reference values only; the gamma
family's poles at 0, -1, -2, ... left out). Prints a Markdown table.

    PYTHONPATH=build/python build/venv/bin/python bench/special_accuracy.py
"""
import math
import os
import shutil
import tempfile

import onnxruntime as ort
import torch
import torch2onnx

torch.manual_seed(0)


def grid(lo, hi, n=20001, log=False, positive=False):
    if log:
        g = torch.logspace(math.log10(lo), math.log10(hi), n, dtype=torch.float64)
        return g if positive else torch.cat([-g.flip(0), g])
    return torch.linspace(lo, hi, n, dtype=torch.float64)


S = torch.special
FUNS = {
    "digamma": (torch.digamma, torch.cat([grid(-50, 50), grid(1e-3, 1e6, log=True, positive=True)])),
    "polygamma(1,x)": (lambda x: torch.polygamma(1, x), torch.cat([grid(-20, 50), grid(1e-2, 1e4, log=True, positive=True)])),
    "polygamma(3,x)": (lambda x: torch.polygamma(3, x), grid(1e-1, 1e3, log=True, positive=True)),
    "lgamma": (torch.lgamma, torch.cat([grid(-50, 50), grid(1e-3, 1e30, log=True, positive=True)])),
    "mvlgamma(p=3)": (lambda x: torch.mvlgamma(x, 3), grid(1.01, 1e3, log=True, positive=True)),
    "erfc": (torch.erfc, grid(-10, 30)),
    "erfcx": (S.erfcx, torch.cat([grid(-9, 50), grid(1, 1e10, log=True, positive=True)])),
    "erfinv": (torch.erfinv, grid(-0.999999, 0.999999)),
    "i0": (torch.i0, grid(-80, 80)),
    "i0e": (S.i0e, grid(-1e4, 1e4)),
    "i1": (S.i1, grid(-80, 80)),
    "i1e": (S.i1e, grid(-1e4, 1e4)),
    "bessel_j0": (S.bessel_j0, grid(-200, 200)),
    "bessel_j1": (S.bessel_j1, grid(-200, 200)),
    "bessel_y0": (S.bessel_y0, grid(1e-3, 200)),
    "bessel_y1": (S.bessel_y1, grid(1e-2, 200)),
    "modified_bessel_i0": (S.modified_bessel_i0, grid(-80, 80)),
    "modified_bessel_i1": (S.modified_bessel_i1, grid(-80, 80)),
    "modified_bessel_k0": (S.modified_bessel_k0, grid(1e-3, 80)),
    "modified_bessel_k1": (S.modified_bessel_k1, grid(1e-2, 80)),
    "scaled_modified_bessel_k0": (S.scaled_modified_bessel_k0, grid(1e-3, 1e4, log=True, positive=True)),
    "scaled_modified_bessel_k1": (S.scaled_modified_bessel_k1, grid(1e-2, 1e4, log=True, positive=True)),
    "spherical_bessel_j0": (S.spherical_bessel_j0, grid(-200, 200)),
    "airy_ai": (S.airy_ai, grid(-50, 50)),
    "ndtri": (S.ndtri, grid(1e-6, 1 - 1e-6)),
    "log_ndtr": (S.log_ndtr, grid(-100, 30)),
    "zeta(x,2)": (lambda x: S.zeta(x, torch.full_like(x, 2.0)), grid(1.05, 60)),
    "igamma(3,x)": (lambda x: torch.igamma(torch.full_like(x, 3.0), x), grid(1e-3, 100)),
    "igammac(3,x)": (lambda x: torch.igammac(torch.full_like(x, 3.0), x), grid(1e-3, 100)),
}

class F(torch.nn.Module):
    def __init__(self, f):
        super().__init__(); self.f = f
    def forward(self, x):
        return self.f(x)

def err(y, ref, x):
    # (the gamma family's poles at 0, -1, -2, ...: float64 rounding gives the reference a huge finite value)
    ok = torch.isfinite(ref) & ~((x <= 0) & (x == x.round()))
    return ((y.double() - ref).abs() / (1 + ref.abs()))[ok].max().item()

rows = []
WORK = tempfile.mkdtemp(prefix="t2o_accuracy_")
for name, (f, xs) in FUNS.items():
    x32 = xs.float()
    ref = f(x32.double())  # the truth at the float32 inputs
    mine_torch = f(x32)
    path = os.path.join(WORK, f"{len(rows)}.onnx")
    try:
        torch2onnx.export(F(f), (x32,), path, opset_version=17, input_names=["x"], dynamic_axes={"x": [0]})
        y = torch.from_numpy(ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x32.numpy()})[0])
        e = err(y, ref, x32)
    except Exception as ex:
        e = f"error {str(ex)[:80]}"
    rows.append((name, float(x32.min()), float(x32.max()), e, err(mine_torch, ref, x32)))
shutil.rmtree(WORK)
print("| function | grid | torch2onnx (ORT, float32) | PyTorch float32 |")
print("|---|---|---|---|")
for name, lo, hi, e, t in rows:
    es = f"{e:.1e}" if isinstance(e, float) else e
    print(f"| {name} | [{lo:.3g}, {hi:.3g}] | {es} | {t:.1e} |")
