// Elementwise math functions. Integer and bool inputs of floating functions
// are cast to the floating dtype PyTorch computes in (the node's output
// dtype). TorchScript's number forms (math.floor(x), math.sqrt(x) ...) use the
// same symbolics on 0-d values.
#include <cmath>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// The dtype of the result: the output's (numbers: int64 / double).
ir::DType result_dtype(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

ir::Value* input_as_output(SymbolicContext& ctx) { return ctx.in_as(0, result_dtype(ctx)); }

template <const char* Op>
void simple(SymbolicContext& ctx) {
  ctx.out(ctx.op(Op, {input_as_output(ctx)}));
}

constexpr char kExp[] = "Exp", kLog[] = "Log", kSqrt[] = "Sqrt", kSin[] = "Sin", kCos[] = "Cos", kTan[] = "Tan",
               kAsin[] = "Asin", kAcos[] = "Acos", kAtan[] = "Atan", kSinh[] = "Sinh", kCosh[] = "Cosh",
               kAsinh[] = "Asinh", kAcosh[] = "Acosh", kAtanh[] = "Atanh", kErf[] = "Erf", kReciprocal[] = "Reciprocal";

ir::Value* scalar(SymbolicContext& ctx, double v) { return ctx.const_scalar(result_dtype(ctx), v); }

void rsqrt(SymbolicContext& ctx) { ctx.out(ctx.op("Reciprocal", {ctx.op("Sqrt", {input_as_output(ctx)})})); }

void log_base(SymbolicContext& ctx, double base) {
  ctx.out(ctx.op("Div", {ctx.op("Log", {input_as_output(ctx)}), scalar(ctx, std::log(base))}));
}
void log2(SymbolicContext& ctx) { log_base(ctx, 2.0); }
void log10(SymbolicContext& ctx) { log_base(ctx, 10.0); }

void log1p(SymbolicContext& ctx) { ctx.out(ctx.op("Log", {ctx.op("Add", {input_as_output(ctx), scalar(ctx, 1.0)})})); }
void expm1(SymbolicContext& ctx) { ctx.out(ctx.op("Sub", {ctx.op("Exp", {input_as_output(ctx)}), scalar(ctx, 1.0)})); }

// aten::exp2(self) = 2 ** x
void exp2(SymbolicContext& ctx) { ctx.out(ctx.op("Pow", {scalar(ctx, 2.0), input_as_output(ctx)})); }

// aten::square(self) = x * x (bool squares to int64, as pow(x, 2)).
// ONNX Mul takes 8/16-bit integers only from opset 14: those go through int32.
void square(SymbolicContext& ctx) {
  const ir::DType t = result_dtype(ctx);
  const bool narrow = t == ir::DType::Int8 || t == ir::DType::UInt8 || t == ir::DType::Int16;
  ir::Value* x = ctx.in_as(0, narrow ? ir::DType::Int32 : t);
  ctx.out(ctx.cast(ctx.op("Mul", {x, x}), t));
}

// Truncation toward zero of a floating value.
ir::Value* trunc_float(SymbolicContext& ctx, ir::Value* x) {
  ir::Value* neg = ctx.op("Less", {x, ctx.const_scalar(x->dtype(), 0.0)});
  return ctx.op("Where", {neg, ctx.op("Ceil", {x}), ctx.op("Floor", {x})});
}

// floor/ceil/round/trunc of an integer is the integer itself; math.floor of
// a Python float is an int.
void rounding(SymbolicContext& ctx, const char* op) {
  if (!ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.cast(ctx.in(0), result_dtype(ctx)));
    return;
  }
  ir::Value* x = ctx.in(0);
  ir::Value* r = std::string(op) == "Trunc" ? trunc_float(ctx, x) : ctx.op(op, {x});
  ctx.out(ctx.cast(r, result_dtype(ctx)));
}
void floor_(SymbolicContext& ctx) { rounding(ctx, "Floor"); }
void ceil_(SymbolicContext& ctx) { rounding(ctx, "Ceil"); }
void trunc(SymbolicContext& ctx) { rounding(ctx, "Trunc"); }

// aten::round(self) / round.decimals(self, *, decimals): half to even, like
// ONNX Round; decimals as PyTorch: round(x * 10^d) / 10^d, or
// round(x / 10^-d) * 10^-d for negative d.
void round_(SymbolicContext& ctx) {
  if (!ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.cast(ctx.in(0), result_dtype(ctx)));
    return;
  }
  const int64_t decimals = ctx.num_args() > 1 && !ctx.none(1) ? ctx.i(1) : 0;
  ir::Value* x = ctx.in(0);
  const ir::DType t = x->dtype() == ir::DType::Undefined ? ctx.dtype(0) : x->dtype();
  if (decimals == 0) {
    ctx.out(ctx.cast(ctx.op("Round", {x}), result_dtype(ctx)));
    return;
  }
  ir::Value* p = ctx.const_scalar(t, std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
  ir::Value* r = decimals > 0 ? ctx.op("Div", {ctx.op("Round", {ctx.op("Mul", {x, p})}), p})
                              : ctx.op("Mul", {ctx.op("Round", {ctx.op("Div", {x, p})}), p});
  ctx.out(ctx.cast(r, result_dtype(ctx)));
}

// aten::frac(self) = x - trunc(x)
void frac(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Sub", {x, trunc_float(ctx, x)}));
}

// aten::abs(self); abs of a boolean is an error in PyTorch.
void abs_(SymbolicContext& ctx) {
  if (ctx.dtype(0) == ir::DType::Bool) ctx.fail("abs of a bool tensor is not supported (as in PyTorch)");
  ctx.out(ctx.op("Abs", {ctx.in(0)}));
}

// aten::sign / aten::sgn (real tensors): ONNX Sign; booleans are their own sign.
void sign(SymbolicContext& ctx) {
  if (ctx.dtype(0) == ir::DType::Bool) {
    ctx.out(ctx.in(0));
    return;
  }
  ctx.out(ctx.op("Sign", {ctx.in(0)}));
}

// aten::signbit(self): x < 0, and -0.0 (1 / -0.0 is -inf).
void signbit(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  ir::Value* x = ctx.in(0);
  if (t == ir::DType::Bool) x = ctx.cast(x, ir::DType::Int32);
  ir::Value* zero = ctx.const_scalar(x->dtype(), 0.0);
  ir::Value* neg = ctx.op("Less", {x, zero});
  if (ir::is_floating(t)) {
    ir::Value* inv = ctx.op("Div", {ctx.const_scalar(t, 1.0), x});
    neg = ctx.op("Or", {neg, ctx.op("Less", {inv, zero})});
  }
  ctx.out(neg);
}

}  // namespace

void register_unary(Registry& r) {
  r.add("aten::exp", 9, simple<kExp>);
  r.add("aten::log", 9, simple<kLog>);
  r.add("aten::sqrt", 9, simple<kSqrt>);
  r.add("aten::sin", 9, simple<kSin>);
  r.add("aten::cos", 9, simple<kCos>);
  r.add("aten::tan", 9, simple<kTan>);
  r.add("aten::asin", 9, simple<kAsin>);
  r.add("aten::acos", 9, simple<kAcos>);
  r.add("aten::atan", 9, simple<kAtan>);
  r.add("aten::sinh", 9, simple<kSinh>);
  r.add("aten::cosh", 9, simple<kCosh>);
  r.add("aten::asinh", 9, simple<kAsinh>);
  r.add("aten::acosh", 9, simple<kAcosh>);
  r.add("aten::atanh", 9, simple<kAtanh>);
  r.add("aten::erf", 9, simple<kErf>);
  r.add("aten::reciprocal", 9, simple<kReciprocal>);
  r.add("aten::rsqrt", 9, rsqrt);
  r.add("aten::log2", 9, log2);
  r.add("aten::log10", 9, log10);
  r.add("aten::log1p", 9, log1p);
  r.add("aten::expm1", 9, expm1);
  r.add("aten::exp2", 9, exp2);
  r.add("aten::square", 9, square);
  r.add("aten::floor", 9, floor_);
  r.add("aten::ceil", 9, ceil_);
  // Aliases (fix, absolute) never reach graphs: TorchScript normalizes them.
  r.add("aten::trunc", 9, trunc);
  r.add("aten::round", 11, round_);
  r.add("aten::frac", 9, frac);
  r.add("aten::abs", 9, abs_);
  r.add("prim::abs", 9, abs_);  // abs() of a number in TorchScript
  r.add("aten::sign", 9, sign);
  r.add("aten::sgn", 9, sign);
  r.add("aten::signbit", 9, signbit);
}

}  // namespace torch2onnx::symbolics
