// Arithmetic with PyTorch's type promotion: inputs are cast to the dtype
// PyTorch computes in (the node's output dtype), Python numbers become
// constants of that dtype. The same symbolics convert TorchScript's number
// arithmetic (aten::add.int, aten::floordiv.float ...): numbers are 0-d
// values of int64 / double / bool on the ONNX side.
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

// ONNX Add/Sub/Mul/Div take 8- and 16-bit integers from opset 14; before,
// such tensors are computed in int32 and cast back (wrapping as PyTorch does).
template <int Opset>
ir::DType arith_dtype(ir::DType t) {
  const bool small = t == ir::DType::Int8 || t == ir::DType::UInt8 || t == ir::DType::Int16 || t == ir::DType::UInt16;
  return Opset < 14 && small ? ir::DType::Int32 : t;
}

// other * alpha, unless alpha is 1.
ir::Value* scaled_other(SymbolicContext& ctx, ir::Value* other, size_t alpha_idx, ir::DType t) {
  if (ctx.num_args() <= alpha_idx || ctx.none(alpha_idx)) return other;
  if (ctx.constant(alpha_idx) && ctx.f(alpha_idx) == 1.0) return other;
  if (t == ir::DType::Bool) {
    // bool alpha on bool tensors: True is the identity, False drops `other`.
    if (ctx.constant(alpha_idx)) return ctx.f(alpha_idx) != 0.0 ? other : ctx.const_scalar(t, 0.0);
    return ctx.op("And", {other, ctx.scalar_value(alpha_idx, t)});
  }
  return ctx.op("Mul", {other, ctx.scalar_value(alpha_idx, t)});
}

// aten::add(self, other, alpha=1); bool + bool is a logical or.
template <int Opset>
void add(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list()) ctx.fail("list concatenation cannot be exported");
  if (ctx.arg(0).kind == Arg::Kind::String) ctx.fail("string concatenation cannot be exported");
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ir::Value* other = scaled_other(ctx, in[1], 2, c);
  ctx.out(ctx.cast(ctx.op(t == ir::DType::Bool ? "Or" : "Add", {in[0], other}), t));
}

// aten::sub(self, other, alpha=1)
template <int Opset>
void sub(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  if (t == ir::DType::Bool) ctx.fail("subtraction of booleans is not supported (as in PyTorch)");
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(ctx.op("Sub", {in[0], scaled_other(ctx, in[1], 2, c)}), t));
}

// aten::rsub(self, other, alpha=1) = other - alpha * self
template <int Opset>
void rsub(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  if (t == ir::DType::Bool) ctx.fail("subtraction of booleans is not supported (as in PyTorch)");
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(ctx.op("Sub", {in[1], scaled_other(ctx, in[0], 2, c)}), t));
}

// aten::mul(self, other); bool * bool is a logical and.
template <int Opset>
void mul(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list() || ctx.arg(1).is_list()) ctx.fail("list repetition cannot be exported");
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(ctx.op(t == ir::DType::Bool ? "And" : "Mul", in), t));
}

// Truncation toward zero of a floating value.
ir::Value* trunc_float(SymbolicContext& ctx, ir::Value* q, ir::DType t) {
  ir::Value* neg = ctx.op("Less", {q, ctx.const_scalar(t, 0.0)});
  return ctx.op("Where", {neg, ctx.op("Ceil", {q}), ctx.op("Floor", {q})});
}

// Division with rounding, remainder and fmod at opset `Opset`. ONNX has Mod
// from opset 10; before it, integers are divided in double (exact below
// 2^53) and float/half fmod is a - trunc(a / b) * b in double (exact for
// quotients below 2^53, as C's fmod).
template <int Opset>
struct Division {
  static constexpr bool kHasMod = Opset >= 10;

  // fmod(a, b): the sign of the dividend.
  static ir::Value* fmod(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
    if (kHasMod) return ctx.op("Mod", {a, b}, {{"fmod", int64_t{1}}});
    ir::Value* ad = ctx.cast(a, ir::DType::Double);
    ir::Value* bd = ctx.cast(b, ir::DType::Double);
    ir::Value* q = trunc_float(ctx, ctx.op("Div", {ad, bd}), ir::DType::Double);
    return ctx.cast(ctx.op("Sub", {ad, ctx.op("Mul", {q, bd})}), t);
  }

  // a mod b with the sign of the divisor (Python's %).
  static ir::Value* remainder(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
    if (!ir::is_floating(t)) {
      if (kHasMod) return ctx.op("Mod", {a, b}, {{"fmod", int64_t{0}}});
      ir::Value* ad = ctx.cast(a, ir::DType::Double);
      ir::Value* bd = ctx.cast(b, ir::DType::Double);
      ir::Value* q = ctx.op("Floor", {ctx.op("Div", {ad, bd})});
      return ctx.cast(ctx.op("Sub", {ad, ctx.op("Mul", {q, bd})}), t);
    }
    // PyTorch: fmod(a, b), plus b where it is non-zero and its sign differs from b's.
    ir::Value* r = fmod(ctx, a, b, t);
    return ctx.op("Where", {signs_differ(ctx, r, b, t), ctx.op("Add", {r, b}), r});
  }

  // a // b rounded to -inf, as PyTorch computes it.
  static ir::Value* floor_div(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
    if (!ir::is_floating(t)) {
      if (!kHasMod) {
        ir::Value* q = ctx.op("Div", {ctx.cast(a, ir::DType::Double), ctx.cast(b, ir::DType::Double)});
        return ctx.cast(ctx.op("Floor", {q}), t);
      }
      // (a - mod(a, b)) is a multiple of b, so the truncating Div is exact.
      ir::Value* r = ctx.op("Mod", {a, b}, {{"fmod", int64_t{0}}});
      return ctx.op("Div", {ctx.op("Sub", {a, r}), b});
    }
    // div_floor_floating: from fmod, so that 1 // 0.1 is 9 as in Python.
    ir::Value* mod = fmod(ctx, a, b, t);
    ir::Value* div = ctx.op("Div", {ctx.op("Sub", {a, mod}), b});
    div = ctx.op("Where", {signs_differ(ctx, mod, b, t), ctx.op("Sub", {div, ctx.const_scalar(t, 1.0)}), div});
    ir::Value* fl = ctx.op("Floor", {div});
    ir::Value* up = ctx.op("Greater", {ctx.op("Sub", {div, fl}), ctx.const_scalar(t, 0.5)});
    fl = ctx.op("Where", {up, ctx.op("Add", {fl, ctx.const_scalar(t, 1.0)}), fl});
    // b == 0: a / b (inf or nan), as PyTorch
    ir::Value* zero = ctx.const_scalar(t, 0.0);
    ir::Value* b_zero = ctx.op("Not", {ctx.op("Or", {ctx.op("Less", {b, zero}), ctx.op("Greater", {b, zero})})});
    return ctx.op("Where", {b_zero, ctx.op("Div", {a, b}), fl});
  }

  // r != 0 and sign(r) != sign(b)
  static ir::Value* signs_differ(SymbolicContext& ctx, ir::Value* r, ir::Value* b, ir::DType t) {
    ir::Value* zero = ctx.const_scalar(t, 0.0);
    auto lt0 = [&](ir::Value* v) { return ctx.op("Less", {v, zero}); };
    auto gt0 = [&](ir::Value* v) { return ctx.op("Greater", {v, zero}); };
    return ctx.op("Or", {ctx.op("And", {lt0(r), gt0(b)}), ctx.op("And", {gt0(r), lt0(b)})});
  }
};

// aten::div(self, other, rounding_mode=None|"trunc"|"floor")
template <int Opset>
void div(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  std::string mode = ctx.num_args() > 2 && !ctx.none(2) ? ctx.s(2) : "";
  if (mode.empty() && !ir::is_floating(t)) t = ir::DType::Float;  // true division
  const ir::DType c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ir::Value* r = nullptr;
  if (mode.empty()) {
    r = ctx.op("Div", in);
  } else if (mode == "trunc") {
    r = ctx.op("Div", in);  // integer Div truncates
    if (ir::is_floating(t)) r = trunc_float(ctx, r, t);
  } else if (mode == "floor") {
    r = Division<Opset>::floor_div(ctx, in[0], in[1], c);
  } else {
    ctx.fail("unknown rounding_mode '" + mode + "'");
  }
  ctx.out(ctx.cast(r, t));
}

// aten::floor_divide(self, other) (floor rounding since PyTorch 1.13) and
// TorchScript's number floordiv.
template <int Opset>
void floor_divide(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(Division<Opset>::floor_div(ctx, in[0], in[1], c), t));
}

// aten::remainder(self, other): the result has the sign of the divisor.
template <int Opset>
void remainder(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(Division<Opset>::remainder(ctx, in[0], in[1], c), t));
}

// aten::fmod(self, other): the result has the sign of the dividend.
template <int Opset>
void fmod(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  auto in = inputs_as(ctx, {0, 1}, c);
  ctx.out(ctx.cast(Division<Opset>::fmod(ctx, in[0], in[1], c), t));
}

// aten::pow(self, exponent). ONNX Pow takes integer bases from opset 12;
// before, integers are raised in double (exact for results below 2^53).
void pow_12(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  if (t == ir::DType::Bool) ctx.fail("pow of booleans is not supported");
  if (!ir::is_floating(t) && t != ir::DType::Int32 && t != ir::DType::Int64) {
    // ONNX Runtime's Pow has no 8/16-bit integers.
    auto in = inputs_as(ctx, {0, 1}, ir::DType::Int64);
    ctx.out(ctx.cast(ctx.op("Pow", in), t));
    return;
  }
  auto in = inputs_as(ctx, {0, 1}, t);
  ctx.out(ctx.op("Pow", in));
}

void pow_9(SymbolicContext& ctx) {
  ir::DType t = compute_dtype(ctx, {0, 1});
  if (t == ir::DType::Bool) ctx.fail("pow of booleans is not supported");
  ir::DType f = ir::is_floating(t) ? t : ir::DType::Double;
  auto in = inputs_as(ctx, {0, 1}, f);
  ctx.out(ctx.cast(ctx.op("Pow", in), t));
}

// aten::float_power(self, exponent): pow in double (the result is double).
void float_power(SymbolicContext& ctx) {
  ctx.out(ctx.op("Pow", inputs_as(ctx, {0, 1}, ir::DType::Double)));
}

// 2^k for shift amount argument `idx`, as dtype c: a constant, or computed in
// double (exact for every power of two).
ir::Value* shift_factor(SymbolicContext& ctx, size_t idx, ir::DType c) {
  if (ctx.constant(idx) && ctx.arg(idx).is_scalar()) {
    const int64_t k = ctx.i(idx);
    if (k < 0 || k > 62) ctx.fail("shift amount " + std::to_string(k) + " is out of range");
    return ctx.const_scalar(c, static_cast<double>(int64_t{1} << k));
  }
  ir::Value* k = ctx.in_as(idx, ir::DType::Double);
  return ctx.cast(ctx.op("Pow", {ctx.const_scalar(ir::DType::Double, 2.0), k}), c);
}

// __lshift__ / bitwise_left_shift: x * 2^k; __rshift__ / bitwise_right_shift:
// floor(x / 2^k) (arithmetic shift). Integers only, as in PyTorch.
template <int Opset, bool Left>
void shift(SymbolicContext& ctx) {
  const ir::DType t = compute_dtype(ctx, {0, 1}), c = arith_dtype<Opset>(t);
  if (!ir::is_integral(t)) ctx.fail("bit shifts of floating or bool tensors are not supported (as in PyTorch)");
  ir::Value* x = ctx.in_as(0, c);
  ir::Value* f = shift_factor(ctx, 1, c);
  ir::Value* r = Left ? ctx.op("Mul", {x, f}) : Division<Opset>::floor_div(ctx, x, f, c);
  ctx.out(ctx.cast(r, t));
}

// aten::neg(self); neg of a boolean is an error in PyTorch.
void neg(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype() == ir::DType::Undefined ? ctx.dtype(0) : ctx.out_dtype();
  if (t == ir::DType::Bool) ctx.fail("negation of booleans is not supported (as in PyTorch)");
  ir::Value* x = ctx.in_as(0, t);
  if (t == ir::DType::UInt8) {  // wraps around, as PyTorch's uint8 negation
    ctx.out(ctx.cast(ctx.op("Neg", {ctx.cast(x, ir::DType::Int32)}), t));
    return;
  }
  ctx.out(ctx.op("Neg", {x}));
}

}  // namespace

void register_arithmetic(Registry& r) {
  // Opset 10: integer Mod; opset 14: Add/Sub/Mul/Div on 8/16-bit integers.
  // Aliases (multiply, divide, true_divide, subtract, negative) never reach
  // graphs: TorchScript normalizes them to these names.
  r.add("aten::add", 9, add<9>);
  r.add("aten::add", 14, add<14>);
  r.add("aten::sub", 9, sub<9>);
  r.add("aten::sub", 14, sub<14>);
  r.add("aten::rsub", 9, rsub<9>);
  r.add("aten::rsub", 14, rsub<14>);
  r.add("aten::mul", 9, mul<9>);
  r.add("aten::mul", 14, mul<14>);
  r.add("aten::div", 9, div<9>);
  r.add("aten::div", 10, div<10>);
  r.add("aten::div", 14, div<14>);
  for (const char* op : {"aten::floor_divide", "aten::floordiv"}) {
    r.add(op, 9, floor_divide<9>);
    r.add(op, 10, floor_divide<10>);
    r.add(op, 14, floor_divide<14>);
  }
  r.add("aten::remainder", 9, remainder<9>);
  r.add("aten::remainder", 10, remainder<10>);
  r.add("aten::remainder", 14, remainder<14>);
  r.add("aten::fmod", 9, fmod<9>);
  r.add("aten::fmod", 10, fmod<10>);
  r.add("aten::fmod", 14, fmod<14>);
  r.add("aten::pow", 9, pow_9);
  r.add("aten::pow", 12, pow_12);
  r.add("aten::float_power", 9, float_power);
  for (const char* op : {"aten::__lshift__", "aten::__ilshift__", "aten::bitwise_left_shift"}) {
    r.add(op, 9, shift<9, true>);
    r.add(op, 14, shift<14, true>);
  }
  for (const char* op : {"aten::__rshift__", "aten::__irshift__", "aten::bitwise_right_shift"}) {
    r.add(op, 9, shift<9, false>);
    r.add(op, 10, shift<10, false>);
    r.add(op, 14, shift<14, false>);
  }
  r.add("aten::neg", 9, neg);
}

}  // namespace torch2onnx::symbolics
