// Arithmetic with PyTorch's type promotion: inputs are cast to the dtype
// PyTorch computes in (the node's output dtype), Python numbers become
// constants of that dtype.
#include <cmath>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using helpers::inputs_as;

// The dtype the node computes in: its output's, or the promoted inputs' for
// scalar (non-tensor) arithmetic.
ir::DType compute_dtype(SymbolicContext& ctx, const std::vector<size_t>& args) {
  ir::DType t = ctx.out_dtype();
  if (t == ir::DType::Undefined) t = helpers::result_type(ctx, args);
  if (t == ir::DType::Undefined) t = ir::DType::Float;
  return t;
}

// other * alpha, unless alpha is 1.
ir::Value* scaled_other(SymbolicContext& ctx, ir::Value* other, size_t alpha_idx, ir::DType t) {
  if (ctx.num_args() <= alpha_idx || ctx.none(alpha_idx)) return other;
  if (ctx.constant(alpha_idx) && ctx.f(alpha_idx) == 1.0) return other;
  return ctx.op("Mul", {other, ctx.scalar_value(alpha_idx, t)});
}

// aten::add(self, other, alpha=1); bool + bool is a logical or.
void add(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list()) ctx.fail("list concatenation cannot be exported");
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  if (t == ir::DType::Bool) {
    ctx.out(ctx.op("Or", in));
    return;
  }
  ctx.out(ctx.op("Add", {in[0], scaled_other(ctx, in[1], 2, t)}));
}

// aten::sub(self, other, alpha=1)
void sub(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op("Sub", {in[0], scaled_other(ctx, in[1], 2, t)}));
}

// aten::rsub(self, other, alpha=1) = other - alpha * self
void rsub(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op("Sub", {in[1], scaled_other(ctx, in[0], 2, t)}));
}

// aten::mul(self, other); bool * bool is a logical and.
void mul(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op(t == ir::DType::Bool ? "And" : "Mul", in));
}

// Truncation toward zero of a float value.
ir::Value* trunc_float(SymbolicContext& ctx, ir::Value* q, ir::DType t) {
  ir::Value* neg = ctx.op("Less", {q, ctx.const_scalar(t, 0.0)});
  return ctx.op("Where", {neg, ctx.op("Ceil", {q}), ctx.op("Floor", {q})});
}

// a // b with floor rounding for integers: (a - mod(a, b)) / b is exact.
ir::Value* floor_div_int(SymbolicContext& ctx, ir::Value* a, ir::Value* b) {
  ir::Value* r = ctx.op("Mod", {a, b}, {{"fmod", int64_t{0}}});
  return ctx.op("Div", {ctx.op("Sub", {a, r}), b});
}

ir::Value* floor_div(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
  if (ir::is_floating(t)) return ctx.op("Floor", {ctx.op("Div", {a, b})});
  if (ctx.opset() < 10) {
    // No integer Mod before opset 10: floor in double precision (exact below 2^53).
    ir::Value* q = ctx.op("Floor", {ctx.op("Div", {ctx.cast(a, ir::DType::Double), ctx.cast(b, ir::DType::Double)})});
    return ctx.cast(q, t);
  }
  return floor_div_int(ctx, a, b);
}

// aten::div(self, other, rounding_mode=None|"trunc"|"floor")
void div(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  std::string mode = ctx.num_args() > 2 && !ctx.none(2) ? ctx.s(2) : "";
  auto in = inputs_as(ctx, {0, 1}, t);
  if (mode.empty()) {
    ctx.out(ctx.op("Div", in));
  } else if (mode == "trunc") {
    ir::Value* q = ctx.op("Div", in);  // integer Div truncates
    ctx.out(ir::is_floating(t) ? trunc_float(ctx, q, t) : q);
  } else if (mode == "floor") {
    ctx.out(floor_div(ctx, in[0], in[1], t));
  } else {
    ctx.fail("unknown rounding_mode '" + mode + "'");
  }
}

// aten::floor_divide(self, other): floor rounding (PyTorch >= 1.13).
void floor_divide(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(floor_div(ctx, in[0], in[1], t));
}

// aten::remainder(self, other): the result has the sign of the divisor.
void remainder(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  if (ir::is_floating(t)) {
    ir::Value* q = ctx.op("Floor", {ctx.op("Div", in)});
    ctx.out(ctx.op("Sub", {in[0], ctx.op("Mul", {q, in[1]})}));
    return;
  }
  if (ctx.opset() < 10) ctx.fail("integer remainder needs opset 10 or later");
  ctx.out(ctx.op("Mod", in, {{"fmod", int64_t{0}}}));
}

// aten::fmod(self, other): the result has the sign of the dividend.
void fmod(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op("Mod", in, {{"fmod", int64_t{1}}}));
}

void fmod_9(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  if (!ir::is_floating(t)) ctx.fail("integer fmod needs opset 10 or later");
  ir::Value* q = trunc_float(ctx, ctx.op("Div", in), t);
  ctx.out(ctx.op("Sub", {in[0], ctx.op("Mul", {q, in[1]})}));
}

// aten::pow(self, exponent). ONNX Pow takes integer bases from opset 12.
void pow_12(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op("Pow", in));
}

void pow_9(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  ir::DType f = ir::is_floating(t) ? t : ir::DType::Double;
  auto in = inputs_as(ctx, {0, 1}, f);
  ctx.out(ctx.cast(ctx.op("Pow", in), t));
}

void neg(SymbolicContext& ctx) { ctx.out(ctx.op("Neg", {ctx.in(0)})); }

}  // namespace

void register_arithmetic(Registry& r) {
  r.add("aten::add", 9, add);
  r.add("aten::sub", 9, sub);
  r.add("aten::subtract", 9, sub);
  r.add("aten::rsub", 9, rsub);
  r.add("aten::mul", 9, mul);
  r.add("aten::multiply", 9, mul);
  r.add("aten::div", 9, div);
  r.add("aten::divide", 9, div);
  r.add("aten::true_divide", 9, div);
  r.add("aten::floor_divide", 9, floor_divide);
  r.add("aten::remainder", 9, remainder);
  r.add("aten::fmod", 9, fmod_9);
  r.add("aten::fmod", 10, fmod);
  r.add("aten::pow", 9, pow_9);
  r.add("aten::pow", 12, pow_12);
  r.add("aten::neg", 9, neg);
  r.add("aten::negative", 9, neg);
}

}  // namespace torch2onnx::symbolics
