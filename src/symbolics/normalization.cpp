// Normalization: batch_norm, layer_norm (LayerNormalization from opset 17,
// its decomposition before), instance_norm, group_norm.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

ir::Value* ones_or(SymbolicContext& ctx, size_t idx, int64_t n, ir::DType dt, double fill) {
  if (!ctx.none(idx)) return ctx.in_as(idx, dt);
  return ctx.constant(ir::Tensor::from_doubles(dt, std::vector<double>(static_cast<size_t>(n), fill), {n}));
}

// (x - mean) / sqrt(var + eps) over `axes`, with biased variance.
ir::Value* normalize(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes, double eps, ir::DType dt) {
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* var = helpers::reduce(ctx, "ReduceMean", ctx.op("Mul", {d, d}), axes, true);
  ir::Value* denom = ctx.op("Sqrt", {ctx.op("Add", {var, ctx.const_scalar(dt, eps)})});
  return ctx.op("Div", {d, denom});
}

// aten::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
void batch_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const auto& sizes = ctx.sizes(0);
  if (sizes.size() < 2) ctx.fail("batch_norm needs an input with a channel dimension");
  const int64_t channels = sizes[1];
  const bool training = ctx.b(5);
  const double eps = ctx.f(7);
  ir::Value* x = ctx.in(0);
  ir::Value* scale = ones_or(ctx, 1, channels, dt, 1.0);
  ir::Value* bias = ones_or(ctx, 2, channels, dt, 0.0);
  if (training || ctx.none(3) || ctx.none(4)) {
    // Statistics of the batch itself (training mode, or no running stats).
    std::vector<int64_t> axes{0};
    for (size_t i = 2; i < sizes.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    std::vector<int64_t> bshape(sizes.size(), 1);
    bshape[1] = channels;
    ir::Value* y = normalize(ctx, x, axes, eps, dt);
    y = ctx.op("Mul", {y, helpers::reshape(ctx, scale, bshape)});
    ctx.out(ctx.op("Add", {y, helpers::reshape(ctx, bias, bshape)}));
    return;
  }
  ctx.out(ctx.op("BatchNormalization", {x, scale, bias, ctx.in_as(3, dt), ctx.in_as(4, dt)}, {{"epsilon", eps}}));
}

// aten::layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
void layer_norm_decomposed(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t n = static_cast<int64_t>(ctx.is(1).size());
  const ir::DType dt = ctx.dtype(0);
  std::vector<int64_t> axes;
  for (int64_t i = rank - n; i < rank; ++i) axes.push_back(i);
  ir::Value* y = normalize(ctx, ctx.in(0), axes, ctx.f(4), dt);
  if (!ctx.none(2)) y = ctx.op("Mul", {y, ctx.in_as(2, dt)});
  if (!ctx.none(3)) y = ctx.op("Add", {y, ctx.in_as(3, dt)});
  ctx.out(y);
}

void layer_norm(SymbolicContext& ctx) {
  const int64_t n = static_cast<int64_t>(ctx.is(1).size());
  const ir::DType dt = ctx.dtype(0);
  std::vector<int64_t> shape = ctx.is(1);
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  ir::Value* scale = ctx.none(2) ? ctx.constant(ir::Tensor::from_doubles(dt, std::vector<double>(count, 1.0), shape))
                                 : ctx.in_as(2, dt);
  std::vector<ir::Value*> ins{ctx.in(0), scale};
  if (!ctx.none(3)) ins.push_back(ctx.in_as(3, dt));
  ctx.out(ctx.op("LayerNormalization", ins, {{"axis", -n}, {"epsilon", ctx.f(4)}}));
}

// aten::instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
void instance_norm(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  const auto& sizes = ctx.sizes(0);
  const int64_t channels = sizes.at(1);
  if (!ctx.b(5) && !ctx.none(3)) {
    // Running statistics in eval mode: a plain batch norm.
    ctx.out(ctx.op("BatchNormalization",
                   {ctx.in(0), ones_or(ctx, 1, channels, dt, 1.0), ones_or(ctx, 2, channels, dt, 0.0),
                    ctx.in_as(3, dt), ctx.in_as(4, dt)},
                   {{"epsilon", ctx.f(7)}}));
    return;
  }
  ctx.out(ctx.op("InstanceNormalization",
                 {ctx.in(0), ones_or(ctx, 1, channels, dt, 1.0), ones_or(ctx, 2, channels, dt, 0.0)},
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
  ir::Value* y = normalize(ctx, grouped, {2}, ctx.f(4), dt);
  y = ctx.op("Reshape", {y, shape});
  std::vector<int64_t> bshape(static_cast<size_t>(rank - 1), 1);
  bshape[0] = sizes.at(1);
  if (!ctx.none(2)) y = ctx.op("Mul", {y, helpers::reshape(ctx, ctx.in_as(2, dt), bshape)});
  if (!ctx.none(3)) y = ctx.op("Add", {y, helpers::reshape(ctx, ctx.in_as(3, dt), bshape)});
  ctx.out(y);
}

}  // namespace

void register_normalization(Registry& r) {
  r.add("aten::batch_norm", 9, batch_norm);
  r.add("aten::layer_norm", 9, layer_norm_decomposed);
  r.add("aten::layer_norm", 17, layer_norm);
  r.add("aten::instance_norm", 9, instance_norm);
  r.add("aten::group_norm", 9, group_norm);
}

}  // namespace torch2onnx::symbolics
