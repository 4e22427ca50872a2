// Comparisons, logical ops, where, clamp and elementwise min/max, with
// PyTorch's type promotion made explicit. ONNX's type coverage grows over the
// opsets (Equal on floats and 8/16-bit integers from 11, LessOrEqual from 12,
// Max/Min/Clip on integers from 12); below, the same results come from the
// ops that exist.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using helpers::inputs_as;

bool small_int(ir::DType t) {
  return t == ir::DType::Int8 || t == ir::DType::UInt8 || t == ir::DType::Int16 || t == ir::DType::UInt16;
}

// Where(c, a, b) for any dtype: ONNX Runtime has no Where for bool and
// 8/16-bit integers other than uint8.
ir::Value* where_any(SymbolicContext& ctx, ir::Value* c, ir::Value* a, ir::Value* b) {
  const ir::DType t = a->dtype();
  if (t == ir::DType::Bool)
    return ctx.op("Or", {ctx.op("And", {c, a}), ctx.op("And", {ctx.op("Not", {c}), b})});
  if (small_int(t) && t != ir::DType::UInt8) {
    ir::Value* r = ctx.op("Where", {c, ctx.cast(a, ir::DType::Int32), ctx.cast(b, ir::DType::Int32)});
    return ctx.cast(r, t);
  }
  return ctx.op("Where", {c, a, b});
}

// Both operands in the dtype PyTorch compares in.
std::vector<ir::Value*> promoted(SymbolicContext& ctx) {
  ir::DType t = helpers::result_type(ctx, {0, 1});
  return inputs_as(ctx, {0, 1}, t);
}

// The comparison result as the node's dtype (bool, or self's dtype for eq_ & co).
void out_cmp(SymbolicContext& ctx, ir::Value* r) { ctx.out(ctx.cast(r, ctx.out_dtype())); }

ir::Value* any_nan(SymbolicContext& ctx, const std::vector<ir::Value*>& in) {
  return ctx.op("Or", {ctx.op("IsNaN", {in[0]}), ctx.op("IsNaN", {in[1]})});
}

// a == b. Before opset 11 Equal takes bool/int32/int64 only: floats are
// equal when neither is below or above the other and neither is NaN.
template <int Opset>
ir::Value* equal(SymbolicContext& ctx, std::vector<ir::Value*> in) {
  const ir::DType t = in[0]->dtype();
  if (Opset < 11 && ir::is_floating(t)) {
    ir::Value* ordered = ctx.op("Or", {ctx.op("Less", in), ctx.op("Greater", in)});
    return ctx.op("Not", {ctx.op("Or", {ordered, any_nan(ctx, in)})});
  }
  if (Opset < 11 && small_int(t))
    for (auto& v : in) v = ctx.cast(v, ir::DType::Int32);
  return ctx.op("Equal", in);
}

template <int Opset>
void eq(SymbolicContext& ctx) {
  out_cmp(ctx, equal<Opset>(ctx, promoted(ctx)));
}
template <int Opset>
void ne(SymbolicContext& ctx) {
  out_cmp(ctx, ctx.op("Not", {equal<Opset>(ctx, promoted(ctx))}));
}

// Less/Greater/LessOrEqual compare numbers; booleans go through int32.
std::vector<ir::Value*> ordered(SymbolicContext& ctx) {
  auto in = promoted(ctx);
  if (in[0]->dtype() == ir::DType::Bool)
    for (auto& v : in) v = ctx.cast(v, ir::DType::Int32);
  return in;
}

void lt(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("Less", ordered(ctx))); }
void gt(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("Greater", ordered(ctx))); }

// a <= b as not(a > b), which NaN operands make false as well.
ir::Value* not_above(SymbolicContext& ctx, const std::vector<ir::Value*>& in, const char* op) {
  ir::Value* r = ctx.op(op, in);
  if (ir::is_floating(in[0]->dtype())) r = ctx.op("Or", {r, any_nan(ctx, in)});
  return ctx.op("Not", {r});
}
void le_9(SymbolicContext& ctx) { out_cmp(ctx, not_above(ctx, ordered(ctx), "Greater")); }
void ge_9(SymbolicContext& ctx) {
  auto in = ordered(ctx);
  out_cmp(ctx, not_above(ctx, in, "Less"));
}
void le_12(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("LessOrEqual", ordered(ctx))); }
void ge_12(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("GreaterOrEqual", ordered(ctx))); }

std::vector<ir::Value*> as_bool(SymbolicContext& ctx, std::vector<size_t> idx) {
  return inputs_as(ctx, idx, ir::DType::Bool);
}

void logical_and(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("And", as_bool(ctx, {0, 1}))); }
void logical_or(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("Or", as_bool(ctx, {0, 1}))); }
void logical_xor(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("Xor", as_bool(ctx, {0, 1}))); }
void logical_not(SymbolicContext& ctx) { out_cmp(ctx, ctx.op("Not", as_bool(ctx, {0}))); }

// Integer and/or/xor before opset 18 (no bitwise operators in ONNX): a Loop
// over the bits in int64 arithmetic. A signed w-bit value is its sign bit
// (x < 0) and its low w-1 bits (x, or x + 2^(w-1) when negative, both in
// [0, 2^(w-1))); each low bit is rem - 2 * (rem / 2) of the halved remainder;
// the result is the combined low bits minus 2^(w-1) if the combined sign bit is set.
ir::Value* bitwise_loop(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t, const char* op) {
  const ir::DType i64 = ir::DType::Int64;
  const bool is_unsigned = t == ir::DType::UInt8;
  const int64_t w = static_cast<int64_t>(ir::dtype_size(t)) * 8;
  const int64_t low_bits = is_unsigned ? w : w - 1;
  const std::string kind = op;
  auto combine = [&](SymbolicContext& c, ir::Value* x, ir::Value* y) {
    ir::Value* xy = c.op("Mul", {x, y});
    if (kind == "And") return xy;
    ir::Value* sum = c.op("Add", {x, y});
    if (kind == "Or") return c.op("Sub", {sum, xy});
    return c.op("Sub", {sum, c.op("Add", {xy, xy})});  // Xor
  };
  a = ctx.cast(a, i64);
  b = ctx.cast(b, i64);
  // -2^(w-1) (int64's lowest value for w = 64)
  const int64_t low_min = is_unsigned ? 0 : (w == 64 ? std::numeric_limits<int64_t>::lowest() : -(int64_t{1} << (w - 1)));
  ir::Value* sa = nullptr;
  ir::Value* sb = nullptr;
  if (!is_unsigned) {
    sa = ctx.op("Less", {a, ctx.const_int(0)});
    sb = ctx.op("Less", {b, ctx.const_int(0)});
    a = ctx.op("Where", {sa, ctx.op("Sub", {a, ctx.const_int(low_min)}), a});
    b = ctx.op("Where", {sb, ctx.op("Sub", {b, ctx.const_int(low_min)}), b});
  }
  ir::Value* zero = ctx.op("Mul", {ctx.op("Add", {a, b}), ctx.const_int(0)});  // the broadcast shape
  auto outs = helpers::loop(ctx, ctx.const_int(low_bits), {a, b, zero, ctx.const_int(1)},
                            [&](SymbolicContext& c, ir::Value*, const std::vector<ir::Value*>& v) -> std::vector<ir::Value*> {
                              ir::Value* two = c.const_int(2);
                              ir::Value* ha = c.op("Div", {v[0], two});
                              ir::Value* hb = c.op("Div", {v[1], two});
                              ir::Value* ba = c.op("Sub", {v[0], c.op("Mul", {ha, two})});
                              ir::Value* bb = c.op("Sub", {v[1], c.op("Mul", {hb, two})});
                              ir::Value* acc = c.op("Add", {v[2], c.op("Mul", {combine(c, ba, bb), v[3]})});
                              return {ha, hb, acc, c.op("Mul", {v[3], two})};
                            });
  ir::Value* r = outs[2];
  if (!is_unsigned) {
    ir::Value* sign = combine(ctx, ctx.cast(sa, i64), ctx.cast(sb, i64));
    r = ctx.op("Add", {r, ctx.op("Mul", {sign, ctx.const_int(low_min)})});
  }
  return ctx.cast(r, t);
}

// __and__ / __or__ / __xor__ / bitwise_* on booleans (And/Or/Xor) and, before
// opset 18's BitwiseAnd/Or/Xor, on integers (bitwise_loop).
void bitwise(SymbolicContext& ctx, const char* op) {
  const ir::DType t = ctx.out_dtype() != ir::DType::Undefined ? ctx.out_dtype() : helpers::result_type(ctx, {0, 1});
  if (ir::is_floating(t)) ctx.fail("bitwise operations on floating tensors are not supported (as in PyTorch)");
  if (t != ir::DType::Bool) return ctx.out(bitwise_loop(ctx, ctx.in_as(0, t), ctx.in_as(1, t), t, op));
  ctx.out(ctx.op(op, as_bool(ctx, {0, 1})));
}
void bitwise_and(SymbolicContext& ctx) { bitwise(ctx, "And"); }
void bitwise_or(SymbolicContext& ctx) { bitwise(ctx, "Or"); }
void bitwise_xor(SymbolicContext& ctx) { bitwise(ctx, "Xor"); }

// Opset 18: integers with BitwiseAnd/Or/Xor (in the result type), booleans as before.
void bitwise_18(SymbolicContext& ctx, const char* logical, const char* bitwise_op) {
  const ir::DType t = ctx.out_dtype() != ir::DType::Undefined ? ctx.out_dtype() : helpers::result_type(ctx, {0, 1});
  if (t == ir::DType::Bool) return bitwise(ctx, logical);
  if (ir::is_floating(t)) ctx.fail("bitwise operations on floating tensors are not supported (as in PyTorch)");
  ctx.out(ctx.op(bitwise_op, {ctx.cast(ctx.in(0), t), ctx.cast(ctx.in(1), t)}));
}
void bitwise_and_18(SymbolicContext& ctx) { bitwise_18(ctx, "And", "BitwiseAnd"); }
void bitwise_or_18(SymbolicContext& ctx) { bitwise_18(ctx, "Or", "BitwiseOr"); }
void bitwise_xor_18(SymbolicContext& ctx) { bitwise_18(ctx, "Xor", "BitwiseXor"); }

// bitwise_not: logical not on bool, -x - 1 on signed integers (two's complement).
void bitwise_not(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  ir::Value* x = ctx.in(0);
  if (t == ir::DType::Bool) {
    ctx.out(ctx.op("Not", {x}));
    return;
  }
  if (ir::is_floating(t)) ctx.fail("bitwise_not of a floating tensor is not supported (as in PyTorch)");
  // 8/16-bit integers (and uint8's wrap-around) go through int32.
  ir::DType c = (t == ir::DType::Int32 || t == ir::DType::Int64) ? t : ir::DType::Int32;
  ir::Value* r = ctx.op("Sub", {ctx.op("Neg", {ctx.cast(x, c)}), ctx.const_scalar(c, 1)});
  ctx.out(ctx.cast(r, t));
}

// Opset 18: BitwiseNot on integers.
void bitwise_not_18(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  if (t == ir::DType::Bool || ir::is_floating(t)) return bitwise_not(ctx);
  ctx.out(ctx.op("BitwiseNot", {ctx.in(0)}));
}

// aten::where(condition, self, other)
void where(SymbolicContext& ctx) {
  if (ctx.num_args() == 1) return nonzero_numpy(ctx);  // where(condition): nonzero(condition, as_tuple=True)
  ir::DType t = ctx.out_dtype() != ir::DType::Undefined ? ctx.out_dtype() : helpers::result_type(ctx, {1, 2});
  ir::Value* cond = ctx.in_as(0, ir::DType::Bool);
  auto vals = inputs_as(ctx, {1, 2}, t);
  ctx.out(where_any(ctx, cond, vals[0], vals[1]));
}

// Elementwise max/min of two values of dtype t. ONNX Max/Min take integers
// from opset 12 (ONNX Runtime's not 16-bit ones); before, a comparison and
// Where. Booleans: Or / And.
template <int Opset>
ir::Value* max_min(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t, bool is_max) {
  if (t == ir::DType::Bool) return ctx.op(is_max ? "Or" : "And", {a, b});
  if (Opset < 12 && !ir::is_floating(t)) return where_any(ctx, ctx.op(is_max ? "Greater" : "Less", {a, b}), a, b);
  if (t == ir::DType::Int16 || t == ir::DType::UInt16) {
    ir::Value* r = ctx.op(is_max ? "Max" : "Min", {ctx.cast(a, ir::DType::Int32), ctx.cast(b, ir::DType::Int32)});
    return ctx.cast(r, t);
  }
  return ctx.op(is_max ? "Max" : "Min", {a, b});
}

// maximum/minimum (and max.other/min.other): NaN propagates, as in ONNX Max/Min.
template <int Opset, bool IsMax>
void binary_max_min(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(max_min<Opset>(ctx, in[0], in[1], t, IsMax));
}

// prim::max/prim::min: Python's max()/min() in TorchScript, of two numbers
// or of a list of numbers.
template <int Opset, bool IsMax>
void prim_max_min(SymbolicContext& ctx) {
  if (ctx.num_args() == 2 && !ctx.arg(0).is_list() && !ctx.arg(1).is_list()) return binary_max_min<Opset, IsMax>(ctx);
  if (ctx.num_args() != 1 || !ctx.arg(0).is_list()) ctx.fail("max()/min() of two lists is not supported");
  const Arg& list = ctx.arg(0);
  const ir::DType t = ir::is_floating(ctx.out_dtype()) ? ir::DType::Double : ir::DType::Int64;
  if (list.value) {  // a list computed at run time, as a 1-D tensor
    ctx.out(helpers::reduce(ctx, IsMax ? "ReduceMax" : "ReduceMin", ctx.cast(list.value, t), {0}, false));
    return;
  }
  if (list.elements.empty()) ctx.fail(std::string(IsMax ? "max" : "min") + "() of an empty list");
  ir::Value* r = nullptr;
  for (size_t k = 0; k < list.elements.size(); ++k) {
    ir::Value* v = ctx.cast(ctx.elem(0, k), t);
    r = r ? max_min<Opset>(ctx, r, v, t, IsMax) : v;
  }
  ctx.out(r);
}

// fmax/fmin: a NaN operand gives the other operand.
template <int Opset, bool IsMax>
void fmax_fmin(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  auto in = inputs_as(ctx, {0, 1}, t);
  ir::Value* r = max_min<Opset>(ctx, in[0], in[1], t, IsMax);
  if (ir::is_floating(t)) {
    r = where_any(ctx, ctx.op("IsNaN", {in[1]}), in[0], r);
    r = where_any(ctx, ctx.op("IsNaN", {in[0]}), in[1], r);
  }
  ctx.out(r);
}

// clamp(self, min=None, max=None) with numbers or tensors as bounds: min(max(x, lo), hi).
// Constant numbers use Clip where ONNX Runtime has it (float and half; all
// numbers from opset 12) and the bounds are ordered (Clip-6 insists).
template <int Opset>
void clamp_impl(SymbolicContext& ctx, std::optional<size_t> lo_idx, std::optional<size_t> hi_idx) {
  const ir::DType t = ctx.out_dtype();
  if (t == ir::DType::Bool) ctx.fail("clamp of a bool tensor is not supported (as in PyTorch)");
  ir::Value* x = ctx.in_as(0, t);
  const bool lo = lo_idx && !ctx.none(*lo_idx), hi = hi_idx && !ctx.none(*hi_idx);
  if (!lo && !hi) ctx.fail("clamp needs at least one of min and max");
  auto constant_number = [&](size_t i) { return ctx.arg(i).is_scalar() && ctx.constant(i); };
  const bool const_bounds = (!lo || constant_number(*lo_idx)) && (!hi || constant_number(*hi_idx));
  const bool clip_types = t == ir::DType::Float || t == ir::DType::Float16 || Opset >= 12;
  const bool ordered_bounds = !const_bounds || !lo || !hi || ctx.f(*lo_idx) <= ctx.f(*hi_idx);
  if (const_bounds && clip_types && ordered_bounds) {
    ctx.out(helpers::clip(ctx, x, lo ? std::optional<double>(ctx.f(*lo_idx)) : std::nullopt,
                          hi ? std::optional<double>(ctx.f(*hi_idx)) : std::nullopt));
    return;
  }
  if (lo) x = max_min<Opset>(ctx, x, ctx.in_as(*lo_idx, t), t, true);
  if (hi) x = max_min<Opset>(ctx, x, ctx.in_as(*hi_idx, t), t, false);
  ctx.out(x);
}

template <int Opset>
void clamp(SymbolicContext& ctx) {
  clamp_impl<Opset>(ctx, size_t{1}, size_t{2});
}
template <int Opset>
void clamp_min(SymbolicContext& ctx) {
  clamp_impl<Opset>(ctx, size_t{1}, std::nullopt);
}
template <int Opset>
void clamp_max(SymbolicContext& ctx) {
  clamp_impl<Opset>(ctx, std::nullopt, size_t{1});
}

// isnan: integers and booleans are never NaN (x < x is false, with x's shape).
void isnan(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  if (ir::is_floating(t)) {
    ctx.out(ctx.op("IsNaN", {ctx.in(0)}));
    return;
  }
  ir::Value* x = t == ir::DType::Bool ? ctx.cast(ctx.in(0), ir::DType::Int32) : ctx.in(0);
  ctx.out(ctx.op("Less", {x, x}));
}

// aten::isclose(self, other, rtol=1e-5, atol=1e-8, equal_nan=False):
// |a - b| <= atol + rtol * |b|, or a == b (equal infinities).
template <int Opset>
void isclose(SymbolicContext& ctx) {
  ir::DType t = helpers::result_type(ctx, {0, 1});
  auto in = inputs_as(ctx, {0, 1}, t);
  ir::Value* same = equal<Opset>(ctx, in);
  if (!ir::is_floating(t)) {
    // Integer/bool tolerances are computed in the default dtype, as in PyTorch.
    t = ir::DType::Float;
    for (auto& v : in) v = ctx.cast(v, t);
  }
  const double rtol = ctx.f(2), atol = ctx.f(3);
  const bool equal_nan = ctx.b(4);
  ir::Value* diff = ctx.op("Abs", {ctx.op("Sub", in)});
  ir::Value* tol = ctx.op("Add", {ctx.const_scalar(t, atol), ctx.op("Mul", {ctx.const_scalar(t, rtol),
                                                                           ctx.op("Abs", {in[1]})})});
  ir::Value* close = ctx.op("Not", {ctx.op("Greater", {diff, tol})});
  if (ir::is_floating(t)) {
    // not(diff > tol) is true for NaN; finite differences only.
    ir::Value* finite = ctx.op("Not", {ctx.op("IsNaN", {diff})});
    close = ctx.op("And", {close, finite});
    ir::Value* inf = ctx.const_scalar(t, std::numeric_limits<double>::infinity());
    close = ctx.op("And", {close, ctx.op("Less", {diff, inf})});
  }
  ir::Value* r = ctx.op("Or", {same, close});
  if (equal_nan && ir::is_floating(in[0]->dtype()))
    r = ctx.op("Or", {r, ctx.op("And", {ctx.op("IsNaN", {in[0]}), ctx.op("IsNaN", {in[1]})})});
  ctx.out(r);
}

}  // namespace

void register_comparison(Registry& r) {
  // Aliases (not_equal, greater, clip, ...) never reach graphs: TorchScript
  // normalizes them to these names.
  r.add("aten::eq", 9, eq<9>);
  r.add("aten::eq", 11, eq<11>);
  r.add("aten::ne", 9, ne<9>);
  r.add("aten::ne", 11, ne<11>);
  r.add("aten::lt", 9, lt);
  r.add("aten::gt", 9, gt);
  r.add("aten::le", 9, le_9);
  r.add("aten::le", 12, le_12);
  r.add("aten::ge", 9, ge_9);
  r.add("aten::ge", 12, ge_12);
  r.add("aten::logical_and", 9, logical_and);
  r.add("aten::logical_or", 9, logical_or);
  r.add("aten::logical_xor", 9, logical_xor);
  r.add("aten::logical_not", 9, logical_not);
  r.add("aten::__not__", 9, logical_not);  // `not` of a bool in TorchScript
  for (const char* op : {"aten::__and__", "aten::__iand__", "aten::bitwise_and"}) {
    r.add(op, 9, bitwise_and);
    r.add(op, 18, bitwise_and_18);
  }
  for (const char* op : {"aten::__or__", "aten::__ior__", "aten::bitwise_or"}) {
    r.add(op, 9, bitwise_or);
    r.add(op, 18, bitwise_or_18);
  }
  for (const char* op : {"aten::__xor__", "aten::__ixor__", "aten::bitwise_xor"}) {
    r.add(op, 9, bitwise_xor);
    r.add(op, 18, bitwise_xor_18);
  }
  r.add("aten::bitwise_not", 9, bitwise_not);
  r.add("aten::bitwise_not", 18, bitwise_not_18);
  r.add("aten::where", 9, where);
  r.add("aten::maximum", 9, binary_max_min<9, true>);
  r.add("aten::maximum", 12, binary_max_min<12, true>);
  r.add("aten::minimum", 9, binary_max_min<9, false>);
  r.add("aten::minimum", 12, binary_max_min<12, false>);
  r.add("prim::max", 9, prim_max_min<9, true>);
  r.add("prim::max", 12, prim_max_min<12, true>);
  r.add("prim::min", 9, prim_max_min<9, false>);
  r.add("prim::min", 12, prim_max_min<12, false>);
  r.add("aten::fmax", 9, fmax_fmin<9, true>);
  r.add("aten::fmax", 12, fmax_fmin<12, true>);
  r.add("aten::fmin", 9, fmax_fmin<9, false>);
  r.add("aten::fmin", 12, fmax_fmin<12, false>);
  r.add("aten::clamp", 9, clamp<9>);
  r.add("aten::clamp", 12, clamp<12>);
  r.add("aten::clamp_min", 9, clamp_min<9>);
  r.add("aten::clamp_min", 12, clamp_min<12>);
  r.add("aten::clamp_max", 9, clamp_max<9>);
  r.add("aten::clamp_max", 12, clamp_max<12>);
  r.add("aten::isnan", 9, isnan);
  r.add("aten::isclose", 9, isclose<9>);
  r.add("aten::isclose", 11, isclose<11>);
}

}  // namespace torch2onnx::symbolics
