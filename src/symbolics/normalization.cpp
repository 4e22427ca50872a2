// Normalization: batch_norm / native_batch_norm, layer_norm (LayerNormalization
// from opset 17, its decomposition before) / native_layer_norm, instance_norm,
// group_norm.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Argument idx in dtype dt, or (None) a constant of `shape` filled with `fill`.
ir::Value* ones_or(SymbolicContext& ctx, size_t idx, const std::vector<int64_t>& shape, ir::DType dt, double fill) {
  if (!ctx.none(idx)) return ctx.in_as(idx, dt);
  return ctx.constant(ir::Tensor::from_doubles(dt, std::vector<double>(static_cast<size_t>(product(shape)), fill), shape));
}

// Argument idx (a per-channel scale or bias), or `fill` for each of the
// input's channels (dim 1; a default that needs the channel count static).
ir::Value* channels_or(SymbolicContext& ctx, size_t idx, ir::DType dt, double fill) {
  if (!ctx.none(idx)) return ctx.in_as(idx, dt);
  return ones_or(ctx, idx, {ctx.static_dim(0, 1)}, dt, fill);
}

// (x - mean) / sqrt(var + eps) over `axes`, with biased variance.
ir::Value* normalize(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes, double eps, ir::DType dt) {
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* var = helpers::reduce(ctx, "ReduceMean", ctx.op("Mul", {d, d}), axes, true);
  ir::Value* denom = ctx.op("Sqrt", {ctx.op("Add", {var, ctx.const_scalar(dt, eps)})});
  return ctx.op("Div", {d, denom});
}

std::vector<int64_t> batch_axes(size_t rank) {
  std::vector<int64_t> axes{0};
  for (size_t i = 2; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

// Batch normalization over `axes` with the batch's own statistics, scaled
// per channel; returns the output and, when `stats` is given, the per-channel
// mean and 1/sqrt(var + eps) (biased variance).
ir::Value* batch_stats_norm(SymbolicContext& ctx, ir::Value* x, ir::Value* scale, ir::Value* bias,
                            const std::vector<int64_t>& sizes, double eps, ir::DType dt,
                            std::pair<ir::Value*, ir::Value*>* stats = nullptr) {
  const std::vector<int64_t> axes = batch_axes(sizes.size());
  std::vector<int64_t> bshape(sizes.size(), 1);
  bshape[1] = -1;  // (scale and bias are [C])
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* var = helpers::reduce(ctx, "ReduceMean", ctx.op("Mul", {d, d}), axes, true);
  ir::Value* std = ctx.op("Sqrt", {ctx.op("Add", {var, ctx.const_scalar(dt, eps)})});
  ir::Value* y = ctx.op("Div", {d, std});
  if (scale) y = ctx.op("Mul", {y, helpers::reshape(ctx, scale, bshape)});
  if (bias) y = ctx.op("Add", {y, helpers::reshape(ctx, bias, bshape)});
  if (stats) {
    const std::vector<int64_t> flat{-1};
    stats->first = helpers::reshape(ctx, mean, flat);
    stats->second = helpers::reshape(ctx, ctx.op("Reciprocal", {std}), flat);
  }
  return y;
}

// BatchNormalization with running statistics (inference).
ir::Value* running_stats_norm(SymbolicContext& ctx, size_t first, double eps) {
  const ir::DType dt = ctx.dtype(0);
  return ctx.op("BatchNormalization",
                {ctx.in(0), channels_or(ctx, first, dt, 1.0), channels_or(ctx, first + 1, dt, 0.0),
                 ctx.in_as(first + 2, dt), ctx.in_as(first + 3, dt)},
                {{"epsilon", eps}});
}

// aten::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
// training (or no running statistics, e.g. track_running_stats=False) normalizes
// with the batch's statistics; the running statistics' update is not exported.
void batch_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const auto& sizes = ctx.sizes(0);
  if (sizes.size() < 2) ctx.fail("batch_norm needs an input with a channel dimension");
  const bool training = ctx.b(5);
  const double eps = ctx.f(7);
  if (training || ctx.none(3) || ctx.none(4)) {
    ctx.out(batch_stats_norm(ctx, ctx.in(0), ctx.none(1) ? nullptr : ctx.in_as(1, dt),
                             ctx.none(2) ? nullptr : ctx.in_as(2, dt), sizes, eps, dt));
    return;
  }
  ctx.out(running_stats_norm(ctx, 1, eps));
}

// aten::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
//   -> (out, save_mean, save_invstd); in inference the saved statistics are empty.
void native_batch_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const auto& sizes = ctx.sizes(0);
  if (sizes.size() < 2) ctx.fail("batch_norm needs an input with a channel dimension");
  const bool training = ctx.b(5);
  const double eps = ctx.f(7);
  if (training || ctx.none(3) || ctx.none(4)) {
    std::pair<ir::Value*, ir::Value*> stats;
    ctx.out(batch_stats_norm(ctx, ctx.in(0), ctx.none(1) ? nullptr : ctx.in_as(1, dt),
                             ctx.none(2) ? nullptr : ctx.in_as(2, dt), sizes, eps, dt, &stats),
            0);
    ctx.out(ctx.cast(stats.first, ctx.out_dtype(1)), 1);
    ctx.out(ctx.cast(stats.second, ctx.out_dtype(2)), 2);
    return;
  }
  ctx.out(running_stats_norm(ctx, 1, eps), 0);
  for (size_t k = 1; k <= 2; ++k) {
    const ir::DType odt = ctx.out_dtype(k) == ir::DType::Undefined ? dt : ctx.out_dtype(k);
    ctx.out(ctx.constant(ir::Tensor::from_doubles(odt, {}, {0})), k);
  }
}

// The last `n` axes of a rank-`rank` tensor.
std::vector<int64_t> last_axes(int64_t rank, int64_t n) {
  std::vector<int64_t> axes;
  for (int64_t i = rank - n; i < rank; ++i) axes.push_back(i);
  return axes;
}

int64_t normalized_count(SymbolicContext& ctx, size_t shape_idx) {
  const int64_t n = static_cast<int64_t>(ctx.is(shape_idx).size());
  if (n == 0 || n > ctx.rank(0)) ctx.fail("normalized_shape must have between 1 and input.dim() entries");
  return n;
}

// (x - mean) / sqrt(var + eps) over the last n axes; mean and 1/sqrt(var + eps) on request.
ir::Value* layer_norm_core(SymbolicContext& ctx, int64_t n, double eps, ir::Value** mean_out, ir::Value** rstd_out) {
  const ir::DType dt = ctx.dtype(0);
  const std::vector<int64_t> axes = last_axes(ctx.rank(0), n);
  ir::Value* x = ctx.in(0);
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* var = helpers::reduce(ctx, "ReduceMean", ctx.op("Mul", {d, d}), axes, true);
  ir::Value* std = ctx.op("Sqrt", {ctx.op("Add", {var, ctx.const_scalar(dt, eps)})});
  if (mean_out) *mean_out = mean;
  if (rstd_out) *rstd_out = ctx.op("Reciprocal", {std});
  return ctx.op("Div", {d, std});
}

ir::Value* affine(SymbolicContext& ctx, ir::Value* y, size_t w, size_t b) {
  const ir::DType dt = ctx.dtype(0);
  if (!ctx.none(w)) y = ctx.op("Mul", {y, ctx.in_as(w, dt)});
  if (!ctx.none(b)) y = ctx.op("Add", {y, ctx.in_as(b, dt)});
  return y;
}

// aten::layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
void layer_norm_decomposed(SymbolicContext& ctx) {
  const int64_t n = normalized_count(ctx, 1);
  ctx.out(affine(ctx, layer_norm_core(ctx, n, ctx.f(4), nullptr, nullptr), 2, 3));
}

ir::Value* layer_normalization(SymbolicContext& ctx, int64_t n, size_t w, size_t b, double eps) {
  const ir::DType dt = ctx.dtype(0);
  std::vector<ir::Value*> ins{ctx.in(0), ones_or(ctx, w, ctx.is(1), dt, 1.0)};
  if (!ctx.none(b)) ins.push_back(ctx.in_as(b, dt));
  return ctx.op("LayerNormalization", ins, {{"axis", -n}, {"epsilon", eps}});
}

void layer_norm(SymbolicContext& ctx) {
  ctx.out(layer_normalization(ctx, normalized_count(ctx, 1), 2, 3, ctx.f(4)));
}

// aten::native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd), the
// statistics with the normalized axes kept as 1.
void native_layer_norm(SymbolicContext& ctx) {
  const int64_t n = normalized_count(ctx, 1);
  ir::Value *mean = nullptr, *rstd = nullptr;
  ir::Value* y = layer_norm_core(ctx, n, ctx.f(4), &mean, &rstd);
  ctx.out(affine(ctx, y, 2, 3), 0);
  ctx.out(ctx.cast(mean, ctx.out_dtype(1)), 1);
  ctx.out(ctx.cast(rstd, ctx.out_dtype(2)), 2);
}

// aten::instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
void instance_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  if (!ctx.b(5) && !ctx.none(3)) {
    // Running statistics in eval mode: a plain batch norm.
    ctx.out(running_stats_norm(ctx, 1, ctx.f(7)));
    return;
  }
  ctx.out(ctx.op("InstanceNormalization",
                 {ctx.in(0), channels_or(ctx, 1, dt, 1.0), channels_or(ctx, 2, dt, 0.0)},
                 {{"epsilon", ctx.f(7)}}));
}

// aten::group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)
void group_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const auto& sizes = ctx.sizes(0);
  const int64_t groups = ctx.i(1);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  // [N, C, ...] -> [N, G, -1], normalize over the last axis, reshape back.
  ir::Value* x = ctx.in(0);
  ir::Value* shape = ctx.op("Shape", {x});
  ir::Value* grouped = helpers::reshape(ctx, x, {0, groups, -1});
  ir::Value* y = nullptr;
  if (dt == ir::DType::Float) {
    // one InstanceNormalization over each group's values (unit scale, no bias): ONNX Runtime's fused kernel,
    // where the decomposition is seven nodes (float: the dtype its CPU kernel takes)
    auto filled = [&](double v) {
      return ctx.constant(ir::Tensor::from_doubles(dt, std::vector<double>(static_cast<size_t>(groups), v), {groups}));
    };
    y = ctx.op("InstanceNormalization", {grouped, filled(1.0), filled(0.0)}, {{"epsilon", ctx.f(4)}});
  } else {
    y = normalize(ctx, grouped, {2}, ctx.f(4), dt);
  }
  y = ctx.op("Reshape", {y, shape});
  std::vector<int64_t> bshape(static_cast<size_t>(rank - 1), 1);
  bshape[0] = -1;  // (weight and bias are [C])
  if (!ctx.none(2)) y = ctx.op("Mul", {y, helpers::reshape(ctx, ctx.in_as(2, dt), bshape)});
  if (!ctx.none(3)) y = ctx.op("Add", {y, helpers::reshape(ctx, ctx.in_as(3, dt), bshape)});
  ctx.out(y);
}

// Opset 21: one GroupNormalization node (per-channel scale and bias, as
// PyTorch's; opset 18's per-group form was deprecated for that reason).
void group_norm_21(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  // (the default scale and bias need the channel count static; the opset-9 form does not)
  if ((ctx.none(2) || ctx.none(3)) && ctx.dim_is_dynamic(0, 1)) return group_norm(ctx);
  ctx.out(ctx.op("GroupNormalization",
                 {ctx.in(0), channels_or(ctx, 2, dt, 1.0), channels_or(ctx, 3, dt, 0.0)},
                 {{"epsilon", ctx.f(4)}, {"num_groups", ctx.i(1)}}));
}

// aten::rms_norm(input, normalized_shape, weight=None, eps=None): eps
// defaults to the dtype's machine epsilon, as in PyTorch.
double rms_eps(SymbolicContext& ctx) {
  if (auto eps = ctx.opt_f(3)) return *eps;
  switch (ctx.dtype(0)) {
    case ir::DType::Double: return 2.220446049250313e-16;
    case ir::DType::Float16: return 0.0009765625;
    case ir::DType::BFloat16: return 0.0078125;
    default: return 1.1920928955078125e-07;
  }
}

void rms_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const int64_t n = normalized_count(ctx, 1);
  std::vector<int64_t> axes;
  for (int64_t a = -n; a < 0; ++a) axes.push_back(a);
  ir::Value* x = ctx.in(0);
  ir::Value* ms = helpers::reduce(ctx, "ReduceMean", ctx.op("Mul", {x, x}), axes, true);
  ir::Value* y = ctx.op("Div", {x, ctx.op("Sqrt", {ctx.op("Add", {ms, ctx.const_scalar(dt, rms_eps(ctx))})})});
  if (!ctx.none(2)) y = ctx.op("Mul", {y, ctx.in_as(2, dt)});
  ctx.out(y);
}

// Opset 23: one RMSNormalization node.
void rms_norm_23(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const int64_t n = normalized_count(ctx, 1);
  ctx.out(ctx.op("RMSNormalization", {ctx.in(0), ones_or(ctx, 2, ctx.is(1), dt, 1.0)},
                 {{"axis", -n}, {"epsilon", rms_eps(ctx)}}));
}

}  // namespace

void register_normalization(Registry& r) {
  r.add("aten::batch_norm", 9, batch_norm);
  r.add("aten::native_batch_norm", 9, native_batch_norm);
  r.add("aten::native_layer_norm", 9, native_layer_norm);
  r.add("aten::layer_norm", 9, layer_norm_decomposed);
  r.add("aten::layer_norm", 17, layer_norm);
  r.add("aten::instance_norm", 9, instance_norm);
  r.add("aten::group_norm", 9, group_norm);
  r.add("aten::group_norm", 21, group_norm_21);
  r.add("aten::rms_norm", 9, rms_norm);
  r.add("aten::rms_norm", 23, rms_norm_23);
}

}  // namespace torch2onnx::symbolics
