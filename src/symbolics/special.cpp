// torch.special's gamma family: lgamma, digamma, polygamma, mvlgamma,
// Hurwitz zeta and the regularized incomplete gamma functions (the
// error-function family, floating-point bits, gcd/lcm and the torch.special
// aliases are in special_erf.cpp).
//
// Every floating function is evaluated in double (then cast to PyTorch's
// result dtype), so float32 results are correctly rounded or nearly so over
// the whole domain. Ranges are selected with Where; each branch is evaluated
// on arguments clamped into its own range so nothing non-finite reaches a
// Gather index or an arithmetic combination of branches.
#include <cmath>
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

// ------------------------------------------------------------------ gamma family

// lgamma for x >= 1/2 (or NaN/inf): shift x up to >= 10 accumulating the
// product of the shifts, then Stirling's series (8 terms, error < 2e-18 there).
Value* lgamma_pos(E& e, Value* x) {
  Value* u = x;
  Value* p = e.k(1.0);
  for (int i = 0; i < 10; ++i) {
    Value* m = e.lt(u, 10.0);
    p = e.where(m, e.mul(p, u), p);
    u = e.where(m, e.add(u, 1.0), u);
  }
  Value* z = e.div(e.k(1.0), u);
  Value* z2 = e.mul(z, z);
  Value* series = e.mul(z, e.poly(z2, {-3617.0 / 122400.0, 1.0 / 156.0, -691.0 / 360360.0, 1.0 / 1188.0,
                                       -1.0 / 1680.0, 1.0 / 1260.0, -1.0 / 360.0, 1.0 / 12.0}));
  Value* st = e.add(e.sub(e.mul(e.add(u, -0.5), e.f("Log", u)), u), e.k(0.5 * std::log(2 * kPi)));
  return e.sub(e.add(st, series), e.f("Log", p));
}

// lgamma(1 + a) for |a| <= 1/5: -gamma a + sum_k (-1)^k zeta(k) a^k / k.
Value* lgamma1p_small(E& e, Value* a) {
  std::vector<double> coef;  // highest power first, for poly(); then times a
  for (int k = 26; k >= 2; --k) {
    double z = 0;  // zeta(k): 1000 terms and the Euler-Maclaurin tail
    const double n = 1000;
    for (int i = 999; i >= 1; --i) z += std::pow(double(i), -k);
    z += std::pow(n, 1.0 - k) / (k - 1) + 0.5 * std::pow(n, -double(k)) + k * std::pow(n, -k - 1.0) / 12;
    coef.push_back((k % 2 ? -1.0 : 1.0) * z / k);
  }
  coef.push_back(-0.57721566490153286061);  // Euler's gamma
  return e.mul(e.poly(a, coef), a);
}

// lgamma(x) = log|Gamma(x)|: reflection log(pi / |sin(pi x)|) - lgamma(1 - x)
// below 1/2; +inf at the poles (non-positive integers) and at +-inf.
Value* lgamma_w(E& e, Value* x) {
  Value* low = e.lt(x, 0.5);
  Value* lp = lgamma_pos(e, e.where(low, e.sub(e.k(1.0), x), x));
  Value* s = e.f("Abs", e.f("Sin", e.mul(e.frac_round(x), kPi)));
  Value* refl = e.sub(e.sub(e.k(std::log(kPi)), e.f("Log", s)), lp);
  // within 1/5 of the zeros at 1 and 2: lgamma(1 + b) and log1p(b) + lgamma(1 + b)
  // from the series, relative-accurate where the shifted Stirling form cancels
  Value* b1 = e.sub(x, e.k(1.0));
  Value* b2 = e.sub(x, e.k(2.0));
  Value* n1 = e.lt(e.f("Abs", b1), 0.2);
  Value* n2 = e.lt(e.f("Abs", b2), 0.2);
  Value* bs = e.where(n1, b1, e.where(n2, b2, e.k(0.0)));
  Value* g1 = lgamma1p_small(e, bs);
  Value* r = e.where(n1, g1, e.where(n2, e.add(e.log1p(bs), g1), e.where(low, refl, lp)));
  return e.where(e.isinf(x), e.k(kInf), r);
}

// digamma: reflection psi(1 - x) - pi / tan(pi x) for x < 0, recurrence up to
// x >= 10, then the asymptotic series (Cephes psi, as PyTorch's calc_digamma).
// -+inf at +-0, NaN at negative integers.
Value* digamma_w(E& e, Value* x) {
  Value* neg = e.lt(x, 0.0);
  Value* u = e.where(neg, e.sub(e.k(1.0), x), x);
  Value* acc = e.k(0.0);
  for (int i = 0; i < 10; ++i) {
    Value* m = e.lt(u, 10.0);
    acc = e.where(m, e.sub(acc, e.f("Reciprocal", u)), acc);
    u = e.where(m, e.add(u, 1.0), u);
  }
  Value* z = e.f("Reciprocal", e.mul(u, u));
  Value* y = e.mul(z, e.poly(z, {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                                 -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                 8.33333333333333333333E-2}));
  Value* pos = e.add(acc, e.sub(e.sub(e.f("Log", u), e.div(e.k(0.5), u)), y));
  Value* pr = e.mul(e.frac_round(x), kPi);
  Value* cot = e.div(e.f("Cos", pr), e.f("Sin", pr));
  Value* r = e.where(neg, e.sub(pos, e.mul(cot, kPi)), pos);
  r = e.where(e.and_(neg, e.is_int(x)), e.k(kNaN), r);
  return e.where(e.eq(x, 0.0), e.f("Neg", e.f("Reciprocal", x)), r);
}

// Hurwitz zeta(s, q) for q > 0: ten terms summed directly, then the
// Euler-Maclaurin tail at w = q + 9 with 12 Bernoulli terms (Cephes zeta, as
// PyTorch's; the terms are formed as running products so none overflows).
Value* zeta_pos(E& e, Value* s, Value* q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                             7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                             -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  Value* ns = e.f("Neg", s);
  Value* sum = e.c.op("Pow", {q, ns});
  for (int k = 1; k <= 9; ++k) sum = e.add(sum, e.c.op("Pow", {e.add(q, double(k)), ns}));
  Value* w = e.add(q, 9.0);
  Value* b = e.c.op("Pow", {w, ns});
  sum = e.add(sum, e.sub(e.div(e.mul(b, w), e.add(s, -1.0)), e.mul(b, 0.5)));
  Value* cterm = e.div(e.mul(s, b), w);
  sum = e.add(sum, e.mul(cterm, 1.0 / A[0]));
  for (int i = 1; i < 12; ++i) {
    cterm = e.mul(cterm, e.mul(e.div(e.add(s, 2.0 * i - 1), w), e.div(e.add(s, 2.0 * i), w)));
    sum = e.add(sum, e.mul(cterm, 1.0 / A[i]));
  }
  return sum;
}

// zeta(s, q) on the whole domain. For q <= 0 (defined for integer s only),
// with f = q - floor(q) in (0, 1): the finite sum over q, ..., f - 1 is
// (-1)^s (zeta(s, 1 - f) - zeta(s, 1 - q)), so
// zeta(s, q) = zeta(s, f) + (-1)^s (zeta(s, 1 - f) - zeta(s, 1 - q)).
Value* zeta_w(E& e, Value* s, Value* q) {
  Value* qpos = e.gt(q, 0.0);
  Value* f = e.sub(q, e.f("Floor", q));
  Value* fs = e.where(e.eq(f, 0.0), e.k(0.5), f);  // (q a pole: result replaced below)
  Value* one = e.k(1.0);
  Value* z1 = zeta_pos(e, s, e.where(qpos, q, fs));
  Value* z2 = zeta_pos(e, s, e.where(qpos, one, e.sub(one, fs)));
  Value* z3 = zeta_pos(e, s, e.where(qpos, one, e.sub(one, q)));
  Value* half = e.mul(s, 0.5);
  Value* sign = e.sub(one, e.mul(e.sub(s, e.mul(e.f("Floor", half), 2.0)), 2.0));  // (-1)^s
  Value* r = e.where(qpos, z1, e.add(z1, e.mul(sign, e.sub(z2, z3))));
  Value* qneg = e.not_(qpos);
  r = e.where(e.and_(qneg, e.not_(e.is_int(s))), e.k(kNaN), r);
  r = e.where(e.and_(qneg, e.is_int(q)), e.k(kInf), r);
  r = e.where(e.lt(s, 1.0), e.k(kNaN), r);
  r = e.where(e.eq(s, 1.0), e.k(kInf), r);
  return e.where(e.or_(e.isnan(s), e.isnan(q)), e.k(kNaN), r);
}

// aten::lgamma(self), aten::special_gammaln(self)
void lgamma(SymbolicContext& ctx) { unary_w(ctx, lgamma_w); }
// aten::digamma(self), aten::special_digamma(self), aten::special_psi(self)
void digamma(SymbolicContext& ctx) { unary_w(ctx, digamma_w); }

// aten::special_zeta(self, other) (tensor or number operands): Hurwitz zeta(x, q).
void zeta(SymbolicContext& ctx) {
  E e{ctx};
  ctx.out(ctx.cast(zeta_w(e, ctx.in_as(0, W), ctx.in_as(1, W)), float_out(ctx)));
}

// aten::polygamma(n, self), aten::special_polygamma(n, self): digamma for n = 0,
// else (-1)^(n+1) n! zeta(n + 1, x).
void polygamma(SymbolicContext& ctx) {
  const int64_t n = ctx.i(0);
  if (n < 0) ctx.fail("polygamma(n, x) is defined for n >= 0, got n = " + std::to_string(n));
  E e{ctx};
  Value* x = ctx.in_as(1, W);
  Value* r;
  if (n == 0) {
    r = digamma_w(e, x);
  } else {
    const double fact = std::exp(std::lgamma(double(n) + 1.0));  // as PyTorch's exp(lgamma(n + 1))
    r = e.mul(zeta_w(e, e.k(double(n + 1)), x), (n % 2 ? 1.0 : -1.0) * fact);
  }
  ctx.out(ctx.cast(r, float_out(ctx)));
}

// aten::mvlgamma(self, p), aten::special_multigammaln(self, p):
// p (p - 1) / 4 log(pi) + sum_j lgamma(x - j / 2), j < p, one lgamma over a new last axis.
void mvlgamma(SymbolicContext& ctx) {
  const int64_t p = ctx.i(1);
  if (p < 1) ctx.fail("mvlgamma needs p >= 1, got p = " + std::to_string(p));
  E e{ctx};
  const int64_t r = ctx.rank(0);
  Value* x = helpers::unsqueeze(ctx, ctx.in_as(0, W), {r});
  std::vector<double> offs;
  for (int64_t j = 0; j < p; ++j) offs.push_back(0.5 * double(j));
  Value* shifted = e.sub(x, ctx.constant(ir::Tensor::from_doubles(W, offs, {p})));
  Value* sum = helpers::reduce(ctx, "ReduceSum", lgamma_w(e, shifted), {r}, false);
  sum = e.add(sum, double(p) * double(p - 1) / 4.0 * std::log(kPi));
  ctx.out(ctx.cast(sum, float_out(ctx)));
}

// ------------------------------------------------------------------ incomplete gamma

// The regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x)
// (igammac). With the prefactor x^a e^-x / Gamma(a) (from logarithms): the
// series sum x^n / (a (a+1) ... (a+n)) gives P below x = a + 1, Legendre's
// continued fraction (modified Lentz) gives Q above; the other is 1 minus it.
// Both run in one Loop over the broadcast elements, each on arguments kept
// inside its own range. The trip count, 50 + 10 sqrt(max a), covers the
// slowest convergence (both need O(sqrt a) steps near x = a); it is capped
// at 20000 steps, and elements with a > kMaxA (beyond what the cap converges)
// are NaN. For a < 1/5 and x < a + 1, where Q is small and 1 - P would lose
// it, Q comes from Q = -expm1(u) - a e^u sum_{n>=1} (-x)^n / (n! (a + n)),
// u = a log x - lgamma(1 + a) (DLMF 8.7.3; lgamma(1 + a) from its Taylor
// series in zeta values). Edge values as PyTorch (calc_igamma / calc_igammac).
constexpr double kMaxA = 3.9e6;

// expm1(u) (Kahan: the rounding of exp(u) is compensated).
Value* expm1_w(E& e, Value* u) {
  Value* w = e.f("Exp", u);
  Value* d = e.sub(w, e.k(1.0));
  Value* lw = e.f("Log", w);
  Value* keep = e.or_(e.eq(d, 0.0), e.gt(e.f("Abs", u), 0.5));
  Value* safe_lw = e.where(e.eq(lw, 0.0), e.k(1.0), lw);
  return e.where(e.eq(d, 0.0), u, e.where(keep, d, e.div(e.mul(d, u), safe_lw)));
}

std::pair<Value*, Value*> igamma_pq(E& e, Value* a, Value* x) {
  SymbolicContext& ctx = e.c;
  Value* shape = ctx.op("Shape", {e.add(a, x)});
  a = ctx.op("Expand", {a, shape});
  x = ctx.op("Expand", {x, shape});
  auto ok = [&](Value* v) { return e.and_(e.gt(v, 0.0), e.lt(v, kInf)); };
  Value* good = e.and_(ok(a), ok(x));
  Value* as = e.where(good, a, e.k(1.0));
  Value* xs = e.where(good, x, e.k(1.0));
  Value* cf = e.gt(xs, e.add(as, 1.0));
  Value* lpre = e.sub(e.sub(e.mul(as, e.f("Log", xs)), xs), lgamma_w(e, as));
  Value* qs = e.and_(e.lt(as, 0.2), e.not_(cf));  // Q's own series
  Value* qa = e.where(qs, as, e.k(0.1));
  Value* qx = e.where(qs, xs, e.k(0.5));
  // series on (sa, sx) with sx < sa + 1; fraction on (ca, cx) with cx > ca + 1
  Value* sa = e.where(cf, e.k(1.0), as);
  Value* sx = e.where(cf, e.k(1.0), xs);
  Value* ca = e.where(cf, as, e.k(1.0));
  Value* cx = e.where(cf, xs, e.k(3.0));
  const double tiny = 1e-300;
  Value* d0 = e.f("Reciprocal", e.sub(e.add(cx, 1.0), ca));
  Value* sum0 = e.f("Reciprocal", sa);
  Value* zero = e.mul(as, 0.0);
  Value* flat = ctx.op("Concat", {helpers::reshape(ctx, as, {-1}), ctx.constant(ir::Tensor::from_doubles(W, {1.0}, {1}))},
                       {{"axis", int64_t{0}}});  // (never empty)
  Value* amax = e.min(helpers::reduce(ctx, "ReduceMax", flat, {}, false), kMaxA);
  Value* trips = ctx.cast(e.f("Ceil", e.add(e.mul(e.f("Sqrt", amax), 10.0), 50.0)), DType::Int64);
  auto outs = helpers::loop(
      ctx, trips, {sum0, sum0, sa, d0, e.add(zero, 1.0 / tiny), d0, e.add(zero, 1.0), zero},
      [&](SymbolicContext& b, Value* it, const std::vector<Value*>& c) -> std::vector<Value*> {
        E l{b};
        // series: term *= x / (a + n), sum += term
        Value* ap = l.add(c[2], 1.0);
        Value* term = l.mul(c[1], l.div(sx, ap));
        Value* sum = l.add(c[0], term);
        // Lentz: a_i = -i (i - a), b_i = x + 1 - a + 2 i
        Value* i = l.add(b.cast(it, W), 1.0);
        Value* an = l.mul(l.f("Neg", i), l.sub(i, ca));
        Value* bn = l.add(l.sub(l.add(cx, 1.0), ca), l.mul(i, 2.0));
        auto clamp_tiny = [&](Value* v) { return l.where(l.lt(l.f("Abs", v), tiny), l.k(tiny), v); };
        Value* d = l.f("Reciprocal", clamp_tiny(l.add(l.mul(an, c[3]), bn)));
        Value* cc = clamp_tiny(l.add(bn, l.div(an, c[4])));
        Value* h = l.mul(c[5], l.mul(d, cc));
        // Q's series: t *= -x / n, s += t / (a + n), n = i
        Value* qt = l.mul(c[6], l.div(l.f("Neg", qx), i));
        Value* qsum = l.add(c[7], l.div(qt, l.add(qa, i)));
        return {sum, term, ap, d, cc, h, qt, qsum};
      });
  Value* pre = e.f("Exp", lpre);
  Value* p_ser = e.mul(outs[0], pre);
  Value* q_cf = e.mul(outs[5], pre);
  Value* one = e.k(1.0);
  Value* p = e.where(cf, e.sub(one, q_cf), p_ser);
  Value* u = e.sub(e.mul(qa, e.f("Log", qx)), lgamma1p_small(e, qa));
  Value* q_ser = e.sub(e.f("Neg", expm1_w(e, u)), e.mul(e.mul(qa, e.f("Exp", u)), outs[7]));
  Value* q = e.where(cf, q_cf, e.where(qs, q_ser, e.sub(one, p_ser)));
  // edge values, lowest priority first
  Value* nan = e.k(kNaN);
  Value* xinf = e.eq(x, kInf);
  Value* ainf = e.eq(a, kInf);
  p = e.where(xinf, one, p);
  q = e.where(xinf, e.k(0.0), q);
  p = e.where(ainf, e.where(xinf, nan, e.k(0.0)), p);
  q = e.where(ainf, e.where(xinf, nan, one), q);
  Value* x0 = e.eq(x, 0.0);
  p = e.where(x0, e.k(0.0), p);
  q = e.where(x0, one, q);
  Value* a0 = e.eq(a, 0.0);
  p = e.where(a0, e.where(e.gt(x, 0.0), one, nan), p);
  q = e.where(a0, e.where(e.gt(x, 0.0), e.k(0.0), nan), q);
  Value* bad = e.or_(e.or_(e.lt(x, 0.0), e.lt(a, 0.0)), e.or_(e.isnan(x), e.isnan(a)));
  bad = e.or_(bad, e.and_(e.gt(a, kMaxA), e.lt(a, kInf)));
  return {e.where(bad, nan, p), e.where(bad, nan, q)};
}

// aten::igamma(self, other), aten::special_gammainc: P(a, x)
void igamma(SymbolicContext& ctx) {
  E e{ctx};
  ctx.out(ctx.cast(igamma_pq(e, ctx.in_as(0, W), ctx.in_as(1, W)).first, float_out(ctx)));
}
// aten::igammac(self, other), aten::special_gammaincc: Q(a, x)
void igammac(SymbolicContext& ctx) {
  E e{ctx};
  ctx.out(ctx.cast(igamma_pq(e, ctx.in_as(0, W), ctx.in_as(1, W)).second, float_out(ctx)));
}

}  // namespace

void register_special(Registry& r) {
  for (const char* n : {"aten::lgamma", "aten::special_gammaln"}) r.add(n, 9, lgamma);
  for (const char* n : {"aten::digamma", "aten::special_digamma", "aten::special_psi"}) r.add(n, 9, digamma);
  for (const char* n : {"aten::polygamma", "aten::special_polygamma"}) r.add(n, 9, polygamma);
  for (const char* n : {"aten::mvlgamma", "aten::special_multigammaln"}) r.add(n, 9, mvlgamma);
  r.add("aten::special_zeta", 9, zeta);
  for (const char* n : {"aten::igamma", "aten::special_gammainc"}) r.add(n, 9, igamma);
  for (const char* n : {"aten::igammac", "aten::special_gammaincc"}) r.add(n, 9, igammac);
}

}  // namespace torch2onnx::symbolics
