// Antialiased bilinear and bicubic resizing (F.interpolate(..., antialias=True),
// torchvision's Resize) before opset 18, where Resize has no antialias: the
// filter is separable, so with static sizes each axis is one MatMul by a
// constant [out, in] matrix holding PyTorch's own weights (its _aa kernels,
// PIL's filters: a triangle or Keys' cubic (a = -0.5) stretched by the scale
// when shrinking, each row normalized to sum 1). From 18, resize.cpp's Resize.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::Value;

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double keys_cubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// PyTorch's area_pixel_compute_scale: input / output, 1 / scale_factor when
// one was given, (in - 1) / (out - 1) with align_corners.
double pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> factor) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (factor && *factor > 0) return 1.0 / *factor;
  return static_cast<double>(in) / static_cast<double>(out);
}

// The [out, in] weights of one axis (UpSampleKernel.cpp's _compute_weights_aa).
std::vector<double> axis_weights(int64_t in, int64_t out, double scale, bool cubic) {
  const double interp = cubic ? 4.0 : 2.0;
  const double support = scale >= 1.0 ? interp * 0.5 * scale : interp * 0.5;
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  std::vector<double> w(static_cast<size_t>(out * in), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t xmax = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    double total = 0.0;
    for (int64_t j = xmin; j < xmax; ++j) {
      const double x = (static_cast<double>(j) - center + 0.5) * invscale;
      const double v = cubic ? keys_cubic(x) : triangle(x);
      w[static_cast<size_t>(i * in + j)] = v;
      total += v;
    }
    if (total != 0.0)
      for (int64_t j = xmin; j < xmax; ++j) w[static_cast<size_t>(i * in + j)] /= total;
  }
  return w;
}

// aten::_upsample_bilinear2d_aa / _upsample_bicubic2d_aa(input, output_size,
// align_corners, scales_h=None, scales_w=None) and their .vec(input,
// output_size?, align_corners, scale_factors?) forms.
void upsample_aa(SymbolicContext& ctx, bool cubic) {
  if (ctx.rank(0) != 4) ctx.fail("antialiased interpolation takes a 4-D input");
  const auto& in = ctx.sizes(0);
  ctx.static_dim(0, 2), ctx.static_dim(0, 3);  // (the interpolation weights are constants)
  // The output sizes: output_size's when given (then it must be known at
  // export time), else the scale factors' of the static input sizes.
  std::vector<int64_t> out = ctx.out_info().sizes;
  if (!ctx.none(1)) {
    if (!ctx.constant(1))
      ctx.fail("output_size is computed at run time: antialiased interpolation before opset 18 builds its "
               "weights for sizes known at export time (export with opset 18 or later)");
    const std::vector<int64_t> size = ctx.is(1);
    if (size.size() != 2) ctx.fail("output_size must have 2 entries");
    if (out.size() == 4) out[2] = size[0], out[3] = size[1];
  }
  if (out.size() != 4) ctx.fail("the output shape is unknown");
  for (size_t d = 2; d < 4; ++d)
    if (in[d] < 0 || out[d] < 0) ctx.fail("antialiased interpolation before opset 18 needs static spatial sizes");
  const bool align = ctx.b(2);
  std::optional<double> factor[2];
  if (ctx.num_args() > 3 && !ctx.none(3) && ctx.arg(3).is_list()) {
    const std::vector<double> f = ctx.fs(3);
    if (f.size() == 2) factor[0] = f[0], factor[1] = f[1];
  } else {
    if (ctx.num_args() > 3) factor[0] = ctx.opt_f(3);
    if (ctx.num_args() > 4) factor[1] = ctx.opt_f(4);
  }
  // .vec with output_size given ignores the scale factors; with scale factors the sizes follow them
  if (ctx.num_args() > 3 && ctx.arg(3).is_list() && !ctx.none(1)) factor[0] = factor[1] = std::nullopt;
  const ir::DType t = ctx.dtype(0) == ir::DType::Double ? ir::DType::Double : ir::DType::Float;
  Value* x = ctx.cast(ctx.in(0), t);
  const int64_t h = in[2], w = in[3], oh = out[2], ow = out[3];
  const auto wh = axis_weights(h, oh, pixel_scale(h, oh, align, factor[0]), cubic);
  const auto ww = axis_weights(w, ow, pixel_scale(w, ow, align, factor[1]), cubic);
  std::vector<double> ww_t(static_cast<size_t>(w * ow));  // [in, out] for x @ W^T
  for (int64_t i = 0; i < ow; ++i)
    for (int64_t j = 0; j < w; ++j) ww_t[static_cast<size_t>(j * ow + i)] = ww[static_cast<size_t>(i * w + j)];
  if (ow != w || align || factor[1]) x = ctx.op("MatMul", {x, ctx.constant(ir::Tensor::from_doubles(t, ww_t, {w, ow}))});
  if (oh != h || align || factor[0]) x = ctx.op("MatMul", {ctx.constant(ir::Tensor::from_doubles(t, wh, {oh, h})), x});
  ctx.out(ctx.cast(x, ctx.dtype(0)));
}

}  // namespace

void register_antialias(Registry& r) {
  r.add("aten::_upsample_bilinear2d_aa", 9, [](SymbolicContext& c) { upsample_aa(c, false); });
  r.add("aten::_upsample_bicubic2d_aa", 9, [](SymbolicContext& c) { upsample_aa(c, true); });
}

}  // namespace torch2onnx::symbolics
