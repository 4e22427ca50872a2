// Dropout: the identity at inference (train=False, what eval mode records).
// In training mode a random keep-mask: ONNX Dropout for plain dropout from
// opset 12, RandomUniformLike otherwise (before 12, and for the feature /
// alpha variants, which ONNX has no operator for).
#include <cmath>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

enum class Kind { Plain, Feature, Alpha, FeatureAlpha };

Kind kind_of(const SymbolicContext& ctx) {
  const std::string& k = ctx.kind();
  const bool feature = k.find("feature") != std::string::npos;
  const bool alpha = k.find("alpha") != std::string::npos;
  return feature ? (alpha ? Kind::FeatureAlpha : Kind::Feature) : (alpha ? Kind::Alpha : Kind::Plain);
}

// Checks p and returns the floating dtype dropout computes in.
ir::DType checked_dtype(SymbolicContext& ctx, double p) {
  if (p < 0 || p > 1) ctx.fail("dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  const ir::DType dt = ctx.dtype(0);
  if (!ir::is_floating(dt)) ctx.fail("dropout in training mode needs a floating-point input");
  return dt;
}

// A 0/1 keep-mask (bool), each element kept with probability 1 - p: per
// element, or per (N, C) channel for feature dropout (shape [N, C, 1, ...]).
ir::Value* keep_mask(SymbolicContext& ctx, ir::Value* x, double p, bool feature, ir::DType dt) {
  ir::Value* like = x;
  if (feature) {
    const int64_t rank = ctx.rank(0);
    if (rank < 2) ctx.fail("feature dropout needs an input with at least 2 dimensions");
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    if (!axes.empty()) like = helpers::reduce(ctx, "ReduceMax", x, axes, true);  // [N, C, 1, ...]
  }
  ir::Value* u = ctx.op("RandomUniformLike", {like}, {{"dtype", static_cast<int64_t>(dt)}});
  return ctx.op("Less", {u, ctx.const_scalar(dt, 1.0 - p)});
}

// PyTorch's _dropout_impl in training mode.
ir::Value* train_dropout(SymbolicContext& ctx, ir::Value* x, double p, Kind kind, ir::DType dt) {
  if (p == 0) return x;
  if (p == 1) return ctx.op("Mul", {x, ctx.const_scalar(dt, 0.0)});
  const bool feature = kind == Kind::Feature || kind == Kind::FeatureAlpha;
  const bool alpha = kind == Kind::Alpha || kind == Kind::FeatureAlpha;
  ir::Value* keep = ctx.cast(keep_mask(ctx, x, p, feature, dt), dt);
  if (!alpha) return ctx.op("Mul", {x, ctx.op("Mul", {keep, ctx.const_scalar(dt, 1.0 / (1.0 - p))})});
  // y = x * (keep * a) + ((keep - 1) * alpha * a + alpha * a * p)
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  ir::Value* scale = ctx.op("Mul", {keep, ctx.const_scalar(dt, a)});
  ir::Value* shift = ctx.op("Add", {ctx.op("Mul", {keep, ctx.const_scalar(dt, kAlpha * a)}),
                                    ctx.const_scalar(dt, kAlpha * a * p - kAlpha * a)});
  return ctx.op("Add", {ctx.op("Mul", {x, scale}), shift});
}

// aten::dropout(input, p, train) and the feature/alpha variants (and their in-place forms).
void dropout_9(SymbolicContext& ctx) {
  if (!ctx.b(2)) {
    ctx.out(ctx.in(0));
    return;
  }
  const double p = ctx.f(1);
  const ir::DType dt = checked_dtype(ctx, p);
  ctx.out(train_dropout(ctx, ctx.in(0), p, kind_of(ctx), dt));
}

// Plain dropout in training mode is ONNX Dropout from opset 12 (ratio and training_mode inputs).
void dropout_12(SymbolicContext& ctx) {
  if (!ctx.b(2) || kind_of(ctx) != Kind::Plain) {
    dropout_9(ctx);
    return;
  }
  const double p = ctx.f(1);
  const ir::DType dt = checked_dtype(ctx, p);
  if (p == 0 || p == 1) {
    ctx.out(train_dropout(ctx, ctx.in(0), p, Kind::Plain, dt));
    return;
  }
  ir::Value* training = ctx.constant(ir::Tensor::scalar_int(ir::DType::Bool, 1));
  ctx.out(ctx.op_n("Dropout", {ctx.in(0), ctx.const_scalar(dt, p), training}, 1)[0]);
}

// A bool tensor of x's shape filled with `value`.
ir::Value* bool_like(SymbolicContext& ctx, ir::Value* x, bool value) {
  return ctx.op("ConstantOfShape", {ctx.op("Shape", {x})},
                {{"value", ir::Tensor::from_int64s({value ? 1 : 0}, {1}).converted(ir::DType::Bool)}});
}

// aten::native_dropout(input, p, train?) -> (output, mask): train=None means training.
void native_dropout_9(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  const double p = ctx.f(1);
  const bool train = ctx.none(2) || ctx.b(2);
  if (!train || p == 0) {
    ctx.out(x, 0);
    ctx.out(bool_like(ctx, x, true), 1);
    return;
  }
  const ir::DType dt = checked_dtype(ctx, p);
  ir::Value* keep = p == 1 ? bool_like(ctx, x, false) : keep_mask(ctx, x, p, false, dt);
  ir::Value* y = p == 1 ? ctx.op("Mul", {x, ctx.const_scalar(dt, 0.0)})
                        : ctx.op("Mul", {x, ctx.op("Mul", {ctx.cast(keep, dt), ctx.const_scalar(dt, 1.0 / (1.0 - p))})});
  ctx.out(y, 0);
  ctx.out(keep, 1);
}

void native_dropout_12(SymbolicContext& ctx) {
  const double p = ctx.f(1);
  const bool train = ctx.none(2) || ctx.b(2);
  if (!train || p == 0 || p == 1) {
    native_dropout_9(ctx);
    return;
  }
  const ir::DType dt = checked_dtype(ctx, p);
  ir::Value* training = ctx.constant(ir::Tensor::scalar_int(ir::DType::Bool, 1));
  auto outs = ctx.op_n("Dropout", {ctx.in(0), ctx.const_scalar(dt, p), training}, 2);
  outs[1]->type().dtype = ir::DType::Bool;
  ctx.out(outs[0], 0);
  ctx.out(outs[1], 1);
}

}  // namespace

void register_dropout(Registry& r) {
  for (const char* op : {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"}) {
    r.add(op, 9, dropout_9);
    r.add(op, 12, dropout_12);
  }
  r.add("aten::native_dropout", 9, native_dropout_9);
  r.add("aten::native_dropout", 12, native_dropout_12);
}

}  // namespace torch2onnx::symbolics
