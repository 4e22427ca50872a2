// Elementwise math functions. Integer inputs of floating functions are cast
// to the floating dtype PyTorch computes in (the node's output dtype).
#include <cmath>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

ir::Value* input_as_output(SymbolicContext& ctx) { return ctx.cast(ctx.in(0), ctx.out_dtype()); }

template <const char* Op>
void simple(SymbolicContext& ctx) {
  ctx.out(ctx.op(Op, {input_as_output(ctx)}));
}

constexpr char kExp[] = "Exp", kLog[] = "Log", kSqrt[] = "Sqrt", kSin[] = "Sin", kCos[] = "Cos", kTan[] = "Tan",
               kAsin[] = "Asin", kAcos[] = "Acos", kAtan[] = "Atan", kSinh[] = "Sinh", kCosh[] = "Cosh",
               kAsinh[] = "Asinh", kAcosh[] = "Acosh", kAtanh[] = "Atanh", kErf[] = "Erf", kReciprocal[] = "Reciprocal";

ir::Value* scalar(SymbolicContext& ctx, double v) { return ctx.const_scalar(ctx.out_dtype(), v); }

void rsqrt(SymbolicContext& ctx) { ctx.out(ctx.op("Reciprocal", {ctx.op("Sqrt", {input_as_output(ctx)})})); }

void log_base(SymbolicContext& ctx, double base) {
  ctx.out(ctx.op("Div", {ctx.op("Log", {input_as_output(ctx)}), scalar(ctx, std::log(base))}));
}
void log2(SymbolicContext& ctx) { log_base(ctx, 2.0); }
void log10(SymbolicContext& ctx) { log_base(ctx, 10.0); }

void log1p(SymbolicContext& ctx) { ctx.out(ctx.op("Log", {ctx.op("Add", {input_as_output(ctx), scalar(ctx, 1.0)})})); }
void expm1(SymbolicContext& ctx) { ctx.out(ctx.op("Sub", {ctx.op("Exp", {input_as_output(ctx)}), scalar(ctx, 1.0)})); }

void square(SymbolicContext& ctx) {
  ir::Value* x = input_as_output(ctx);
  ctx.out(ctx.op("Mul", {x, x}));
}

// floor/ceil/round/trunc of an integer tensor is the tensor itself.
void rounding(SymbolicContext& ctx, const char* op) {
  if (!ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.in(0));
    return;
  }
  ctx.out(ctx.op(op, {ctx.in(0)}));
}
void floor_(SymbolicContext& ctx) { rounding(ctx, "Floor"); }
void ceil_(SymbolicContext& ctx) { rounding(ctx, "Ceil"); }

void trunc(SymbolicContext& ctx) {
  if (!ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.in(0));
    return;
  }
  ir::Value* x = ctx.in(0);
  ir::Value* neg = ctx.op("Less", {x, scalar(ctx, 0.0)});
  ctx.out(ctx.op("Where", {neg, ctx.op("Ceil", {x}), ctx.op("Floor", {x})}));
}

// aten::round(self[, decimals]) -- half to even, like ONNX Round.
void round_(SymbolicContext& ctx) {
  if (!ir::is_floating(ctx.dtype(0))) {
    ctx.out(ctx.in(0));
    return;
  }
  int64_t decimals = ctx.num_args() > 1 ? ctx.i(1) : 0;
  if (decimals == 0) {
    ctx.out(ctx.op("Round", {ctx.in(0)}));
    return;
  }
  ir::Value* s = scalar(ctx, std::pow(10.0, static_cast<double>(decimals)));
  ctx.out(ctx.op("Div", {ctx.op("Round", {ctx.op("Mul", {ctx.in(0), s})}), s}));
}

void frac(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ir::Value* neg = ctx.op("Less", {x, scalar(ctx, 0.0)});
  ctx.out(ctx.op("Sub", {x, ctx.op("Where", {neg, ctx.op("Ceil", {x}), ctx.op("Floor", {x})})}));
}

// aten::abs / sign on integers are fine in ONNX as they are.
void abs_(SymbolicContext& ctx) { ctx.out(ctx.op("Abs", {ctx.in(0)})); }
void sign(SymbolicContext& ctx) { ctx.out(ctx.op("Sign", {ctx.in(0)})); }

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
  r.add("aten::square", 9, square);
  r.add("aten::floor", 9, floor_);
  r.add("aten::ceil", 9, ceil_);
  r.add("aten::trunc", 9, trunc);
  r.add("aten::fix", 9, trunc);
  r.add("aten::round", 11, round_);
  r.add("aten::frac", 9, frac);
  r.add("aten::abs", 9, abs_);
  r.add("aten::absolute", 9, abs_);
  r.add("aten::sign", 9, sign);
}

}  // namespace torch2onnx::symbolics
