// Orthogonal polynomials of torch.special (chebyshev_polynomial_t/u/v/w, their
// shifted forms, hermite_polynomial_h/he, laguerre_polynomial_l,
// legendre_polynomial_p), each with the branches of PyTorch's
// aten/src/ATen/native/Math.h: n < 0 gives 0, the endpoint shortcuts, the
// trigonometric forms Chebyshev uses inside (-1, 1) for larger n, and else
// the three-term recurrence in the same order of operations. n is data (one n
// per element, broadcast with x): an ONNX Loop (helpers::loop) runs the
// recurrence up to the largest n that needs it and every element keeps the
// value at its own n. Opset 9 (Where, Expand, Loop).
#include <functional>
#include <limits>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::Value;

// Elementwise arithmetic in one floating dtype `t`.
struct E {
  SymbolicContext& c;
  ir::DType t;
  Value* k(double v) { return c.const_scalar(t, v); }
  Value* add(Value* a, Value* b) { return c.op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) { return c.op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) { return c.op("Mul", {a, b}); }
  Value* div(Value* a, Value* b) { return c.op("Div", {a, b}); }
  Value* neg(Value* a) { return c.op("Neg", {a}); }
  Value* where(Value* cond, Value* a, Value* b) { return c.op("Where", {cond, a, b}); }
  Value* both(Value* a, Value* b) { return c.op("And", {a, b}); }
  Value* either(Value* a, Value* b) { return c.op("Or", {a, b}); }
  Value* lt(Value* a, double v) { return c.op("Less", {a, k(v)}); }
  Value* gt(Value* a, double v) { return c.op("Greater", {a, k(v)}); }
  Value* eq(Value* a, double v) { return helpers::equal(c, a, k(v)); }
  Value* ne(Value* a, double v) { return c.op("Not", {eq(a, v)}); }
  Value* sqrt(Value* a) { return c.op("Sqrt", {a}); }
  Value* sin(Value* a) { return c.op("Sin", {a}); }
  Value* cos(Value* a) { return c.op("Cos", {a}); }
  Value* polevl(Value* z, const std::vector<double>& cs) {
    Value* acc = k(cs[0]);
    for (size_t i = 1; i < cs.size(); ++i) acc = add(mul(acc, z), k(cs[i]));
    return acc;
  }
  // acos on (-1, 1) from Cephes' asin rational approximation on [-0.5, 0.5]
  // (acos x = 2 asin(sqrt((1-x)/2)) above 0.5, pi - 2 asin(sqrt((1+x)/2))
  // below -0.5, pi/2 - asin x between), in double (relative error ~2e-16):
  // ONNX Runtime has no double Acos, and its float Acos is off by up to 4 ulp
  // where PyTorch's scalar acosf is correctly rounded (the trigonometric
  // Chebyshev forms amplify that near the ends); float rounds the double result.
  Value* acos(Value* x_in) {
    E d{c, ir::DType::Double};
    return c.cast(d.acos_double(c.cast(x_in, ir::DType::Double)), t);
  }
  Value* acos_double(Value* x) {
    const double pio4 = 7.85398163397448309616E-1, morebits = 6.123233995736765886130E-17;
    Value* far = c.op("Greater", {c.op("Abs", {x}), k(0.5)});
    Value* a = where(far, sqrt(mul(k(0.5), sub(k(1.0), c.op("Abs", {x})))), x);
    Value* zz = mul(a, a);
    Value* s = add(mul(a, div(mul(zz, polevl(zz, {4.253011369004428248960E-3, -6.019598008014123785661E-1,
                                                   5.444622390564711410273E0, -1.626247967210700244449E1,
                                                   1.956261983317594739197E1, -8.198089802484824371615E0})),
                              polevl(zz, {1.0, -1.474091372988853791896E1, 7.049610280856842141659E1,
                                          -1.471791292232726029859E2, 1.395105614657485689735E2,
                                          -4.918853881490881290097E1}))),
                   a);
    Value* mid = add(add(sub(k(pio4), s), k(morebits)), k(pio4));
    Value* twice = add(s, s);
    return where(lt(x, -0.5), sub(k(4 * pio4), twice), where(gt(x, 0.5), twice, mid));
  }
};

// The arguments as PyTorch's kernels see them: x and n in the result dtype,
// then n truncated to int64 (static_cast; NaN, inf and out-of-range n, which
// x86 turns into INT64_MIN, become -1: every negative n gives 0).
struct Poly {
  E e;
  Value* x;
  Value* ni;    // int64 n
  Value* nf;    // ni in the compute dtype
  Value* even;  // ni % 2 == 0
  Value* shape;

  Value* n_eq(int64_t v) { return helpers::equal(e.c, ni, e.c.const_int(v)); }
  Value* n_gt(int64_t v) { return e.c.op("Greater", {ni, e.c.const_int(v)}); }
  Value* n_lt(int64_t v) { return e.c.op("Less", {ni, e.c.const_int(v)}); }
  Value* full(Value* v) { return e.c.op("Expand", {v, shape}); }
  Value* two_n_plus_1() { return e.add(e.add(nf, nf), e.k(1.0)); }
};

Poly bind(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  if (t != ir::DType::Float && t != ir::DType::Double)
    ctx.fail("PyTorch computes this polynomial in float32 or float64 only");
  E e{ctx, t};
  Value* x = ctx.in_as(0, t);
  Value* n = ctx.in_as(1, t);
  Value* valid = ctx.op("Less", {ctx.op("Abs", {n}), e.k(9.2e18)});
  Value* ni = ctx.cast(e.where(valid, n, e.k(-1.0)), ir::DType::Int64);
  Value* half = ctx.op("Div", {ni, ctx.const_int(2)});
  Value* even = helpers::equal(ctx, ctx.op("Sub", {ni, ctx.op("Mul", {half, ctx.const_int(2)})}), ctx.const_int(0));
  Value* shape = ctx.op("Shape", {ctx.op("Add", {x, ctx.cast(ni, t)})});
  return Poly{e, x, ni, ctx.cast(ni, t), even, shape};
}

// The recurrence value P_n at each element's n >= 2, from (P_0, P_1) = (1,
// q0): iteration i computes P_{i+2} = step(k, P_i, P_{i+1}) with k = k0 + i *
// kstep, and runs to the largest n among `active` elements (0 iterations when
// none is). Elements of other n get 0 (their value comes from another branch).
using Step = std::function<Value*(E& b, Value* k, Value* p, Value* q)>;
Value* recurrence(Poly& P, Value* q0, Value* active, double k0, double kstep, const Step& step) {
  SymbolicContext& ctx = P.e.c;
  const ir::DType t = P.e.t;
  Value* n_used = helpers::reshape(ctx, P.e.where(active, P.ni, ctx.const_int(1)), {-1});
  Value* top = helpers::reduce(ctx, "ReduceMax", ctx.op("Concat", {n_used, ctx.const_ints({1})}, {{"axis", int64_t{0}}}),
                               {0}, false);
  Value* trips = ctx.op("Sub", {top, ctx.const_int(1)});
  Value* ni = P.ni;
  auto outs = helpers::loop(
      ctx, trips, {P.full(P.e.k(1.0)), P.full(q0), P.full(P.e.k(0.0))},
      [&](SymbolicContext& b, Value* iter, const std::vector<Value*>& c) -> std::vector<Value*> {
        E eb{b, t};
        Value* k = eb.add(eb.mul(b.cast(iter, t), eb.k(kstep)), eb.k(k0));
        Value* r = step(eb, k, c[0], c[1]);
        Value* here = helpers::equal(b, ni, b.op("Add", {iter, b.const_int(2)}));
        return {c[1], r, eb.where(here, r, c[2])};
      });
  return outs[2];
}

// Chebyshev polynomials of the four kinds and their shifted forms: u = x, or
// x + x - 1 for the shifted ones (which test the endpoints on x: 1 and 0).
enum class Kind { T, U, V, W };

void chebyshev(SymbolicContext& ctx, Kind kind, bool shifted) {
  Poly P = bind(ctx);
  E& e = P.e;
  Value* x = P.x;
  Value* u = shifted ? e.sub(e.add(x, x), e.k(1.0)) : x;
  Value* uu = e.add(u, u);
  Value* n1 = e.add(P.nf, e.k(1.0));
  Value* tn1 = P.two_n_plus_1();
  // the values at the +1 and -1 ends of u
  Value* at_plus = kind == Kind::T || kind == Kind::V ? e.k(1.0) : kind == Kind::U ? n1 : tn1;
  Value* at_minus = kind == Kind::T || kind == Kind::W ? e.where(P.even, e.k(1.0), e.k(-1.0))
                    : kind == Kind::U                ? e.where(P.even, n1, e.neg(n1))
                                                     : e.where(P.even, tn1, e.neg(tn1));
  Value* plus_end = e.eq(x, 1.0);
  Value* minus_end = shifted ? e.eq(x, 0.0) : e.eq(x, -1.0);
  const int64_t threshold = shifted ? (kind == Kind::W ? 4 : 6) : (kind == Kind::T ? 6 : 8);
  Value* trig_cond = e.both(P.n_gt(threshold), e.lt(e.c.op("Abs", {u}), 1.0));
  Value* th = e.acos(u);
  Value* trig;
  Value* nh = e.add(P.nf, e.k(0.5));
  switch (kind) {
    case Kind::T: trig = e.cos(e.mul(P.nf, th)); break;
    case Kind::U: {
      Value* s = e.sin(th);
      trig = e.where(e.ne(s, 0.0), e.div(e.sin(e.mul(n1, th)), s), e.div(e.mul(n1, e.cos(e.mul(n1, th))), u));
      break;
    }
    case Kind::V: {
      Value* h = e.div(th, e.k(2.0));
      trig = e.where(e.ne(e.sin(h), 1.0), e.div(e.cos(e.mul(nh, th)), e.cos(h)), at_minus);
      break;
    }
    case Kind::W: {
      Value* h = e.div(th, e.k(2.0));
      // (shifted: PyTorch returns the -1 end's value whatever the sign)
      Value* fallback = shifted ? at_minus : e.where(e.gt(x, 0.0), at_plus, at_minus);
      trig = e.where(e.ne(e.cos(h), 1.0), e.div(e.sin(e.mul(nh, th)), e.sin(h)), fallback);
      break;
    }
  }
  Value* q0 = kind == Kind::T ? u : kind == Kind::U ? uu : kind == Kind::V ? e.sub(uu, e.k(1.0)) : e.add(uu, e.k(1.0));
  Value* ends = e.either(plus_end, minus_end);
  Value* active = e.both(P.n_gt(1), e.c.op("Not", {e.either(ends, trig_cond)}));
  Value* r = recurrence(P, q0, active, 2.0, 1.0,
                        [&](E& b, Value*, Value* p, Value* q) { return b.sub(b.mul(uu, q), p); });
  r = e.where(P.n_eq(1), P.full(q0), r);
  r = e.where(P.n_eq(0), e.k(1.0), r);
  r = e.where(trig_cond, trig, r);
  r = e.where(minus_end, at_minus, r);
  r = e.where(plus_end, at_plus, r);
  ctx.out(e.where(P.n_lt(0), e.k(0.0), r));
}

// hermite_polynomial_h (physicists': H_{k+1} = 2x H_k - 2k H_{k-1}) and _he
// (probabilists': He_{k+1} = x He_k - k He_{k-1}); PyTorch gives NaN above n =
// 128 (float) / 512 (double).
void hermite(SymbolicContext& ctx, bool physicists) {
  Poly P = bind(ctx);
  E& e = P.e;
  Value* x = P.x;
  const int64_t limit = e.t == ir::DType::Float ? 128 : 512;
  Value* xx = e.add(x, x);
  Value* q0 = physicists ? xx : x;
  Value* active = e.both(P.n_gt(1), e.c.op("Not", {P.n_gt(limit)}));
  Value* r = recurrence(P, q0, active, physicists ? 2.0 : 1.0, physicists ? 2.0 : 1.0,
                        [&](E& b, Value* k, Value* p, Value* q) {
                          return b.sub(b.mul(physicists ? xx : x, q), b.mul(k, p));
                        });
  r = e.where(P.n_gt(limit), e.k(std::numeric_limits<double>::quiet_NaN()), r);
  r = e.where(P.n_eq(1), P.full(q0), r);
  r = e.where(P.n_eq(0), e.k(1.0), r);
  ctx.out(e.where(P.n_lt(0), e.k(0.0), r));
}

// laguerre_polynomial_l: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}; 1 at x = 0.
void laguerre(SymbolicContext& ctx) {
  Poly P = bind(ctx);
  E& e = P.e;
  Value* x = P.x;
  Value* q0 = e.sub(e.k(1.0), x);
  Value* at_zero = e.eq(x, 0.0);
  Value* active = e.both(P.n_gt(1), e.c.op("Not", {at_zero}));
  Value* r = recurrence(P, q0, active, 1.0, 1.0, [&](E& b, Value* k, Value* p, Value* q) {
    return b.div(b.sub(b.mul(b.add(b.add(k, k), q0), q), b.mul(k, p)), b.add(k, b.k(1.0)));
  });
  r = e.where(P.n_eq(1), P.full(q0), r);
  r = e.where(P.n_eq(0), e.k(1.0), r);
  r = e.where(at_zero, e.k(1.0), r);
  ctx.out(e.where(P.n_lt(0), e.k(0.0), r));
}

// legendre_polynomial_p: (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}; +-1 at x = +-1.
void legendre(SymbolicContext& ctx) {
  Poly P = bind(ctx);
  E& e = P.e;
  Value* x = P.x;
  Value* plus_end = e.eq(x, 1.0);
  Value* minus_end = e.eq(x, -1.0);
  Value* active = e.both(P.n_gt(1), e.c.op("Not", {e.either(plus_end, minus_end)}));
  Value* r = recurrence(P, x, active, 1.0, 1.0, [&](E& b, Value* k, Value* p, Value* q) {
    Value* a = b.mul(b.mul(b.add(b.add(k, k), b.k(1.0)), x), q);
    return b.div(b.sub(a, b.mul(k, p)), b.add(k, b.k(1.0)));
  });
  r = e.where(P.n_eq(1), P.full(x), r);
  r = e.where(P.n_eq(0), e.k(1.0), r);
  r = e.where(minus_end, e.where(P.even, e.k(1.0), e.k(-1.0)), r);
  r = e.where(plus_end, e.k(1.0), r);
  ctx.out(e.where(P.n_lt(0), e.k(0.0), r));
}

template <Kind K, bool Shifted>
void cheb(SymbolicContext& ctx) {
  chebyshev(ctx, K, Shifted);
}
void hermite_h(SymbolicContext& ctx) { hermite(ctx, true); }
void hermite_he(SymbolicContext& ctx) { hermite(ctx, false); }

}  // namespace

void register_polynomials(Registry& r) {
  r.add("aten::special_chebyshev_polynomial_t", 9, cheb<Kind::T, false>);
  r.add("aten::special_chebyshev_polynomial_u", 9, cheb<Kind::U, false>);
  r.add("aten::special_chebyshev_polynomial_v", 9, cheb<Kind::V, false>);
  r.add("aten::special_chebyshev_polynomial_w", 9, cheb<Kind::W, false>);
  r.add("aten::special_shifted_chebyshev_polynomial_t", 9, cheb<Kind::T, true>);
  r.add("aten::special_shifted_chebyshev_polynomial_u", 9, cheb<Kind::U, true>);
  r.add("aten::special_shifted_chebyshev_polynomial_v", 9, cheb<Kind::V, true>);
  r.add("aten::special_shifted_chebyshev_polynomial_w", 9, cheb<Kind::W, true>);
  r.add("aten::special_hermite_polynomial_h", 9, hermite_h);
  r.add("aten::special_hermite_polynomial_he", 9, hermite_he);
  r.add("aten::special_laguerre_polynomial_l", 9, laguerre);
  r.add("aten::special_legendre_polynomial_p", 9, legendre);
}

}  // namespace torch2onnx::symbolics
