// Private to symbolics/special.cpp and special_erf.cpp: the elementwise
// builder both families evaluate their functions with (in double, cast to
// PyTorch's result dtype at the end), and its constants.
#pragma once

#include <limits>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics::special {

inline constexpr double kPi = 3.14159265358979323846;
inline const double kInf = std::numeric_limits<double>::infinity();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr ir::DType W = ir::DType::Double;  // working dtype

// Elementwise builder over values of dtype `t`.
struct E {
  using Value = ir::Value;
  SymbolicContext& c;
  ir::DType t = W;
  Value* k(double v) { return c.const_scalar(t, v); }
  Value* add(Value* a, Value* b) { return c.op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) { return c.op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) { return c.op("Mul", {a, b}); }
  Value* div(Value* a, Value* b) { return c.op("Div", {a, b}); }
  Value* add(Value* a, double b) { return add(a, k(b)); }
  Value* mul(Value* a, double b) { return mul(a, k(b)); }
  Value* f(const char* op, Value* a) { return c.op(op, {a}); }
  Value* where(Value* m, Value* a, Value* b) { return c.op("Where", {m, a, b}); }
  Value* lt(Value* a, Value* b) { return c.op("Less", {a, b}); }
  Value* gt(Value* a, Value* b) { return c.op("Greater", {a, b}); }
  Value* lt(Value* a, double b) { return lt(a, k(b)); }
  Value* gt(Value* a, double b) { return gt(a, k(b)); }
  Value* eq(Value* a, Value* b) { return helpers::equal(c, a, b); }
  Value* eq(Value* a, double b) { return eq(a, k(b)); }
  Value* and_(Value* a, Value* b) { return c.op("And", {a, b}); }
  Value* or_(Value* a, Value* b) { return c.op("Or", {a, b}); }
  Value* not_(Value* a) { return c.op("Not", {a}); }
  Value* min(Value* a, double b) { return c.op("Min", {a, k(b)}); }
  Value* max(Value* a, double b) { return c.op("Max", {a, k(b)}); }
  Value* isnan(Value* a) { return c.op("IsNaN", {a}); }
  Value* is_int(Value* a) { return eq(f("Floor", a), a); }  // true for +-inf too
  Value* isinf(Value* a) { return eq(f("Abs", a), kInf); }
  // coef[0] z^n + ... + coef[n] (Cephes polevl order)
  Value* poly(Value* z, const std::vector<double>& coef) {
    Value* acc = k(coef[0]);
    for (size_t i = 1; i < coef.size(); ++i) acc = add(mul(acc, z), k(coef[i]));
    return acc;
  }
  // log(1 + u), accurate for small u (Kahan: the rounding of 1 + u is compensated).
  Value* log1p(Value* u) {
    Value* w = add(u, 1.0);
    Value* d = sub(w, k(1.0));
    Value* dz = eq(d, 0.0);
    Value* safe_d = where(dz, k(1.0), d);
    return where(dz, u, div(mul(f("Log", w), u), safe_d));
  }
  // x - round(x), in [-1/2, 1/2]: sin/cos(pi x) from it are accurate for any x.
  Value* frac_round(Value* x) { return sub(x, helpers::round_half_even(c, x)); }
};

// The result dtype of a floating special function (float for integer inputs).
inline ir::DType float_out(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

// A unary function computed in double: ctx.out(fn(x)).
template <class Fn>
void unary_w(SymbolicContext& ctx, Fn fn) {
  E e{ctx};
  ctx.out(ctx.cast(fn(e, ctx.in_as(0, W)), float_out(ctx)));
}

}  // namespace torch2onnx::symbolics::special
