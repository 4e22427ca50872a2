// Comparisons, logical ops, where, clamp and elementwise min/max, with
// PyTorch's type promotion made explicit.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using helpers::inputs_as;

std::vector<ir::Value*> promoted(SymbolicContext& ctx) {
  ir::DType t = helpers::result_type(ctx, {0, 1});
  return inputs_as(ctx, {0, 1}, t);
}

// Equal on floats arrives in opset 11: before it, a == b is !(a < b || a > b).
ir::Value* equal(SymbolicContext& ctx, const std::vector<ir::Value*>& in) {
  ir::DType t = in[0]->dtype();
  if (ctx.opset() < 11 && ir::is_floating(t))
    return ctx.op("Not", {ctx.op("Or", {ctx.op("Less", in), ctx.op("Greater", in)})});
  if (t == ir::DType::Bool && ctx.opset() < 11)
    return ctx.op("Equal", {ctx.cast(in[0], ir::DType::Int32), ctx.cast(in[1], ir::DType::Int32)});
  return ctx.op("Equal", in);
}

void eq(SymbolicContext& ctx) { ctx.out(equal(ctx, promoted(ctx))); }
void ne(SymbolicContext& ctx) { ctx.out(ctx.op("Not", {equal(ctx, promoted(ctx))})); }

// Less/Greater compare numbers; booleans go through uint8.
std::vector<ir::Value*> ordered(SymbolicContext& ctx) {
  auto in = promoted(ctx);
  if (in[0]->dtype() == ir::DType::Bool)
    for (auto& v : in) v = ctx.cast(v, ir::DType::Int32);
  return in;
}

void lt(SymbolicContext& ctx) { ctx.out(ctx.op("Less", ordered(ctx))); }
void gt(SymbolicContext& ctx) { ctx.out(ctx.op("Greater", ordered(ctx))); }
void le_9(SymbolicContext& ctx) { ctx.out(ctx.op("Not", {ctx.op("Greater", ordered(ctx))})); }
void ge_9(SymbolicContext& ctx) { ctx.out(ctx.op("Not", {ctx.op("Less", ordered(ctx))})); }
void le_12(SymbolicContext& ctx) { ctx.out(ctx.op("LessOrEqual", ordered(ctx))); }
void ge_12(SymbolicContext& ctx) { ctx.out(ctx.op("GreaterOrEqual", ordered(ctx))); }

std::vector<ir::Value*> as_bool(SymbolicContext& ctx, std::vector<size_t> idx) {
  return inputs_as(ctx, idx, ir::DType::Bool);
}

void logical_and(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.op("And", as_bool(ctx, {0, 1})), ctx.out_dtype())); }
void logical_or(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.op("Or", as_bool(ctx, {0, 1})), ctx.out_dtype())); }
void logical_xor(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.op("Xor", as_bool(ctx, {0, 1})), ctx.out_dtype())); }
void logical_not(SymbolicContext& ctx) { ctx.out(ctx.cast(ctx.op("Not", as_bool(ctx, {0})), ctx.out_dtype())); }

// __and__ / __or__ / __xor__ / bitwise_* on booleans.
void bitwise(SymbolicContext& ctx, const char* op) {
  if (ctx.out_dtype() != ir::DType::Bool) ctx.fail("bitwise operations on integers need opset 18 (BitwiseAnd/Or/Xor)");
  ctx.out(ctx.op(op, as_bool(ctx, {0, 1})));
}
void bitwise_and(SymbolicContext& ctx) { bitwise(ctx, "And"); }
void bitwise_or(SymbolicContext& ctx) { bitwise(ctx, "Or"); }
void bitwise_xor(SymbolicContext& ctx) { bitwise(ctx, "Xor"); }

// bitwise_not: logical not on bool, -x - 1 on integers (two's complement).
void bitwise_not(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  if (ctx.dtype(0) == ir::DType::Bool) {
    ctx.out(ctx.op("Not", {x}));
    return;
  }
  ctx.out(ctx.op("Sub", {ctx.op("Neg", {x}), ctx.const_scalar(ctx.dtype(0), 1)}));
}

// aten::where(condition, self, other)
void where(SymbolicContext& ctx) {
  if (ctx.num_args() == 1) ctx.fail("where(condition) without values is not supported; use nonzero");
  ir::DType t = ctx.out_dtype() != ir::DType::Undefined ? ctx.out_dtype() : helpers::result_type(ctx, {1, 2});
  ir::Value* cond = ctx.in_as(0, ir::DType::Bool);
  auto vals = inputs_as(ctx, {1, 2}, t);
  ctx.out(ctx.op("Where", {cond, vals[0], vals[1]}));
}

// Elementwise max/min of two tensors (maximum, minimum, max.other, fmax ...).
void binary_max(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ctx.out(ctx.op("Max", inputs_as(ctx, {0, 1}, t)));
}
void binary_min(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  ctx.out(ctx.op("Min", inputs_as(ctx, {0, 1}, t)));
}

// clamp(self, min=None, max=None) with numbers or tensors as bounds.
// Clip takes integer inputs from opset 12; otherwise Max/Min do the job.
void clamp_impl(SymbolicContext& ctx, std::optional<size_t> lo_idx, std::optional<size_t> hi_idx) {
  ir::DType t = ctx.out_dtype();
  ir::Value* x = ctx.cast(ctx.in(0), t);
  const bool lo = lo_idx && !ctx.none(*lo_idx), hi = hi_idx && !ctx.none(*hi_idx);
  const bool scalar_bounds = (!lo || ctx.arg(*lo_idx).is_scalar()) && (!hi || ctx.arg(*hi_idx).is_scalar());
  const bool constant_bounds = (!lo || ctx.constant(*lo_idx)) && (!hi || ctx.constant(*hi_idx));
  if (scalar_bounds && constant_bounds && ir::is_floating(t)) {
    ctx.out(helpers::clip(ctx, x, lo ? std::optional<double>(ctx.f(*lo_idx)) : std::nullopt,
                          hi ? std::optional<double>(ctx.f(*hi_idx)) : std::nullopt));
    return;
  }
  if (lo) x = ctx.op("Max", {x, ctx.in_as(*lo_idx, t)});
  if (hi) x = ctx.op("Min", {x, ctx.in_as(*hi_idx, t)});
  ctx.out(x);
}

void clamp(SymbolicContext& ctx) { clamp_impl(ctx, size_t{1}, size_t{2}); }
void clamp_min(SymbolicContext& ctx) { clamp_impl(ctx, size_t{1}, std::nullopt); }
void clamp_max(SymbolicContext& ctx) { clamp_impl(ctx, std::nullopt, size_t{1}); }

void isnan(SymbolicContext& ctx) { ctx.out(ctx.op("IsNaN", {ctx.in(0)})); }

}  // namespace

void register_comparison(Registry& r) {
  for (const char* op : {"aten::eq", "aten::__eq__"}) r.add(op, 9, eq);
  for (const char* op : {"aten::ne", "aten::__ne__", "aten::not_equal"}) r.add(op, 9, ne);
  for (const char* op : {"aten::lt", "aten::__lt__", "aten::less"}) r.add(op, 9, lt);
  for (const char* op : {"aten::gt", "aten::__gt__", "aten::greater"}) r.add(op, 9, gt);
  for (const char* op : {"aten::le", "aten::__le__", "aten::less_equal"}) {
    r.add(op, 9, le_9);
    r.add(op, 12, le_12);
  }
  for (const char* op : {"aten::ge", "aten::__ge__", "aten::greater_equal"}) {
    r.add(op, 9, ge_9);
    r.add(op, 12, ge_12);
  }
  r.add("aten::logical_and", 9, logical_and);
  r.add("aten::logical_or", 9, logical_or);
  r.add("aten::logical_xor", 9, logical_xor);
  r.add("aten::logical_not", 9, logical_not);
  for (const char* op : {"aten::__and__", "aten::bitwise_and"}) r.add(op, 9, bitwise_and);
  for (const char* op : {"aten::__or__", "aten::bitwise_or"}) r.add(op, 9, bitwise_or);
  for (const char* op : {"aten::__xor__", "aten::bitwise_xor"}) r.add(op, 9, bitwise_xor);
  r.add("aten::bitwise_not", 9, bitwise_not);
  r.add("aten::where", 9, where);
  for (const char* op : {"aten::maximum", "aten::fmax"}) r.add(op, 9, binary_max);
  for (const char* op : {"aten::minimum", "aten::fmin"}) r.add(op, 9, binary_min);
  for (const char* op : {"aten::clamp", "aten::clip"}) r.add(op, 9, clamp);
  r.add("aten::clamp_min", 9, clamp_min);
  r.add("aten::clamp_max", 9, clamp_max);
  r.add("aten::isnan", 9, isnan);
}

}  // namespace torch2onnx::symbolics
