"""Interpolation (src/symbolics/resize.cpp): F.interpolate / nn.Upsample in every
mode, with size= or scale_factor=, align_corners, recompute_scale_factor;
grid_sample (GridSample from opset 16).

Opsets 9 (Upsample) and 10 (Resize-10) only map coordinates asymmetrically
with truncation: they match PyTorch for nearest upsampling by whole factors
and nothing else, so the other modes start at opset 11.
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
x1 = torch.randn(2, 3, 7)
x2 = torch.randn(2, 3, 5, 6)
x3 = torch.randn(1, 2, 3, 4, 5)
xd = torch.randn(2, 3, 16, 20) * 3  # to shrink, antialiased

FROM_11 = {9: "supported from opset 11", 10: "supported from opset 11"}
NEEDS_11 = {9: "needs opset 11", 10: "needs opset 11"}
ALL = (9, 10, 11, 13, 17)
DYN_HW = ("--dynamic-axes", '{"x":[2,3]}', "--input-names", "x")


def interp(**kw):
    return lambda x: F.interpolate(x, **kw)


# aten::__interpolate called by name (module-level functions: inside a class
# body Python would mangle the double underscore).
def interpolate_nearest(x):
    return torch.ops.aten.__interpolate(x, None, [2.0, 3.0], "nearest", None, None, False)


def interpolate_bilinear(x):
    return torch.ops.aten.__interpolate(x, [7, 9], None, "bilinear", True, None, False)


def interpolate_bicubic_scale(x):  # recompute_scale_factor=None recomputes here
    return torch.ops.aten.__interpolate(x, None, 1.5, "bicubic", False, None, False)


def interpolate_keep_scale(x):
    return torch.ops.aten.__interpolate(x, None, [1.5, 1.3], "bilinear", False, False, False)


def interpolate_recompute(x):
    return torch.ops.aten.__interpolate(x, None, [1.7], "linear", False, True, False)


def interpolate_size(x):
    return torch.ops.aten.__interpolate(x, 14, None, "nearest", None, None, False)


class Scripted(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


GRID_OPSETS = (16, 17, 20)
AA_OPSETS = (18, 23)


def grid(*shape):
    return torch.rand(*shape) * 2.4 - 1.2  # partly outside [-1, 1]


CASES = [
    # nearest: whole upsampling factors work from opset 9 (Upsample / Resize-10)
    Case("nearest_scale2", interp(scale_factor=2.0), (x2,), opsets=ALL),
    Case("nearest_scale_hw", interp(scale_factor=(2, 3)), (x2,), opsets=ALL),
    Case("nearest_size_multiple", interp(size=(10, 18)), (x2,), opsets=ALL),
    Case("nearest_1d", interp(scale_factor=3), (x1,), opsets=ALL),
    Case("nearest_3d", interp(scale_factor=2), (x3,), opsets=ALL),
    Case("nearest_3d_size", interp(size=(6, 4, 10)), (x3,), opsets=ALL),
    Case("upsample_module", nn.Upsample(scale_factor=2, mode="nearest"), (x2,), opsets=ALL),
    Case("upsample_nearest_int", interp(scale_factor=2.0), (torch.randint(0, 9, (1, 2, 3, 4)).to(torch.uint8),),
         opsets=(9, 11, 17)),
    # nearest with other factors: opset 11
    Case("nearest_scale_fraction", interp(scale_factor=1.5), (x2,), min_opset=11, error_below=NEEDS_11),
    Case("nearest_downscale", interp(scale_factor=0.5), (torch.randn(1, 2, 8, 12),), min_opset=11,
         error_below=NEEDS_11),
    Case("nearest_size", interp(size=(7, 11)), (x2,), min_opset=11, error_below=NEEDS_11),
    Case("nearest_size_down", interp(size=(3, 4)), (x2,), min_opset=11),
    Case("nearest_1d_size", interp(size=11), (x1,), min_opset=11),
    Case("nearest_3d_scale", interp(scale_factor=(1.5, 2.0, 0.6)), (x3,), min_opset=11),
    Case("nearest_recompute", interp(scale_factor=1.7, recompute_scale_factor=True), (x2,), min_opset=11),
    Case("nearest_exact", interp(scale_factor=1.5, mode="nearest-exact"), (x2,), min_opset=11,
         error_below=FROM_11),
    Case("nearest_exact_size", interp(size=(4, 9), mode="nearest-exact"), (x2,), min_opset=11),
    Case("nearest_exact_1d", interp(scale_factor=0.7, mode="nearest-exact"), (torch.randn(1, 2, 10),),
         min_opset=11),
    Case("nearest_exact_3d", interp(size=(5, 3, 7), mode="nearest-exact"), (x3,), min_opset=11),
    # linear / bilinear / trilinear
    Case("linear_1d", interp(scale_factor=2.0, mode="linear"), (x1,), min_opset=11, error_below=FROM_11),
    Case("linear_1d_size_align", interp(size=12, mode="linear", align_corners=True), (x1,), min_opset=11),
    Case("linear_1d_down", interp(scale_factor=0.6, mode="linear"), (x1,), min_opset=11),
    Case("bilinear_scale", interp(scale_factor=2.0, mode="bilinear"), (x2,), min_opset=11, error_below=FROM_11),
    Case("bilinear_size", interp(size=(7, 9), mode="bilinear"), (x2,), min_opset=11),
    Case("bilinear_align", interp(scale_factor=(1.5, 2.5), mode="bilinear", align_corners=True), (x2,),
         min_opset=11),
    Case("bilinear_size_align", interp(size=(9, 4), mode="bilinear", align_corners=True), (x2,), min_opset=11),
    Case("bilinear_down", interp(scale_factor=0.5, mode="bilinear"), (torch.randn(1, 3, 8, 10),), min_opset=11),
    Case("bilinear_to_one", interp(size=(1, 1), mode="bilinear"), (x2,), min_opset=11),
    Case("bilinear_recompute", interp(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True), (x2,),
         min_opset=11),
    Case("bilinear_fraction", interp(scale_factor=1.3, mode="bilinear"), (x2,), min_opset=11),
    Case("upsample_bilinear_module", nn.UpsamplingBilinear2d(scale_factor=2), (x2,), min_opset=11),
    Case("trilinear", interp(scale_factor=2.0, mode="trilinear"), (x3,), min_opset=11, error_below=FROM_11),
    Case("trilinear_size_align", interp(size=(4, 7, 3), mode="trilinear", align_corners=True), (x3,),
         min_opset=11),
    Case("trilinear_mixed", interp(scale_factor=(1.5, 0.5, 2.0), mode="trilinear"), (x3,), min_opset=11),
    # bicubic
    Case("bicubic", interp(scale_factor=2.0, mode="bicubic"), (x2,), min_opset=11, error_below=FROM_11),
    Case("bicubic_size", interp(size=(8, 11), mode="bicubic"), (x2,), min_opset=11),
    Case("bicubic_align", interp(scale_factor=1.7, mode="bicubic", align_corners=True), (x2,), min_opset=11),
    Case("bicubic_align_recompute",
         interp(scale_factor=1.7, mode="bicubic", align_corners=True, recompute_scale_factor=True), (x2,),
         min_opset=11),
    Case("bicubic_down", interp(size=(3, 4), mode="bicubic"), (x2,), min_opset=11),
    # scale factors on dynamic spatial dims (issue 43): what PyTorch's kernels decide from the sizes (a
    # size kept: linear copies it, nearest/cubic still resample, which ONNX Runtime's copy of an unchanged
    # shape does not; one channel: nearest keeps or halves) is decided from the run's sizes, not the example's
    Case("bilinear_scale_dynamic", interp(scale_factor=1.2, mode="bilinear"), (torch.randn(1, 3, 4, 4),),
         opsets=(11, 13, 17), extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(1, 3, 20, 20),), (torch.randn(1, 3, 4, 9),), (torch.randn(1, 3, 7, 3),)]),
    # (sizes where ONNX Runtime's x / scale and PyTorch's x * (1 / scale) in float floor alike: at 20 they
    # do not, with the example's sizes static too)
    Case("nearest_scale_dynamic", interp(scale_factor=1.2), (torch.randn(1, 3, 4, 4),), opsets=(11, 13, 17),
         error_below=NEEDS_11, extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(1, 3, 10, 10),), (torch.randn(1, 3, 4, 9),), (torch.randn(1, 3, 2, 3),)]),
    Case("nearest_scale_dynamic_one_channel", interp(scale_factor=2.4), (torch.randn(1, 1, 5, 5),),
         opsets=(11, 17), extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(1, 1, 2, 2),), (torch.randn(1, 1, 2, 7),), (torch.randn(1, 1, 9, 4),)]),
    Case("nearest_exact_scale_dynamic", interp(scale_factor=1.25, mode="nearest-exact"), (torch.randn(1, 2, 3, 3),),
         opsets=(11, 17), extra=DYN_HW, pt2=False, more_args=[(torch.randn(1, 2, 8, 8),), (torch.randn(1, 2, 2, 5),)]),
    Case("bicubic_scale_dynamic", interp(scale_factor=1.5, mode="bicubic"), (torch.randn(1, 2, 6, 6),),
         opsets=(11, 17), extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(1, 2, 1, 1),), (torch.randn(1, 2, 9, 4),)]),
    Case("linear_1d_scale_dynamic", interp(scale_factor=1.3, mode="linear"), (torch.randn(1, 2, 3),),
         opsets=(11, 17), extra=("--dynamic-axes", '{"x":[2]}', "--input-names", "x"), pt2=False,
         more_args=[(torch.randn(1, 2, 10),)]),
    # opsets 9-10: whole factors map the same at every size; an output size gives the example's factor,
    # so the input's sizes must be static, and one computed at run time is refused
    Case("nearest_scale2_dynamic", interp(scale_factor=2.0), (x2,), opsets=ALL, extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(2, 3, 7, 4),)]),
    Case("nearest_size_dynamic", interp(size=(10, 12)), (x2,), opsets=(11, 13),
         error_below={9: "is dynamic", 10: "is dynamic"}, extra=DYN_HW, pt2=False,
         more_args=[(torch.randn(2, 3, 3, 4),)]),
    Case("nearest_size_at_run_time", lambda x, y: F.interpolate(x, size=y.shape[-2:]),
         (torch.randn(1, 2, 3, 4), torch.randn(1, 1, 6, 8)), opsets=(11, 13),
         error_below={9: "computed at run time", 10: "computed at run time"},
         extra=("--dynamic-axes", '{"y":[2,3]}', "--input-names", "x,y"), pt2=False,
         more_args=[(torch.randn(1, 2, 3, 4), torch.randn(1, 1, 9, 4))]),
    # direct calls of the non-.vec overloads (output_size plus optional scales)
    Case("upsample_nearest2d_direct", lambda x: torch.ops.aten.upsample_nearest2d(x, [10, 12]), (x2,),
         opsets=ALL),
    Case("upsample_nearest2d_direct_scales", lambda x: torch.ops.aten.upsample_nearest2d(x, [7, 9], 1.5, 1.5),
         (x2,), min_opset=11),
    Case("upsample_nearest1d_direct", lambda x: torch.ops.aten.upsample_nearest1d(x, [14]), (x1,), opsets=ALL),
    Case("upsample_nearest3d_direct", lambda x: torch.ops.aten.upsample_nearest3d(x, [6, 8, 10]), (x3,),
         opsets=ALL),
    Case("upsample_bilinear2d_direct", lambda x: torch.ops.aten.upsample_bilinear2d(x, [9, 8], False), (x2,),
         min_opset=11),
    Case("upsample_bilinear2d_direct_scales",
         lambda x: torch.ops.aten.upsample_bilinear2d(x, [10, 9], False, 2.0, 1.5), (x2,), min_opset=11),
    Case("upsample_linear1d_direct", lambda x: torch.ops.aten.upsample_linear1d(x, [10], True), (x1,),
         min_opset=11),
    Case("upsample_trilinear3d_direct", lambda x: torch.ops.aten.upsample_trilinear3d(x, [5, 5, 5], False),
         (x3,), min_opset=11),
    Case("upsample_bicubic2d_direct", lambda x: torch.ops.aten.upsample_bicubic2d(x, [6, 7], True), (x2,),
         min_opset=11),
    Case("upsample_nearest_exact1d_direct", lambda x: torch.ops.aten._upsample_nearest_exact1d(x, [11]), (x1,),
         min_opset=11),
    Case("upsample_nearest_exact3d_direct", lambda x: torch.ops.aten._upsample_nearest_exact3d(x, [4, 6, 7]),
         (x3,), min_opset=11),
    # aten::__interpolate (TorchScript)
    Case("interpolate_scripted", Scripted(interpolate_nearest), (x2,), script=True, opsets=ALL),
    Case("interpolate_scripted_bilinear", Scripted(interpolate_bilinear), (x2,), script=True, min_opset=11,
         error_below=NEEDS_11),
    Case("interpolate_scripted_bicubic_scale", Scripted(interpolate_bicubic_scale), (x2,), script=True, min_opset=11),
    Case("interpolate_scripted_recompute", Scripted(interpolate_recompute), (x1,), script=True, min_opset=11),
    Case("interpolate_scripted_keep_scale", Scripted(interpolate_keep_scale), (x2,), script=True, min_opset=11),
    Case("interpolate_scripted_size", Scripted(interpolate_size), (x1,), script=True, opsets=ALL),
    # grid_sample
    Case("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False), (x2, grid(2, 4, 7, 2)),
         opsets=GRID_OPSETS, error_below={9: "supported from opset 16", 15: "supported from opset 16"}),
    Case("grid_sample_align", lambda x, g: F.grid_sample(x, g, align_corners=True), (x2, grid(2, 3, 3, 2)),
         opsets=GRID_OPSETS),
    Case("grid_sample_nearest_border", lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border",
                                                                  align_corners=False), (x2, grid(2, 5, 4, 2)),
         opsets=GRID_OPSETS),
    Case("grid_sample_bicubic_reflection",
         lambda x, g: F.grid_sample(x, g, mode="bicubic", padding_mode="reflection", align_corners=True),
         (x2, grid(2, 4, 4, 2)), opsets=GRID_OPSETS),
    Case("grid_sample_bilinear_reflection",
         lambda x, g: F.grid_sample(x, g, mode="bilinear", padding_mode="reflection", align_corners=False),
         (x2, grid(2, 4, 4, 2)), opsets=GRID_OPSETS),
    Case("grid_sample_bicubic_zeros", lambda x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False),
         (x2, grid(2, 6, 5, 2)), opsets=GRID_OPSETS),
    Case("grid_sample_nearest_zeros_align", lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=True),
         (x2, grid(2, 6, 5, 2)), opsets=GRID_OPSETS),
    # antialiased interpolation: Resize-18's antialias (PIL's filters, as PyTorch's _aa kernels)
    Case("interpolate_antialias_bilinear_down", lambda x: F.interpolate(x, size=(5, 7), mode="bilinear",
                                                                        antialias=True), (xd,),
         opsets=(9, 17) + AA_OPSETS),  # (below 18: antialias.cpp)
    Case("interpolate_antialias_bilinear_scale", lambda x: F.interpolate(x, scale_factor=0.4, mode="bilinear",
                                                                         antialias=True), (xd,), opsets=AA_OPSETS),
    Case("interpolate_antialias_bicubic_down", lambda x: F.interpolate(x, size=(6, 9), mode="bicubic",
                                                                       antialias=True), (xd,), opsets=AA_OPSETS),
    Case("interpolate_antialias_bilinear_up", lambda x: F.interpolate(x, size=(9, 11), mode="bilinear",
                                                                      antialias=True), (x2,), opsets=AA_OPSETS),
    Case("interpolate_antialias_bicubic_up", lambda x: F.interpolate(x, scale_factor=2, mode="bicubic",
                                                                     antialias=True), (x2,), opsets=AA_OPSETS),
    Case("interpolate_antialias_mixed", lambda x: F.interpolate(x, size=(4, 30), mode="bilinear",
                                                                antialias=True), (xd,), opsets=AA_OPSETS),
    Case("interpolate_antialias_align_corners", lambda x: F.interpolate(x, size=(5, 7), mode="bilinear",
                                                                        antialias=True, align_corners=True),
         (xd,), opsets=(), error_below={18: "align_corners=True has no ONNX form"}),
    # affine_grid: a constant base grid times theta^T; one AffineGrid from opset 20
    Case("affine_grid", lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False), (torch.randn(2, 2, 3),),
         opsets=(9, 17, 20, 23)),
    Case("affine_grid_align", lambda t: F.affine_grid(t, [1, 1, 3, 6], align_corners=True), (torch.randn(1, 2, 3),),
         opsets=(9, 20)),
    Case("affine_grid_3d", lambda t: F.affine_grid(t, [2, 1, 2, 3, 4], align_corners=False),
         (torch.randn(2, 3, 4),), opsets=(9, 20)),
    Case("affine_grid_sample", lambda x, t: F.grid_sample(x, F.affine_grid(t, list(x.shape), align_corners=False),
                                                          align_corners=False),
         (x2, torch.eye(2, 3).repeat(2, 1, 1) + 0.1 * torch.randn(2, 2, 3)), opsets=(16, 20)),
    # GridSample-20: the modes renamed, and volumetric (5-D) sampling
    Case("grid_sample_3d", lambda x, g: F.grid_sample(x, g, align_corners=False), (x3, grid(1, 2, 3, 4, 3)),
         opsets=(20, 23), error_below={17: "5-D from opset 20"}),
    Case("grid_sample_3d_nearest_border",
         lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True),
         (x3, grid(1, 3, 2, 2, 3)), opsets=(20,)),
]

results = optest.results_fixture(CASES)
test_case = optest.case_test(CASES)
