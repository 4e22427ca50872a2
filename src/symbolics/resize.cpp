// Interpolation: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d, upsample_linear1d,
// upsample_bilinear2d, upsample_bicubic2d, upsample_trilinear3d, __interpolate, grid_sampler.
//
// PyTorch maps an output coordinate x to the input as
//   nearest:        floor(x * r)                      (asymmetric, floor)
//   nearest-exact:  floor((x + 0.5) * r)              (half_pixel, round_prefer_ceil)
//   linear/cubic:   (x + 0.5) * r - 0.5               (half_pixel)
//                   x * (in - 1) / (out - 1)          (align_corners)
// with r = 1 / scale_factor when a scale factor is given, else in / out. ONNX
// Resize computes the same with its `scales` input (r = 1 / scale) or `sizes`
// (r = in / out), so scale factors go to `scales` and sizes to `sizes`.
// Upsample (opset 9) and Resize-10 only have asymmetric coordinates and
// truncating nearest rounding: they express nearest upsampling by integer
// factors and nothing else.
#include <algorithm>
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;

struct Plan {
  std::string mode;  // "nearest", "nearest-exact", "linear", "cubic"
  bool align_corners = false;
  int64_t nd = 0;  // spatial dims
  // PyTorch's scale factors (one per spatial dim) when it maps with them.
  std::optional<std::vector<double>> scales;
  // Otherwise the output sizes (1-D int64, one per spatial dim).
  ir::Value* sizes = nullptr;
  bool sizes_at_run_time = false;  // computed at run time (not constants)
  // Antialiased (PyTorch's _aa kernels, PIL's filters; Resize-18's antialias).
  bool antialias = false;
};

int64_t spatial_rank(SymbolicContext& ctx, int64_t nd_expected) {
  const int64_t rank = ctx.rank(0);
  if (rank != nd_expected + 2)
    ctx.fail("expected a " + std::to_string(nd_expected + 2) + "-D input, got rank " + std::to_string(rank));
  return nd_expected;
}

// Reads output_size (argument size_idx) and scales starting at scales_idx:
// a float list (.vec overloads) or one optional float per spatial dim.
void read_size_and_scales(SymbolicContext& ctx, Plan& p, size_t size_idx, size_t scales_idx) {
  std::vector<std::optional<double>> scales(static_cast<size_t>(p.nd));
  bool any_scale = false;
  if (!ctx.none(scales_idx) && ctx.arg(scales_idx).is_list()) {
    std::vector<double> s = ctx.fs(scales_idx);
    if (s.size() == 1 && p.nd > 1) s.assign(static_cast<size_t>(p.nd), s[0]);
    if (static_cast<int64_t>(s.size()) != p.nd) ctx.fail("expected " + std::to_string(p.nd) + " scale factors");
    for (size_t i = 0; i < s.size(); ++i) scales[i] = s[i];
    any_scale = true;
  } else {
    for (int64_t i = 0; i < p.nd; ++i) {
      const size_t idx = scales_idx + static_cast<size_t>(i);
      if (idx < ctx.num_args() && !ctx.none(idx) && ctx.arg(idx).kind != Arg::Kind::List) {
        const double s = ctx.f(idx);
        if (s > 0) {
          scales[static_cast<size_t>(i)] = s;
          any_scale = true;
        }
      }
    }
  }
  const bool has_size = !ctx.none(size_idx);
  if (!has_size && !any_scale) ctx.fail("either output_size or scale factors must be given");
  bool all_scales = any_scale;
  for (const auto& s : scales) all_scales = all_scales && s.has_value();
  if (all_scales) {
    // (with an output size too, PyTorch's output has that size while the scales map positions:
    // one Resize reproduces both only for the example's input size)
    if (has_size)
      for (int64_t i = 0; i < p.nd; ++i) ctx.static_dim(0, 2 + i);
    std::vector<double> s;
    for (const auto& v : scales) s.push_back(*v);
    p.scales = s;
    return;
  }
  if (!has_size) ctx.fail("scale factors are missing for some dimensions");
  // Sizes with scales for some dims only: fine when those agree with in / out.
  if (any_scale) {
    const auto& in = ctx.sizes(0);
    const auto& out = ctx.out_info().sizes;
    for (int64_t i = 0; i < p.nd; ++i) {
      const auto& s = scales[static_cast<size_t>(i)];
      const size_t d = static_cast<size_t>(2 + i);
      if (s) ctx.static_dim(0, static_cast<int64_t>(d));  // (agreeing at the example's size only)
      if (s && out.size() > d && std::abs(1.0 / *s - static_cast<double>(in[d]) / static_cast<double>(out[d])) > 1e-9)
        ctx.fail("an output size together with a scale factor that differs from it cannot be exported");
    }
  }
  p.sizes = ctx.ints_value(size_idx);
  p.sizes_at_run_time = !ctx.constant(size_idx);
}

// A float scale with which ONNX Runtime's output size, in * scale truncated
// (computed in float), is PyTorch's `want` = floor(in * s).
float fit_scale(const SymbolicContext& ctx, int64_t in, int64_t want, double s) {
  float f = static_cast<float>(s);
  auto got = [&]() { return static_cast<int64_t>(static_cast<float>(in) * f); };
  for (int k = 0; k < 8 && got() != want; ++k)
    f = std::nextafter(f, got() < want ? std::numeric_limits<float>::infinity() : 0.0f);
  if (got() != want) ctx.fail("cannot reproduce the output size " + std::to_string(want) + " with a float scale");
  return f;
}

// PyTorch 2's nearest 2-D/3-D kernels keep a dim whose size does not change
// and halve indices where it doubles for every input; PyTorch 1.13's only in
// their channels-last kernel (one channel, or one spatial element).
#if defined(T2O_TORCH_MAJOR) && T2O_TORCH_MAJOR >= 2
constexpr bool kNearestKeepsEveryLayout = true;
#else
constexpr bool kNearestKeepsEveryLayout = false;
#endif

// PyTorch's input and output sizes of spatial dim i.
std::pair<int64_t, int64_t> spatial_sizes(const SymbolicContext& ctx, int64_t i) {
  const auto& in = ctx.sizes(0);
  const auto& out = ctx.out_info().sizes;
  const size_t d = static_cast<size_t>(2 + i);
  if (out.size() != in.size() || d >= in.size()) ctx.fail("the output shape is unknown");
  return {in[d], out[d]};
}

// The ONNX scale of each spatial dim reproducing PyTorch's mapping with its
// scale factors. PyTorch's kernels special-case some sizes whatever the scale
// factor says: linear keeps a dim whose size does not change; nearest 2-D/3-D
// in its channels-last kernel (which contiguous inputs with one channel take)
// keeps it too and halves indices when the size doubles.
std::vector<float> spatial_scales(const SymbolicContext& ctx, const Plan& p) {
  const auto& in_shape = ctx.sizes(0);
  int64_t spatial_numel = 1;
  for (size_t d = 2; d < in_shape.size(); ++d) spatial_numel *= in_shape[d];
  const bool channels_last_kernel =
      kNearestKeepsEveryLayout || (in_shape.size() >= 4 && (in_shape[1] == 1 || spatial_numel == 1));
  std::vector<float> out;
  for (int64_t i = 0; i < p.nd; ++i) {
    const auto [in_size, out_size] = spatial_sizes(ctx, i);
    const bool nearest_special = p.mode == "nearest" && p.nd >= 2 && channels_last_kernel;
    if (out_size == in_size && (p.mode == "linear" || nearest_special)) out.push_back(1.0f);
    else if (nearest_special && out_size == 2 * in_size) out.push_back(2.0f);
    else out.push_back(fit_scale(ctx, in_size, out_size, (*p.scales)[static_cast<size_t>(i)]));
  }
  return out;
}

ir::Value* float_list(SymbolicContext& ctx, const std::vector<float>& v) {
  std::vector<double> d(v.begin(), v.end());
  return ctx.constant(ir::Tensor::from_doubles(DType::Float, d, {static_cast<int64_t>(d.size())}));
}

ir::Value* empty_float(SymbolicContext& ctx) { return ctx.constant(ir::Tensor::from_doubles(DType::Float, {}, {0})); }

// Resize-11/13's attributes for the plan's mode.
ir::Attributes resize_attrs(SymbolicContext& ctx, const Plan& p) {
  std::string ctm, nearest_mode = "floor";
  std::string mode = p.mode;
  if (p.mode == "nearest") {
    ctm = "asymmetric";
  } else if (p.mode == "nearest-exact") {
    ctm = "half_pixel";
    nearest_mode = "round_prefer_ceil";
    mode = "nearest";
  } else {
    ctm = p.align_corners ? "align_corners" : "half_pixel";
  }
  ir::Attributes attrs{{"mode", mode}, {"coordinate_transformation_mode", ctm}};
  if (mode == "nearest") attrs.emplace_back("nearest_mode", nearest_mode);
  if (mode == "cubic") {
    attrs.emplace_back("cubic_coeff_a", p.antialias ? -0.5 : -0.75);  // (antialiased: PIL's bicubic)
    if (!p.antialias) attrs.emplace_back("exclude_outside", int64_t{0});
  }
  if (p.antialias) {
    // PyTorch's _aa kernels are PIL's filters: taps outside the input are
    // dropped and the others renormalized.
    if (p.align_corners)
      ctx.fail("antialiased interpolation with align_corners=True has no ONNX form (Resize's antialias filters "
               "are centred on half pixels)");
    attrs.emplace_back("exclude_outside", int64_t{1});
    attrs.emplace_back("antialias", int64_t{1});
  }
  return attrs;
}

// Resize-11/13 of x [N, C, spatial...] with the plan's sizes, or with
// `scales` (one per spatial dim of x) when the plan has scale factors.
ir::Value* resize11(SymbolicContext& ctx, ir::Value* x, const Plan& p, std::vector<float> scales) {
  ir::Attributes attrs = resize_attrs(ctx, p);
  if (!p.scales) {
    ir::Value* nc = helpers::slice(ctx, ctx.op("Shape", {x}), {0}, {0}, {2});
    ir::Value* sizes = ctx.op("Concat", {nc, p.sizes}, {{"axis", int64_t{0}}});
    return ctx.op("Resize", {x, empty_float(ctx), empty_float(ctx), sizes}, std::move(attrs));
  }
  // ONNX Runtime copies the input when the output shape equals it, whatever
  // the scales; PyTorch still resamples (nearest, nearest-exact, cubic). Then
  // the last resampled dim is extended with copies of its edge until the
  // resized shape differs, and sliced back after: the mapping only depends
  // on the scale, and the edge copies read like the clamped edge.
  const int64_t rank = static_cast<int64_t>(scales.size()) + 2;
  int64_t grow = -1;
  bool same_shape = true;
  const int64_t nd = static_cast<int64_t>(scales.size());
  std::vector<int64_t> out_sizes;
  for (int64_t i = 0; i < nd; ++i) {
    // (An axis added for 1-D linear interpolation keeps size 1.)
    const int64_t pt_dim = i + (p.nd - nd);
    const auto [in_size, out_size] = pt_dim < 0 ? std::pair<int64_t, int64_t>{1, 1} : spatial_sizes(ctx, pt_dim);
    out_sizes.push_back(out_size);
    same_shape = same_shape && in_size == out_size;
    // ONNX sizes the output floor(in * scale) with the scale a float: ONNX's
    // shape inference multiplies in double, ONNX Runtime in float, PyTorch
    // (its scale a double) in double. For 10 * 0.7 that is 6, 7 and 7. The
    // scale is moved by the fewest float steps that make all three agree
    // (the sampling positions move by as little).
    float& sc = scales[static_cast<size_t>(i)];
    for (int step = 0; step < 16 && in_size > 0 && sc > 0; ++step) {
      const auto in_double = static_cast<int64_t>(std::floor(static_cast<double>(in_size) * static_cast<double>(sc)));
      const auto in_float = static_cast<int64_t>(std::floor(static_cast<float>(in_size) * sc));
      if (in_double == out_size && in_float == out_size) break;
      const bool up = std::min(in_double, in_float) < out_size;
      sc = std::nextafter(sc, up ? std::numeric_limits<float>::infinity() : 0.0f);
    }
    if (scales[static_cast<size_t>(i)] != 1.0f) grow = i;
  }
  std::vector<float> all{1.0f, 1.0f};
  all.insert(all.end(), scales.begin(), scales.end());
  if (!same_shape || grow < 0) return ctx.op("Resize", {x, empty_float(ctx), float_list(ctx, all)}, std::move(attrs));
  const int64_t in_grow = ctx.sizes(0)[static_cast<size_t>(2 + grow + (p.nd - nd))];
  const float f = scales[static_cast<size_t>(grow)];
  int64_t extra = 1;
  while (extra <= 4096 && static_cast<int64_t>(static_cast<float>(in_grow + extra) * f) == in_grow + extra) ++extra;
  if (extra > 4096) ctx.fail("a scale factor this close to 1 on an unchanged size cannot be exported");
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  pads[static_cast<size_t>(rank + 2 + grow)] = extra;
  ir::Value* y = ctx.op("Resize", {helpers::pad(ctx, x, pads, "edge", 0.0), empty_float(ctx), float_list(ctx, all)},
                        std::move(attrs));
  return helpers::slice(ctx, y, {2 + grow}, {0}, {out_sizes[static_cast<size_t>(grow)]});
}

// Whether sizes that PyTorch's scale-factor kernels special-case (the spatial
// sizes; for nearest, the channels too: spatial_scales) vary with the
// export's dynamic axes.
bool special_sizes_dynamic(const SymbolicContext& ctx, const Plan& p) {
  for (int64_t i = 0; i < p.nd; ++i)
    if (ctx.dim_is_dynamic(0, 2 + i)) return true;
  return p.mode == "nearest" && p.nd >= 2 && ctx.dim_is_dynamic(0, 1);
}

// Resize-11/13 of x [N, C, spatial...] with the plan's scale factors when
// sizes PyTorch's kernels special-case vary (special_sizes_dynamic): what
// spatial_scales and resize11 decide from the example's sizes is decided from
// the run's. The first `added` spatial axes of x (1-D linear run as 2-D) have
// size 1 and scale 1.
ir::Value* resize11_run_time(SymbolicContext& ctx, ir::Value* x, const Plan& p, int64_t added) {
  ir::Attributes attrs = resize_attrs(ctx, p);
  const int64_t nd = p.nd + added;
  std::vector<double> s(static_cast<size_t>(added), 1.0);
  s.insert(s.end(), p.scales->begin(), p.scales->end());
  std::vector<float> f{1.0f, 1.0f};  // Resize's scales (N and C kept)
  for (double v : s) f.push_back(static_cast<float>(v));
  ir::Value* shape = ctx.op("Shape", {x});
  ir::Value* in = helpers::slice(ctx, shape, {0}, {2}, {2 + nd});  // [nd]
  // PyTorch's output sizes: floor(in * scale), in double.
  ir::Value* factors = ctx.constant(ir::Tensor::from_doubles(DType::Double, s, {nd}));
  ir::Value* out = ctx.cast(ctx.op("Floor", {ctx.op("Mul", {ctx.cast(in, DType::Double), factors})}), DType::Int64);
  // The special cases change a scale only where the size stays (a scale in
  // (1, 2)) or, nearest's, doubles (in (2, 3)).
  const bool nearest_cl = p.mode == "nearest" && p.nd >= 2;
  bool special = false;
  for (double v : s) special = special || (v > 1.0 && v != 2.0 && v < (nearest_cl ? 3.0 : 2.0));
  ir::Value* all = float_list(ctx, f);
  if (special && (p.mode == "linear" || nearest_cl)) {
    ir::Value* scales = float_list(ctx, std::vector<float>(f.begin() + 2, f.end()));
    ir::Value* one = ctx.const_scalar(DType::Float, 1.0);
    ir::Value* same = ctx.op("Equal", {out, in});
    if (p.mode == "linear") {
      scales = ctx.op("Where", {same, one, scales});  // (a dim whose size does not change is kept)
    } else {
      // The channels-last kernel (one channel, or one spatial element) keeps
      // a dim whose size does not change and halves indices where it doubles.
      ir::Value* unit = ctx.const_ints({1});
      ir::Value* channels = helpers::slice(ctx, shape, {0}, {1}, {2});
      ir::Value* numel = helpers::reduce(ctx, "ReduceProd", in, {0}, true);
      ir::Value* cl = kNearestKeepsEveryLayout ? ctx.constant(ir::Tensor::owned(DType::Bool, {1}, {1}))
                                               : ctx.op("Or", {ctx.op("Equal", {channels, unit}),
                                                                ctx.op("Equal", {numel, unit})});  // [1]
      ir::Value* doubled = ctx.op("Equal", {out, ctx.op("Mul", {in, ctx.const_ints({2})})});
      scales = ctx.op("Where", {ctx.op("And", {cl, doubled}), ctx.const_scalar(DType::Float, 2.0), scales});
      scales = ctx.op("Where", {ctx.op("And", {cl, same}), one, scales});
    }
    all = ctx.op("Concat", {float_list(ctx, {1.0f, 1.0f}), scales}, {{"axis", int64_t{0}}});
  }
  // ONNX Runtime copies the input when the output shape equals it (resize11),
  // where PyTorch resamples but in linear mode. When every dim may keep its
  // size at some run-time size, the last dim with a scale other than 1 (above
  // 1, as it may keep its size) is extended with copies of its edge, enough
  // for its size to grow at every length, and sliced back to PyTorch's after.
  const auto& in_sizes = ctx.sizes(0);
  // (align_corners maps by the sizes, not the scale: an unchanged size is the identity, as ONNX Runtime copies it)
  bool may_keep = p.mode != "linear" && !(nearest_cl && kNearestKeepsEveryLayout) && !p.align_corners;
  int64_t grow = -1;
  for (int64_t i = 0; i < nd && may_keep; ++i) {
    const double si = s[static_cast<size_t>(i)];
    if (si == 1.0) continue;
    const int64_t d = 2 + i - added;  // (the added axes have scale 1)
    if (ctx.dim_is_dynamic(0, d)) {
      may_keep = si > 1.0 && si < 2.0;
    } else {
      const int64_t n = in_sizes[static_cast<size_t>(d)];
      may_keep = static_cast<int64_t>(std::floor(static_cast<double>(n) * si)) == n;
    }
    grow = i;
  }
  if (!may_keep || grow < 0) return ctx.op("Resize", {x, empty_float(ctx), all}, std::move(attrs));
  const double fg = f[static_cast<size_t>(2 + grow)];
  const double need = fg > 1.0 ? std::ceil(1.0 / (fg - 1.0)) + 2.0 : 1e9;
  if (need > 4096) ctx.fail("a scale factor this close to 1 on an unchanged size cannot be exported");
  const int64_t rank = nd + 2;
  std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
  pads[static_cast<size_t>(rank + 2 + grow)] = static_cast<int64_t>(need);
  ir::Value* y = ctx.op("Resize", {helpers::pad(ctx, x, pads, "edge", 0.0), empty_float(ctx), all}, std::move(attrs));
  ir::Value* end = helpers::slice(ctx, out, {0}, {grow}, {grow + 1});
  return helpers::slice_dynamic(ctx, y, ctx.const_ints({0}), end, ctx.const_ints({2 + grow}), nullptr);
}

// 1-D linear interpolation runs as 2-D on [N, C, 1, L] (what ONNX Runtime's linear mode supports).
ir::Value* resize11_any(SymbolicContext& ctx, ir::Value* x, Plan p) {
  const bool at_run_time = p.scales && special_sizes_dynamic(ctx, p);
  std::vector<float> scales;
  if (p.scales && !at_run_time) scales = spatial_scales(ctx, p);
  if (p.mode != "linear" || p.nd != 1)
    return at_run_time ? resize11_run_time(ctx, x, p, 0) : resize11(ctx, x, p, scales);
  ir::Value* x4 = helpers::unsqueeze(ctx, x, {2});
  if (at_run_time) return helpers::squeeze(ctx, resize11_run_time(ctx, x4, p, 1), {2});
  if (p.scales) scales.insert(scales.begin(), 1.0f);
  else p.sizes = ctx.op("Concat", {ctx.const_ints({1}), p.sizes}, {{"axis", int64_t{0}}});
  return helpers::squeeze(ctx, resize11(ctx, x4, p, scales), {2});
}

// Opsets 9 and 10: nearest upsampling where PyTorch's mapping is floor(x / k)
// for a whole k in every spatial dim.
std::vector<float> integer_scales(SymbolicContext& ctx, const Plan& p) {
  if (p.mode != "nearest")
    ctx.fail("'" + p.mode + "' interpolation matching PyTorch needs opset 11 or later");
  if (p.scales && special_sizes_dynamic(ctx, p)) {
    // (sizes that vary: only whole factors map the same at every size)
    std::vector<float> s{1.0f, 1.0f};
    for (double k : *p.scales) {
      if (!(k >= 1.0 && k == std::floor(k)))
        ctx.fail("nearest interpolation by a factor that is not a whole number needs opset 11 or later");
      s.push_back(static_cast<float>(k));
    }
    return s;
  }
  if (!p.scales) {  // (the factors are the example's output sizes over its input sizes)
    if (p.sizes_at_run_time)
      ctx.fail("an output size computed at run time needs opset 11 or later (Upsample and Resize-10 take "
               "scale factors fixed at export time)");
    for (int64_t i = 0; i < p.nd; ++i) ctx.static_dim(0, 2 + i);
  }
  std::vector<float> given;
  if (p.scales) given = spatial_scales(ctx, p);
  std::vector<float> s{1.0f, 1.0f};
  for (int64_t i = 0; i < p.nd; ++i) {
    const auto [in_size, out_size] = spatial_sizes(ctx, i);
    const bool whole = in_size > 0 && out_size >= in_size && out_size % in_size == 0;
    const float k = whole ? static_cast<float>(out_size / in_size) : 0.0f;
    if (!whole || (p.scales && given[static_cast<size_t>(i)] != k))
      ctx.fail("nearest interpolation by a factor that is not a whole number needs opset 11 or later");
    s.push_back(k);
  }
  return s;
}

// Resize18: Resize-11's lowering, antialiasing allowed.
enum class Lowering { Upsample9, Resize10, Resize11, Resize18 };

ir::Value* lower(SymbolicContext& ctx, const Plan& p, Lowering how) {
  ir::Value* x = ctx.in(0);
  switch (how) {
    case Lowering::Upsample9: {
      auto s = integer_scales(ctx, p);
      return ctx.op("Upsample", {x, float_list(ctx, s)}, {{"mode", std::string("nearest")}});
    }
    case Lowering::Resize10: {
      auto s = integer_scales(ctx, p);
      return ctx.op("Resize", {x, float_list(ctx, s)}, {{"mode", std::string("nearest")}});
    }
    case Lowering::Resize11:
    case Lowering::Resize18: return resize11_any(ctx, x, p);
  }
  return nullptr;
}

// upsample_nearest{N}d(self, output_size, scales...) / .vec(input, output_size?, scale_factors?)
// and _upsample_nearest_exact{N}d.
void upsample_nearest(SymbolicContext& ctx, int64_t nd, const char* mode, Lowering how) {
  Plan p;
  p.mode = mode;
  p.nd = spatial_rank(ctx, nd);
  read_size_and_scales(ctx, p, 1, 2);
  ctx.out(lower(ctx, p, how));
}

// upsample_linear1d / bilinear2d / bicubic2d / trilinear3d (self, output_size, align_corners, scales...)
// and .vec(input, output_size?, align_corners, scale_factors?)
void upsample_interp(SymbolicContext& ctx, int64_t nd, const char* mode, bool antialias = false) {
  Plan p;
  p.mode = mode;
  p.antialias = antialias;
  p.nd = spatial_rank(ctx, nd);
  p.align_corners = ctx.b(2);
  read_size_and_scales(ctx, p, 1, 3);
  ctx.out(lower(ctx, p, Lowering::Resize11));
}

// __interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
void interpolate_with(SymbolicContext& ctx, Lowering how) {
  const int64_t nd = ctx.rank(0) - 2;
  if (nd < 1 || nd > 3) ctx.fail("interpolation needs a 3-D, 4-D or 5-D input");
  const std::string mode = ctx.num_args() > 3 && !ctx.none(3) ? ctx.s(3) : "nearest";
  const bool align = ctx.num_args() > 4 && !ctx.none(4) && ctx.b(4);
  // TorchScript's builtin recomputes the scale when recompute_scale_factor is None.
  const bool recompute = ctx.num_args() <= 5 || ctx.none(5) || ctx.b(5);
  Plan p;
  p.antialias = ctx.num_args() > 6 && !ctx.none(6) && ctx.b(6);
  if (p.antialias && how != Lowering::Resize18)
    ctx.fail("antialiased interpolation needs opset 18 or later (Resize's antialias)");
  p.nd = nd;
  p.align_corners = align;
  if (mode == "nearest" || mode == "nearest-exact") {
    if (align) ctx.fail("align_corners is only for linear, bilinear, bicubic and trilinear modes");
    p.mode = mode;
  } else if ((mode == "linear" && nd == 1) || (mode == "bilinear" && nd == 2) || (mode == "trilinear" && nd == 3)) {
    p.mode = "linear";
  } else if (mode == "bicubic" && nd == 2) {
    p.mode = "cubic";
  } else {
    ctx.fail("interpolation mode '" + mode + "' for a " + std::to_string(nd + 2) + "-D input cannot be exported");
  }
  if (p.antialias && p.mode != "linear" && p.mode != "cubic")
    ctx.fail("antialiasing is only for bilinear and bicubic interpolation (as in PyTorch)");
  if (how != Lowering::Resize11 && how != Lowering::Resize18 && p.mode != "nearest")
    ctx.fail("'" + mode + "' interpolation matching PyTorch needs opset 11 or later");
  const bool has_size = !ctx.none(1);
  const bool has_scale = !ctx.none(2);
  if (has_size == has_scale) ctx.fail("exactly one of size and scale_factor must be given");
  if (has_size) {
    const Arg& a = ctx.arg(1);
    if (a.is_list()) {
      if (static_cast<int64_t>(a.elements.size()) != nd) ctx.fail("size must have one entry per spatial dimension");
      p.sizes = ctx.ints_value(1);
    } else {
      ir::Value* s = helpers::unsqueeze(ctx, ctx.scalar_value(1, DType::Int64), {0});
      p.sizes = nd == 1 ? s : ctx.op("Expand", {s, ctx.const_ints({nd})});
    }
    p.sizes_at_run_time = !ctx.constant(1);
  } else {
    std::vector<double> s = ctx.fs(2);
    if (s.size() == 1) s.assign(static_cast<size_t>(nd), s[0]);
    if (static_cast<int64_t>(s.size()) != nd) ctx.fail("scale_factor must have one entry per spatial dimension");
    if (recompute) {
      // The output size from the scale, then mapped with in / out.
      const auto& in = ctx.sizes(0);
      bool dynamic = false;
      for (int64_t i = 0; i < nd; ++i) dynamic = dynamic || ctx.dim_is_dynamic(0, 2 + i);
      if (dynamic && (how == Lowering::Upsample9 || how == Lowering::Resize10)) {
        // (nearest: by whole factors in / out maps as the factor does; integer_scales checks them)
        p.scales = s;
      } else if (dynamic) {  // floor(in * s) at run time
        ir::Value* spatial = helpers::slice(ctx, ctx.op("Shape", {ctx.in(0)}), {0}, {2}, {2 + nd});
        ir::Value* scaled = ctx.op("Mul", {ctx.cast(spatial, DType::Double),
                                           ctx.constant(ir::Tensor::from_doubles(DType::Double, s, {nd}))});
        p.sizes = ctx.cast(ctx.op("Floor", {scaled}), DType::Int64);
        p.sizes_at_run_time = true;
      } else {
        std::vector<int64_t> out;
        for (int64_t i = 0; i < nd; ++i)
          out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[static_cast<size_t>(2 + i)]) *
                                                        s[static_cast<size_t>(i)])));
        p.sizes = ctx.const_ints(out);
      }
    } else {
      p.scales = s;
    }
  }
  ctx.out(lower(ctx, p, how));
}
void interpolate9(SymbolicContext& ctx) { interpolate_with(ctx, Lowering::Upsample9); }
void interpolate10(SymbolicContext& ctx) { interpolate_with(ctx, Lowering::Resize10); }
void interpolate11(SymbolicContext& ctx) { interpolate_with(ctx, Lowering::Resize11); }

// grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> GridSample-16 (4-D).
template <int Opset>
void grid_sampler(SymbolicContext& ctx) {
  // Opset 20 renamed the modes and added volumetric (5-D) sampling.
  if (ctx.rank(0) != 4 && (Opset < 20 || ctx.rank(0) != 5))
    ctx.fail(Opset < 20 ? "GridSample before opset 20 handles 4-D inputs only (5-D from opset 20)"
                        : "GridSample handles 4-D and 5-D inputs");
  static const char* modes[] = {Opset < 20 ? "bilinear" : "linear", "nearest", Opset < 20 ? "bicubic" : "cubic"};
  static const char* paddings[] = {"zeros", "border", "reflection"};
  const int64_t m = ctx.i(2), pm = ctx.i(3);
  if (m < 0 || m > 2) ctx.fail("unknown interpolation mode " + std::to_string(m));
  if (pm < 0 || pm > 2) ctx.fail("unknown padding mode " + std::to_string(pm));
  ctx.out(ctx.op("GridSample", {ctx.in(0), ctx.in(1)},
                 {{"mode", std::string(modes[m])},
                  {"padding_mode", std::string(paddings[pm])},
                  {"align_corners", int64_t{ctx.b(4) ? 1 : 0}}}));
}

// aten::affine_grid_generator(theta, size, align_corners) (F.affine_grid):
// the base grid of normalized coordinates (x, y[, z], 1) for `size`, a
// constant, times theta^T: [N, H*W, 3] x [N, 3, 2] -> [N, H, W, 2] (and 3-D).
void affine_grid(SymbolicContext& ctx) {
  const std::vector<int64_t> size = ctx.is(1);
  const bool align = ctx.b(2);
  const int64_t nd = static_cast<int64_t>(size.size()) - 2;
  if (nd != 2 && nd != 3) ctx.fail("affine_grid takes a 4-D or 5-D size");
  // Spatial sizes, last first (x runs along W).
  std::vector<int64_t> dims(size.begin() + 2, size.end());
  auto coord = [&](int64_t i, int64_t n) {
    if (n <= 1) return 0.0;
    return align ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1)
                 : (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n) - 1.0;
  };
  int64_t points = 1;
  for (int64_t d : dims) points *= d;
  std::vector<double> base;
  base.reserve(static_cast<size_t>(points * (nd + 1)));
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);  // row-major over dims
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t k = nd - 1; k >= 0; --k) base.push_back(coord(idx[static_cast<size_t>(k)], dims[static_cast<size_t>(k)]));
    base.push_back(1.0);
    for (int64_t k = nd - 1; k >= 0; --k) {
      if (++idx[static_cast<size_t>(k)] < dims[static_cast<size_t>(k)]) break;
      idx[static_cast<size_t>(k)] = 0;
    }
  }
  const DType dt = ctx.dtype(0);
  ir::Value* grid = ctx.constant(ir::Tensor::from_doubles(dt, base, {points, nd + 1}));
  ir::Value* theta_t = ctx.op("Transpose", {ctx.in(0)}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  std::vector<int64_t> shape{size[0]};
  shape.insert(shape.end(), dims.begin(), dims.end());
  shape.push_back(nd);
  ctx.out(helpers::reshape(ctx, ctx.op("MatMul", {grid, theta_t}), shape));
}

// Opset 20: one AffineGrid node.
void affine_grid_20(SymbolicContext& ctx) {
  ctx.out(ctx.op("AffineGrid", {ctx.in(0), ctx.const_ints(ctx.is(1))}, {{"align_corners", int64_t{ctx.b(2) ? 1 : 0}}}));
}

}  // namespace

void register_resize(Registry& r) {
  for (int64_t nd = 1; nd <= 3; ++nd) {
    const std::string name = "aten::upsample_nearest" + std::to_string(nd) + "d";
    r.add(name, 9, [nd](SymbolicContext& c) { upsample_nearest(c, nd, "nearest", Lowering::Upsample9); });
    r.add(name, 10, [nd](SymbolicContext& c) { upsample_nearest(c, nd, "nearest", Lowering::Resize10); });
    r.add(name, 11, [nd](SymbolicContext& c) { upsample_nearest(c, nd, "nearest", Lowering::Resize11); });
    r.add("aten::_upsample_nearest_exact" + std::to_string(nd) + "d", 11,
          [nd](SymbolicContext& c) { upsample_nearest(c, nd, "nearest-exact", Lowering::Resize11); });
  }
  r.add("aten::upsample_linear1d", 11, [](SymbolicContext& c) { upsample_interp(c, 1, "linear"); });
  r.add("aten::upsample_bilinear2d", 11, [](SymbolicContext& c) { upsample_interp(c, 2, "linear"); });
  r.add("aten::upsample_trilinear3d", 11, [](SymbolicContext& c) { upsample_interp(c, 3, "linear"); });
  r.add("aten::upsample_bicubic2d", 11, [](SymbolicContext& c) { upsample_interp(c, 2, "cubic"); });
  r.add("aten::__interpolate", 9, interpolate9);
  r.add("aten::__interpolate", 10, interpolate10);
  r.add("aten::__interpolate", 11, interpolate11);
  r.add("aten::_upsample_bilinear2d_aa", 18, [](SymbolicContext& c) { upsample_interp(c, 2, "linear", true); });
  r.add("aten::_upsample_bicubic2d_aa", 18, [](SymbolicContext& c) { upsample_interp(c, 2, "cubic", true); });
  r.add("aten::grid_sampler", 16, grid_sampler<16>);
  r.add("aten::grid_sampler", 20, grid_sampler<20>);
  r.add("aten::affine_grid_generator", 9, affine_grid);
  r.add("aten::affine_grid_generator", 20, affine_grid_20);
}

}  // namespace torch2onnx::symbolics
