// torch.special's error-function family: erfc, erfcx, log_ndtr, ndtri and erfinv;
// nextafter, frexp and ldexp (floating-point bits), gcd and lcm (integers),
// and the torch.special aliases of operators other families lower.
//
// Every floating function is evaluated in double (then cast to PyTorch's
// result dtype), so float32 results are correctly rounded or nearly so over
// the whole domain. Ranges are selected with Where; each branch is evaluated
// on arguments clamped into its own range so nothing non-finite reaches a
// Gather index or an arithmetic combination of branches.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/special_common.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;
using special::E;
using special::float_out;
using special::kInf;
using special::kNaN;
using special::kPi;
using special::unary_w;
using special::W;

// ------------------------------------------------------------------ error-function family

// erfcx(x) = exp(x^2) erfc(x) in double, to build the table below: the C
// library's erfc under 2, Laplace's continued fraction (evaluated bottom-up
// from 300 levels, converged to double precision for x >= 2) above.
double erfcx_ref(double x) {
  if (x < 2) return std::exp(x * x) * std::erfc(x);
  double f = x;
  for (int n = 300; n >= 1; --n) f = x + (n / 2.0) / f;
  return 1.0 / (f * std::sqrt(kPi));
}

// erfcx on x >= 0 as S. G. Johnson's (PyTorch's calc_erfcx): in y = 4 / (4 + x),
// a Chebyshev expansion on each of kCells equal cells of [0, 1] (up to x = 50;
// coefficients fitted here at Chebyshev nodes), and the continued fraction's
// 5-term form beyond 50 (1 / (sqrt(pi) x) beyond 5e7).
constexpr int kCells = 100, kTerms = 12;
const std::vector<std::vector<double>>& erfcx_table() {
  static const std::vector<std::vector<double>> table = [] {
    std::vector<std::vector<double>> c(kTerms, std::vector<double>(kCells));
    for (int j = 0; j < kCells; ++j) {
      std::vector<double> g(kTerms);
      for (int m = 0; m < kTerms; ++m) {
        const double t = std::cos(kPi * (m + 0.5) / kTerms);
        const double y = (j + (t + 1) / 2) / kCells;
        g[m] = erfcx_ref(4 / y - 4);
      }
      for (int k = 0; k < kTerms; ++k) {
        double s = 0;
        for (int m = 0; m < kTerms; ++m) s += g[m] * std::cos(kPi * k * (m + 0.5) / kTerms);
        c[k][j] = 2.0 * s / kTerms * (k == 0 ? 0.5 : 1.0);
      }
    }
    return c;
  }();
  return table;
}

Value* erfcx_pos(E& e, Value* ax) {
  Value* ky = e.div(e.k(4.0 * kCells), e.add(ax, 4.0));
  Value* cell = e.min(e.f("Floor", ky), kCells - 1);
  Value* idx = e.c.cast(cell, DType::Int64);
  Value* t = e.add(e.mul(e.sub(ky, cell), 2.0), -1.0);
  const auto& tab = erfcx_table();
  auto coef = [&](int k) {
    return e.c.op("Gather", {e.c.constant(ir::Tensor::from_doubles(W, tab[k], {kCells})), idx}, {{"axis", int64_t{0}}});
  };
  Value* b1 = e.k(0.0);
  Value* b2 = e.k(0.0);
  Value* t2 = e.mul(t, 2.0);
  for (int k = kTerms - 1; k >= 1; --k) {  // Clenshaw
    Value* b = e.sub(e.add(coef(k), e.mul(t2, b1)), b2);
    b2 = b1;
    b1 = b;
  }
  Value* cheb = e.sub(e.add(coef(0), e.mul(t, b1)), b2);
  const double ispi = 1 / std::sqrt(kPi);
  Value* xc = e.min(ax, 5e7);
  Value* x2 = e.mul(xc, xc);
  Value* cf = e.div(e.mul(e.add(e.mul(x2, e.add(x2, 4.5)), 2.0), ispi),
                    e.mul(xc, e.add(e.mul(x2, e.add(x2, 5.0)), 3.75)));
  cf = e.where(e.gt(ax, 5e7), e.div(e.k(ispi), ax), cf);
  return e.where(e.gt(ax, 50.0), cf, cheb);
}

// |x| with NaN replaced by 0 (NaN results are restored by the callers).
Value* abs_clean(E& e, Value* x) { return e.where(e.isnan(x), e.k(0.0), e.f("Abs", x)); }
Value* keep_nan(E& e, Value* x, Value* r) { return e.where(e.isnan(x), x, r); }

// exp(sign x^2) with x^2 split as xh^2 + (x - xh)(x + xh), xh = x rounded to
// 20 fraction bits (xh^2 is exact): the rounding of x^2, amplified by exp
// (x^2 up to 700), does not reach the result. |x| is clamped to 30, where
// the result has already under- or overflowed (so inf stays finite here).
Value* exp_sq(E& e, Value* x, double sign) {
  x = e.max(e.min(x, 30.0), -30.0);
  Value* xh = e.mul(e.f("Floor", e.mul(x, 1048576.0)), 1.0 / 1048576.0);
  Value* lo = e.mul(e.sub(x, xh), e.add(x, xh));
  return e.mul(e.f("Exp", e.mul(e.mul(xh, xh), sign)), e.f("Exp", e.mul(lo, sign)));
}

// erfc(x) = erfcx(|x|) exp(-x^2), reflected as 2 - erfc(-x) below 0.
Value* erfc_w(E& e, Value* x) {
  Value* ec = e.mul(erfcx_pos(e, abs_clean(e, x)), exp_sq(e, x, -1.0));
  return keep_nan(e, x, e.where(e.lt(x, 0.0), e.sub(e.k(2.0), ec), ec));
}

// erfcx(x), with erfcx(x) = 2 exp(x^2) - erfcx(-x) below 0 (+inf once exp overflows).
Value* erfcx_w(E& e, Value* x) {
  Value* p = erfcx_pos(e, abs_clean(e, x));
  return keep_nan(e, x, e.where(e.lt(x, 0.0), e.sub(e.mul(exp_sq(e, x, 1.0), 2.0), p), p));
}

// log of the normal CDF (PyTorch's calc_log_ndtr): with t = x / sqrt 2,
// log(erfcx(-t) / 2) - t^2 below x = -1 (no underflow however negative),
// log1p(-erfc(t) / 2) above.
Value* log_ndtr_w(E& e, Value* x) {
  Value* t = e.mul(x, M_SQRT1_2);
  Value* p = erfcx_pos(e, abs_clean(e, t));
  Value* low = e.sub(e.f("Log", e.mul(p, 0.5)), e.mul(t, t));
  Value* ec = e.mul(p, exp_sq(e, t, -1.0));
  ec = e.where(e.lt(t, 0.0), e.sub(e.k(2.0), ec), ec);
  Value* high = e.log1p(e.mul(ec, -0.5));
  return keep_nan(e, x, e.where(e.lt(x, -1.0), low, high));
}

// The normal quantile (Cephes ndtri, as PyTorch's calc_ndtri): a rational
// function of y - 1/2 in the centre, of 1 / sqrt(-2 log y) in the tails.
Value* ndtri_w(E& e, Value* y0) {
  const double em2 = 0.13533528323661269189;  // exp(-2)
  Value* flip = e.gt(y0, 1.0 - em2);
  Value* y = e.where(flip, e.sub(e.k(1.0), y0), y0);
  Value* yc = e.add(y, -0.5);
  Value* y2 = e.mul(yc, yc);
  Value* central = e.div(
      e.mul(y2, e.poly(y2, {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                            1.39312609387279679503E1, -1.23916583867381258016E0})),
      e.poly(y2, {1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                  -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                  1.59056225126211695515E1, -1.18331621121330003142E0}));
  central = e.mul(e.add(yc, e.mul(yc, central)), 2.50662827463100050242E0);
  Value* yt = e.max(e.min(y, 0.5), 1e-300);
  Value* xt = e.f("Sqrt", e.mul(e.f("Log", yt), -2.0));
  Value* x0 = e.sub(xt, e.div(e.f("Log", xt), xt));
  Value* z = e.f("Reciprocal", xt);
  Value* x1a = e.div(e.mul(z, e.poly(z, {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                                          4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                                          -1.40256079171354495875E-1, -3.50424626827848203418E-2,
                                          -8.57456785154685413611E-4})),
                     e.poly(z, {1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                                1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                                -3.80806407691578277194E-2, -9.33259480895457427372E-4}));
  Value* x1b = e.div(e.mul(z, e.poly(z, {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                                          1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                                          3.01581553508235416007E-4, 2.65806974686737550832E-6,
                                          6.23974539184983293730E-9})),
                     e.poly(z, {1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                                2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                                2.89247864745380683936E-6, 6.79019408009981274425E-9}));
  Value* tail = e.sub(x0, e.where(e.lt(xt, 8.0), x1a, x1b));
  tail = e.where(flip, tail, e.f("Neg", tail));
  Value* r = e.where(e.gt(y, em2), central, tail);
  r = e.where(e.eq(y0, 0.0), e.k(-kInf), e.where(e.eq(y0, 1.0), e.k(kInf), r));
  return e.where(e.or_(e.lt(y0, 0.0), e.gt(y0, 1.0)), e.k(kNaN), r);
}

// erfinv(y) = ndtri((1 + y) / 2) / sqrt(2), in double: (1 + y) / 2 and its
// complement are exact there for a float32 y, so the tails keep float32
// accuracy up to |y| -> 1 (Newton steps on Erf in float32 do not).
Value* erfinv_w(E& e, Value* y) { return e.mul(ndtri_w(e, e.mul(e.add(y, 1.0), 0.5)), 0.70710678118654752440); }

// aten::erfinv(self), aten::special_erfinv(self)
void erfinv(SymbolicContext& ctx) { unary_w(ctx, erfinv_w); }
// aten::erfc(self), aten::special_erfc(self)
void erfc(SymbolicContext& ctx) { unary_w(ctx, erfc_w); }
// aten::special_erfcx(self)
void erfcx(SymbolicContext& ctx) { unary_w(ctx, erfcx_w); }
// aten::special_log_ndtr(self)
void log_ndtr(SymbolicContext& ctx) { unary_w(ctx, log_ndtr_w); }
// aten::special_ndtri(self)
void ndtri(SymbolicContext& ctx) { unary_w(ctx, ndtri_w); }

// ------------------------------------------------------------------ floating-point bits, integers

// floor(log2 |x|) exactly, as a double, for finite nonzero |x| (`ax`, double):
// the logarithm's estimate corrected against exact powers of two. Also returns 2^e.
Value* exponent_of(E& e, Value* ax, Value** pow2) {
  Value* el = e.f("Floor", e.mul(e.f("Log", ax), 1.0 / std::log(2.0)));
  Value* two = e.k(2.0);
  Value* p = e.c.op("Pow", {two, el});
  el = e.where(e.gt(p, ax), e.add(el, -1.0), el);
  p = e.c.op("Pow", {two, el});
  el = e.where(e.not_(e.gt(e.mul(p, 2.0), ax)), e.add(el, 1.0), el);
  *pow2 = e.c.op("Pow", {two, el});
  return el;
}

// |x| in double with 0, inf and NaN replaced by 1 (handled by the callers).
Value* abs_finite_nonzero(E& e, Value* xd) {
  Value* ax = e.f("Abs", xd);
  Value* bad = e.or_(e.or_(e.eq(ax, 0.0), e.eq(ax, kInf)), e.isnan(xd));
  return e.where(bad, e.k(1.0), ax);
}

// aten::nextafter(self, other): x plus or minus one unit in the last place,
// the unit being 2^(e - mantissa bits) (half of it stepping down from a power
// of two towards zero), at least the smallest subnormal.
void nextafter(SymbolicContext& ctx) {
  const DType t = float_out(ctx);
  if (t != DType::Float && t != DType::Double) ctx.fail("nextafter is lowered for float32 and float64 only");
  const bool dbl = t == DType::Double;
  const double dmin = dbl ? std::numeric_limits<double>::denorm_min() : double(std::numeric_limits<float>::denorm_min());
  const double big = dbl ? std::numeric_limits<double>::max() : double(std::numeric_limits<float>::max());
  E w{ctx};
  E e{ctx, t};
  Value* x = ctx.in_as(0, t);
  Value* y = ctx.in_as(1, t);
  Value* ax = abs_finite_nonzero(w, ctx.cast(x, W));
  Value* p2;
  Value* el = exponent_of(w, ax, &p2);
  Value* away = w.max(w.c.op("Pow", {w.k(2.0), w.add(el, dbl ? -52.0 : -23.0)}), dmin);
  Value* toward = w.max(w.where(w.eq(ax, p2), w.mul(away, 0.5), away), dmin);
  away = ctx.cast(away, t);
  toward = ctx.cast(toward, t);
  Value* pos = e.gt(x, 0.0);
  Value* up = e.add(x, e.where(pos, away, toward));
  Value* down = e.sub(x, e.where(pos, toward, away));
  Value* gt = e.gt(y, x);
  Value* lt = e.lt(y, x);
  Value* r = e.where(gt, up, e.where(lt, down, y));
  r = e.where(e.eq(x, 0.0), e.where(gt, e.k(dmin), e.where(lt, e.k(-dmin), y)), r);
  Value* inf_move = e.and_(e.isinf(x), e.or_(gt, lt));
  r = e.where(inf_move, e.where(gt, e.k(-big), e.k(big)), r);
  ctx.out(e.where(e.isnan(x), x, r));
}

// aten::frexp(self) -> (mantissa, exponent): x = m 2^e with |m| in [1/2, 1);
// m = x, e = 0 for 0, inf and NaN. The scaling by 2^-e is split in two exact
// multiplications so no power of two overflows (subnormal doubles).
void frexp(SymbolicContext& ctx) {
  const DType t = ctx.dtype(0);
  if (!ir::is_floating(t)) ctx.fail("frexp needs a floating-point input");
  E w{ctx};
  Value* xd = ctx.in_as(0, W);
  Value* ax = w.f("Abs", xd);
  Value* special = w.or_(w.or_(w.eq(ax, 0.0), w.eq(ax, kInf)), w.isnan(xd));
  Value* p2;
  Value* ex = w.add(exponent_of(w, abs_finite_nonzero(w, xd), &p2), 1.0);
  Value* h = w.f("Floor", w.mul(ex, -0.5));
  Value* two = w.k(2.0);
  Value* m = w.mul(w.mul(xd, w.c.op("Pow", {two, h})), w.c.op("Pow", {two, w.sub(w.f("Neg", ex), h)}));
  m = w.where(special, xd, m);
  ex = w.where(special, w.k(0.0), ex);
  ctx.out(ctx.cast(m, t), 0);
  DType et = ctx.num_outputs() > 1 ? ctx.out_dtype(1) : DType::Int32;
  ctx.out(ctx.cast(ex, et == DType::Undefined ? DType::Int32 : et), 1);
}

// aten::ldexp(self, other) = self * 2^other, as PyTorch computes it.
void ldexp(SymbolicContext& ctx) {
  const DType t = float_out(ctx);
  Value* p = ctx.op("Pow", {ctx.const_scalar(t, 2.0), ctx.in_as(1, t)});
  ctx.out(ctx.op("Mul", {ctx.in_as(0, t), p}));
}

// gcd of |a| and |b| (int64, same shape) by Euclid's algorithm in a Loop of
// 92 steps, enough for any int64 pair (consecutive Fibonacci numbers are the
// worst case and F(93) > 2^63).
Value* gcd_i64(SymbolicContext& ctx, Value* a, Value* b) {
  Value* shape = ctx.op("Shape", {ctx.op("Add", {a, b})});
  a = ctx.op("Abs", {ctx.op("Expand", {a, shape})});
  b = ctx.op("Abs", {ctx.op("Expand", {b, shape})});
  auto outs = helpers::loop(ctx, ctx.const_int(92), {a, b},
                            [&](SymbolicContext& s, Value*, const std::vector<Value*>& c) -> std::vector<Value*> {
                              Value* zero = s.const_scalar(DType::Int64, 0);
                              Value* nz = s.op("Not", {helpers::equal(s, c[0], zero)});
                              Value* as = s.op("Where", {nz, c[0], s.const_scalar(DType::Int64, 1)});
                              Value* rem = s.op("Sub", {c[1], s.op("Mul", {s.op("Div", {c[1], as}), as})});
                              return {s.op("Where", {nz, rem, zero}), s.op("Where", {nz, c[0], c[1]})};
                            });
  return outs[1];
}

DType int_out(SymbolicContext& ctx) {
  DType t = ctx.out_dtype();
  if (t == DType::Undefined) t = helpers::result_type(ctx, {0, 1});
  if (!ir::is_integral(t)) ctx.fail("gcd/lcm take integer tensors");
  return t;
}

// aten::gcd(self, other): non-negative, gcd(0, 0) = 0.
void gcd(SymbolicContext& ctx) {
  const DType t = int_out(ctx);
  ctx.out(ctx.cast(gcd_i64(ctx, ctx.in_as(0, DType::Int64), ctx.in_as(1, DType::Int64)), t));
}

// aten::lcm(self, other) = |a / gcd(a, b) * b|, 0 when gcd is 0.
void lcm(SymbolicContext& ctx) {
  const DType t = int_out(ctx);
  Value* a = ctx.in_as(0, DType::Int64);
  Value* b = ctx.in_as(1, DType::Int64);
  Value* g = gcd_i64(ctx, a, b);
  Value* zero = ctx.const_scalar(DType::Int64, 0);
  Value* gz = helpers::equal(ctx, g, zero);
  Value* gs = ctx.op("Where", {gz, ctx.const_scalar(DType::Int64, 1), g});
  Value* r = ctx.op("Abs", {ctx.op("Mul", {ctx.op("Div", {a, gs}), b})});
  ctx.out(ctx.cast(ctx.op("Where", {gz, zero, r}), t));
}

}  // namespace

void register_special_erf(Registry& r) {
  for (const char* n : {"aten::erfc", "aten::special_erfc"}) r.add(n, 9, erfc);
  r.add("aten::special_erfcx", 9, erfcx);
  r.add("aten::special_log_ndtr", 9, log_ndtr);
  r.add("aten::special_ndtri", 9, ndtri);
  r.add("aten::erfinv", 9, erfinv);
  r.add("aten::nextafter", 9, nextafter);
  r.add("aten::frexp", 9, frexp);
  r.add("aten::ldexp", 9, ldexp);
  r.add("aten::gcd", 9, gcd);
  r.add("aten::lcm", 9, lcm);
  // (torch.special's aliases of other families' operators: convert::canonical_kind)
}

}  // namespace torch2onnx::symbolics
