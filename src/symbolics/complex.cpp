// Complex tensors. ONNX has no complex arithmetic, so a complex tensor of
// shape S travels as a real tensor of shape S + [2] holding (real, imag),
// ONNX DFT's layout; complex64 is float pairs, complex128 double pairs. The
// dispatcher (convert::resolve) runs the declarations of Registry::add_complex
// for nodes with a complex tensor argument or output. Here: view_as_real /
// view_as_complex / complex / polar, real / imag / abs / angle / sgn, conj and
// its views, elementwise arithmetic, matmul, sums and means, exp, reciprocal
// (the shape and movement ops on complex tensors are in complex_shape.cpp),
// and the pair helpers of complex_pairs.h.
#include <cmath>
#include <cstring>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/complex_pairs.h"

namespace torch2onnx::symbolics {
namespace cplx {

bool is_complex(ir::DType t) { return t == ir::DType::Complex64 || t == ir::DType::Complex128; }

ir::DType real_of(ir::DType t) {
  if (t == ir::DType::Complex64) return ir::DType::Float;
  if (t == ir::DType::Complex128) return ir::DType::Double;
  if (t == ir::DType::Double || t == ir::DType::Float || t == ir::DType::Float16 || t == ir::DType::BFloat16) return t;
  return ir::DType::Float;
}

ir::DType out_real(SymbolicContext& ctx, size_t k) { return real_of(ctx.out_dtype(k)); }

ir::DType rt_of(SymbolicContext& ctx) {
  for (size_t k = 0; k < ctx.num_outputs(); ++k)
    if (is_complex(ctx.out_dtype(k))) return real_of(ctx.out_dtype(k));
  for (size_t i = 0; i < ctx.num_args(); ++i)
    if (is_complex(ctx.dtype(i))) return real_of(ctx.dtype(i));
  return ir::DType::Float;
}

// The (real, imag) pair tensor of a complex constant: complex64/128 bytes
// are interleaved float/double pairs, exactly the pair layout.
static ir::Value* pair_constant(SymbolicContext& ctx, const ir::Tensor& t, ir::DType rt) {
  const ir::DType own = real_of(t.dtype());
  std::vector<int64_t> dims = t.dims();
  dims.push_back(2);
  std::vector<uint8_t> bytes(t.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), t.data(), bytes.size());
  ir::Tensor pairs = ir::Tensor::owned(own, dims, std::move(bytes));
  return ctx.constant(own == rt ? std::move(pairs) : pairs.converted(rt));
}

ir::Value* pair_in(SymbolicContext& ctx, size_t i, ir::DType rt) {
  const Arg& a = ctx.arg(i);
  if (!is_complex(a.dtype)) ctx.fail("argument " + std::to_string(i) + " is not a complex tensor");
  if (a.kind == Arg::Kind::Tensor && a.tensor && is_complex(a.tensor->dtype()))
    return pair_constant(ctx, *a.tensor, rt);
  ir::Value* v = ctx.in(i);
  if (is_complex(v->dtype())) {
    if (const ir::Tensor* t = v->constant()) return pair_constant(ctx, *t, rt);
    ctx.fail("a complex tensor that is not computed by the model (a graph input) cannot be exported: the "
             "model's inputs and outputs must be real (pass torch.view_as_real(x) and call "
             "torch.view_as_complex inside the model)");
  }
  return ctx.cast(v, rt);
}

ir::Value* part(SymbolicContext& ctx, ir::Value* pair, int64_t k, int64_t rank) {
  return ctx.op("Gather", {pair, ctx.const_int(k)}, {{"axis", rank}});
}

Cx split(SymbolicContext& ctx, ir::Value* pair, int64_t rank) {
  return {part(ctx, pair, 0, rank), part(ctx, pair, 1, rank)};
}

Cx parts(SymbolicContext& ctx, size_t i, ir::DType rt) {
  const Arg& a = ctx.arg(i);
  if (is_complex(a.dtype)) return split(ctx, pair_in(ctx, i, rt), ctx.rank(i));
  if (a.kind != Arg::Kind::Tensor && !a.is_scalar())
    ctx.fail("argument " + std::to_string(i) + " (" + a.type_str + ") is neither a tensor nor a real number");
  return {ctx.in_as(i, rt), nullptr};
}

ir::Value* zeros_like(SymbolicContext& ctx, ir::Value* v, ir::DType rt) {
  return ctx.op("ConstantOfShape", {ctx.op("Shape", {v})}, {{"value", ir::Tensor::from_doubles(rt, {0.0}, {1})}});
}

ir::Value* join(SymbolicContext& ctx, ir::Value* re, ir::Value* im, ir::DType rt, int64_t rank) {
  if (!im) im = zeros_like(ctx, re, rt);
  // (re and im may broadcast against each other: Expand broadcasts both ways)
  ir::Value* re_b = ctx.op("Expand", {re, ctx.op("Shape", {im})});
  ir::Value* im_b = ctx.op("Expand", {im, ctx.op("Shape", {re_b})});
  return ctx.op("Concat", {helpers::unsqueeze(ctx, re_b, {rank}), helpers::unsqueeze(ctx, im_b, {rank})},
                {{"axis", rank}});
}

ir::Value* conj(SymbolicContext& ctx, ir::Value* pair, ir::DType rt) {
  return ctx.op("Mul", {pair, ctx.constant(ir::Tensor::from_doubles(rt, {1.0, -1.0}, {2}))});
}

}  // namespace cplx

namespace {
using cplx::Cx;
using cplx::join;
using cplx::out_real;
using cplx::pair_in;
using cplx::parts;
using cplx::rt_of;

ir::Value* sc(SymbolicContext& ctx, ir::DType t, double v) { return ctx.const_scalar(t, v); }

// The rank of the (complex) result.
int64_t out_rank(SymbolicContext& ctx) {
  if (!ctx.out_info(0).has_sizes) ctx.fail("the result's rank is unknown");
  return ctx.out_info(0).rank();
}
ir::Value* add(SymbolicContext& ctx, ir::Value* a, ir::Value* b) { return ctx.op("Add", {a, b}); }
ir::Value* sub(SymbolicContext& ctx, ir::Value* a, ir::Value* b) { return ctx.op("Sub", {a, b}); }
ir::Value* mul(SymbolicContext& ctx, ir::Value* a, ir::Value* b) { return ctx.op("Mul", {a, b}); }
ir::Value* div(SymbolicContext& ctx, ir::Value* a, ir::Value* b) { return ctx.op("Div", {a, b}); }

// aten::view_as_real(x): the pair tensor is already x's real view.
void view_as_real(SymbolicContext& ctx) { ctx.out(pair_in(ctx, 0, out_real(ctx, 0))); }

// aten::view_as_complex(x [..., 2]): the same tensor read as pairs.
void view_as_complex(SymbolicContext& ctx) {
  if (ctx.arg(0).has_sizes && (ctx.sizes(0).empty() || ctx.sizes(0).back() != 2))
    ctx.fail("view_as_complex needs a last dimension of size 2");
  ctx.out(ctx.cast(ctx.in(0), out_real(ctx, 0)));
}

// aten::to / _to_copy / type_as into or out of complex (any overload: the
// result's dtype is the example's): real -> complex has imag 0, complex ->
// real keeps the real part (as PyTorch does, with a warning).
void to(SymbolicContext& ctx) {
  const ir::DType out = ctx.out_dtype(0);
  const ir::DType rt = out_real(ctx, 0);
  const bool from_complex = cplx::is_complex(ctx.dtype(0));
  if (cplx::is_complex(out)) {
    ctx.out(from_complex ? pair_in(ctx, 0, rt) : join(ctx, ctx.in_as(0, rt), nullptr, rt, out_rank(ctx)));
    return;
  }
  if (out == ir::DType::Undefined) ctx.fail("the result's dtype is unknown");
  ctx.out(ctx.cast(cplx::part(ctx, pair_in(ctx, 0, cplx::real_of(ctx.dtype(0))), 0, ctx.rank(0)), out));
}

// aten::complex(real, imag)
void complex_(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ctx.out(join(ctx, ctx.in_as(0, rt), ctx.in_as(1, rt), rt, out_rank(ctx)));
}

// aten::polar(abs, angle) = abs * (cos angle + i sin angle)
void polar(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ir::Value* r = ctx.in_as(0, rt);
  ir::Value* t = ctx.in_as(1, rt);
  ctx.out(join(ctx, mul(ctx, r, ctx.op("Cos", {t})), mul(ctx, r, ctx.op("Sin", {t})), rt, out_rank(ctx)));
}

// aten::real / aten::imag of a complex tensor.
void real(SymbolicContext& ctx) { ctx.out(cplx::part(ctx, pair_in(ctx, 0, out_real(ctx, 0)), 0, ctx.rank(0))); }
void imag(SymbolicContext& ctx) { ctx.out(cplx::part(ctx, pair_in(ctx, 0, out_real(ctx, 0)), 1, ctx.rank(0))); }

// |re + i im| as hypot: max * sqrt(1 + (min/max)^2), which neither
// overflows nor underflows where the result is representable; 0 for 0 and
// inf where either part is infinite.
ir::Value* modulus(SymbolicContext& ctx, const Cx& z, ir::DType rt) {
  if (!z.im) return ctx.op("Abs", {z.re});
  ir::Value* a = ctx.op("Abs", {z.re});
  ir::Value* b = ctx.op("Abs", {z.im});
  ir::Value* hi = ctx.op("Max", {a, b});
  ir::Value* lo = ctx.op("Min", {a, b});
  ir::Value* zero = helpers::equal(ctx, hi, sc(ctx, rt, 0.0));
  ir::Value* ratio = div(ctx, lo, ctx.op("Where", {zero, sc(ctx, rt, 1.0), hi}));
  ir::Value* m = mul(ctx, hi, ctx.op("Sqrt", {add(ctx, sc(ctx, rt, 1.0), mul(ctx, ratio, ratio))}));
  const double inf = std::numeric_limits<double>::infinity();
  return ctx.op("Where", {helpers::equal(ctx, hi, sc(ctx, rt, inf)), sc(ctx, rt, inf), m});
}

// aten::abs on a complex tensor (real result).
void abs_(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ctx.out(modulus(ctx, parts(ctx, 0, rt), rt));
}

// Whether v is negative or -0 (its sign bit): 1/-0 is -inf.
ir::Value* signbit(SymbolicContext& ctx, ir::Value* v, ir::DType rt) {
  ir::Value* zero = sc(ctx, rt, 0.0);
  ir::Value* neg_zero = ctx.op("And", {helpers::equal(ctx, v, zero), ctx.op("Less", {div(ctx, sc(ctx, rt, 1.0), v), zero})});
  return ctx.op("Or", {ctx.op("Less", {v, zero}), neg_zero});
}

// atan2(y, x) as C's: atan(y/x), moved by +-pi (the sign of y, -0
// included) for x < 0; +-pi/2 for x == 0; for y == x == 0, +-0 when x is +0
// and +-pi when x is -0; +-pi/4 or +-3pi/4 for infinite x and y; NaN in, NaN out.
ir::Value* atan2(SymbolicContext& ctx, ir::Value* y, ir::Value* x, ir::DType rt) {
  const double pi = 3.14159265358979323846;
  ir::Value* zero = sc(ctx, rt, 0.0);
  ir::Value* y_neg = signbit(ctx, y, rt);
  ir::Value* x_neg = signbit(ctx, x, rt);
  ir::Value* x_zero = helpers::equal(ctx, x, zero);
  ir::Value* y_zero = helpers::equal(ctx, y, zero);
  ir::Value* safe_x = ctx.op("Where", {x_zero, sc(ctx, rt, 1.0), x});
  ir::Value* base = ctx.op("Atan", {div(ctx, y, safe_x)});
  ir::Value* signed_pi = ctx.op("Where", {y_neg, sc(ctx, rt, -pi), sc(ctx, rt, pi)});
  ir::Value* r = ctx.op("Where", {ctx.op("Less", {x, zero}), add(ctx, base, signed_pi), base});
  ir::Value* signed_half = ctx.op("Where", {y_neg, sc(ctx, rt, -pi / 2), sc(ctx, rt, pi / 2)});
  // x == 0: +-pi/2, or for y == 0 too: +-0 when x is +0, +-pi when x is -0
  ir::Value* at_origin = ctx.op("Where", {x_neg, signed_pi, ctx.op("Where", {y_neg, sc(ctx, rt, -0.0), zero})});
  r = ctx.op("Where", {x_zero, ctx.op("Where", {y_zero, at_origin, signed_half}), r});
  // infinite x and y: atan(inf/inf) is NaN; C gives +-pi/4 or +-3pi/4
  const double inf = std::numeric_limits<double>::infinity();
  ir::Value* both_inf = ctx.op("And", {helpers::equal(ctx, ctx.op("Abs", {x}), sc(ctx, rt, inf)),
                                       helpers::equal(ctx, ctx.op("Abs", {y}), sc(ctx, rt, inf))});
  ir::Value* quarter = ctx.op("Where", {x_neg, sc(ctx, rt, 3 * pi / 4), sc(ctx, rt, pi / 4)});
  quarter = ctx.op("Where", {y_neg, ctx.op("Neg", {quarter}), quarter});
  return ctx.op("Where", {both_inf, quarter, r});
}

// aten::angle of a complex tensor: atan2(imag, real).
void angle(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  Cx z = parts(ctx, 0, rt);
  ctx.out(atan2(ctx, z.im, z.re, rt));
}

// aten::angle of a real tensor: pi for negative values, 0 otherwise, NaN for NaN.
void angle_real(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ir::Value* x = ctx.in_as(0, rt);
  ir::Value* r = ctx.op("Where", {ctx.op("Less", {x, sc(ctx, rt, 0.0)}), sc(ctx, rt, 3.14159265358979323846),
                                  sc(ctx, rt, 0.0)});
  ir::Value* nan = sc(ctx, rt, std::numeric_limits<double>::quiet_NaN());
  ctx.out(ctx.op("Where", {ctx.op("IsNaN", {x}), nan, r}));
}

// aten::real of a real tensor: itself.
void real_real(SymbolicContext& ctx) { ctx.out(ctx.in(0)); }

// aten::isreal: imag == 0 (complex), all true (real).
void isreal(SymbolicContext& ctx) {
  const ir::DType rt = rt_of(ctx);
  Cx z = parts(ctx, 0, rt);
  ctx.out(helpers::equal(ctx, z.im, sc(ctx, rt, 0.0)));
}
void isreal_real(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("ConstantOfShape", {ctx.op("Shape", {x})},
                 {{"value", ir::Tensor::from_int64s({1}, {1}).converted(ir::DType::Bool)}}));
}

// aten::conj / conj_physical / _conj: negates the imaginary part.
void conj(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ctx.out(cplx::conj(ctx, pair_in(ctx, 0, rt), rt));
}

// aten::neg
void neg(SymbolicContext& ctx) { ctx.out(ctx.op("Neg", {pair_in(ctx, 0, out_real(ctx, 0))})); }

// A complex alpha (add/sub) is refused; a real one scales `other`.
Cx scaled_other(SymbolicContext& ctx, ir::DType rt) {
  Cx o = parts(ctx, 1, rt);
  if (ctx.num_args() > 2 && !ctx.none(2)) {
    if (!ctx.arg(2).is_scalar()) ctx.fail("a complex alpha is not supported");
    const double alpha = ctx.f(2);
    if (alpha != 1.0) {
      o.re = mul(ctx, o.re, sc(ctx, rt, alpha));
      if (o.im) o.im = mul(ctx, o.im, sc(ctx, rt, alpha));
    }
  }
  return o;
}

// aten::add / aten::sub(self, other, alpha): componentwise.
void add_sub(SymbolicContext& ctx, bool subtract) {
  const ir::DType rt = out_real(ctx, 0);
  Cx a = parts(ctx, 0, rt);
  Cx b = scaled_other(ctx, rt);
  const char* op = subtract ? "Sub" : "Add";
  ir::Value* re = ctx.op(op, {a.re, b.re});
  ir::Value* im = a.im && b.im ? ctx.op(op, {a.im, b.im})
                  : a.im       ? a.im
                  : b.im       ? (subtract ? ctx.op("Neg", {b.im}) : b.im)
                               : nullptr;
  ctx.out(join(ctx, re, im, rt, out_rank(ctx)));
}
void add_(SymbolicContext& ctx) { add_sub(ctx, false); }
void sub_(SymbolicContext& ctx) { add_sub(ctx, true); }

// (a + bi)(c + di) = (ac - bd) + (ad + bc)i; with a real factor, both parts scale.
Cx cmul(SymbolicContext& ctx, const Cx& x, const Cx& y, const char* op = "Mul") {
  auto m = [&](ir::Value* p, ir::Value* q) { return ctx.op(op, {p, q}); };
  if (x.im && y.im) return {sub(ctx, m(x.re, y.re), m(x.im, y.im)), add(ctx, m(x.re, y.im), m(x.im, y.re))};
  if (x.im) return {m(x.re, y.re), m(x.im, y.re)};
  if (y.im) return {m(x.re, y.re), m(x.re, y.im)};
  return {m(x.re, y.re), nullptr};
}

// aten::mul(self, other)
void mul_(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  Cx r = cmul(ctx, parts(ctx, 0, rt), parts(ctx, 1, rt));
  ctx.out(join(ctx, r.re, r.im, rt, out_rank(ctx)));
}

// x / (c + di), scaled by s = max(|c|, |d|) so that c^2 + d^2 neither
// overflows nor underflows: (x (c' - d'i) / (c'^2 + d'^2)) / s, c' = c/s.
Cx cdiv(SymbolicContext& ctx, const Cx& x, const Cx& y, ir::DType rt) {
  if (!y.im) return {div(ctx, x.re, y.re), x.im ? div(ctx, x.im, y.re) : nullptr};
  ir::Value* s = ctx.op("Max", {ctx.op("Abs", {y.re}), ctx.op("Abs", {y.im})});
  ir::Value* c = div(ctx, y.re, s);
  ir::Value* d = div(ctx, y.im, s);
  ir::Value* den = mul(ctx, add(ctx, mul(ctx, c, c), mul(ctx, d, d)), s);
  Cx num = cmul(ctx, x, {c, ctx.op("Neg", {d})});
  return {div(ctx, num.re, den), div(ctx, num.im, den)};
}

// aten::div(self, other[, rounding_mode])
void div_(SymbolicContext& ctx) {
  if (ctx.num_args() > 2 && !ctx.none(2)) ctx.fail("div with a rounding mode is not defined for complex tensors");
  const ir::DType rt = out_real(ctx, 0);
  Cx r = cdiv(ctx, parts(ctx, 0, rt), parts(ctx, 1, rt), rt);
  ctx.out(join(ctx, r.re, r.im, rt, out_rank(ctx)));
}

// aten::reciprocal: 1 / z
void reciprocal(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  Cx z = parts(ctx, 0, rt);
  Cx r = cdiv(ctx, {sc(ctx, rt, 1.0), nullptr}, z, rt);
  ctx.out(join(ctx, r.re, r.im, rt, out_rank(ctx)));
}

// aten::exp: e^a (cos b + i sin b)
void exp_(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  Cx z = parts(ctx, 0, rt);
  ir::Value* e = ctx.op("Exp", {z.re});
  ctx.out(join(ctx, mul(ctx, e, ctx.op("Cos", {z.im})), mul(ctx, e, ctx.op("Sin", {z.im})), rt, out_rank(ctx)));
}

// aten::sgn: z / |z|, 0 for 0.
void sgn(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  ir::Value* p = pair_in(ctx, 0, rt);
  Cx z = cplx::split(ctx, p, ctx.rank(0));
  ir::Value* m = helpers::unsqueeze(ctx, modulus(ctx, z, rt), {ctx.rank(0)});
  ir::Value* zero = helpers::equal(ctx, m, sc(ctx, rt, 0.0));
  ctx.out(ctx.op("Where", {zero, sc(ctx, rt, 0.0), div(ctx, p, ctx.op("Where", {zero, sc(ctx, rt, 1.0), m}))}));
}

// aten::matmul / mm / bmm: (A + Bi)(C + Di) = (AC - BD) + (AD + BC)i.
void matmul(SymbolicContext& ctx) {
  const ir::DType rt = out_real(ctx, 0);
  Cx r = cmul(ctx, parts(ctx, 0, rt), parts(ctx, 1, rt), "MatMul");
  ctx.out(join(ctx, r.re, r.im, rt, out_rank(ctx)));
}

// The complex dims of a reduction (all when none), as pair-tensor axes.
std::vector<int64_t> reduce_axes(SymbolicContext& ctx, size_t dims_arg) {
  const int64_t r = ctx.rank(0);
  std::vector<int64_t> dims;
  if (dims_arg < ctx.num_args() && !ctx.none(dims_arg)) dims = helpers::normalize_dims(ctx, ctx.is(dims_arg), r);
  if (dims.empty())
    for (int64_t d = 0; d < r; ++d) dims.push_back(d);
  return dims;
}

// aten::sum / aten::mean over dims of a complex tensor: the pair axis stays.
// sum(self, dtype) | sum(self, dim, keepdim, dtype); mean alike.
void reduce(SymbolicContext& ctx, const char* op) {
  const ir::DType rt = out_real(ctx, 0);
  if (!cplx::is_complex(ctx.out_dtype(0))) ctx.fail("a complex sum or mean to a real dtype is not supported");
  ir::Value* p = pair_in(ctx, 0, rt);
  // (sum(self, dtype) or sum.dim_IntList(self, dim, keepdim, dtype), trailing defaults maybe left out)
  const bool with_dims = ctx.num_args() >= 2 && (ctx.arg(1).is_list() || ctx.arg(1).name == "dim");
  std::vector<int64_t> axes = reduce_axes(ctx, with_dims ? 1 : ctx.num_args());
  const bool keep = with_dims && ctx.num_args() >= 3 && !ctx.none(2) && ctx.b(2);
  if (axes.empty()) return ctx.out(p);  // (a 0-d tensor: nothing to reduce)
  ctx.out(helpers::reduce(ctx, op, p, axes, keep));
}
void sum(SymbolicContext& ctx) { reduce(ctx, "ReduceSum"); }
void mean(SymbolicContext& ctx) { reduce(ctx, "ReduceMean"); }

}  // namespace

void register_complex(Registry& r) {
  r.add_complex("aten::view_as_real", 9, view_as_real);
  r.add_complex("aten::view_as_complex", 9, view_as_complex);
  r.add_complex("aten::complex", 9, complex_);
  for (const char* op : {"aten::to", "aten::_to_copy", "aten::type_as"}) r.add_complex(op, 9, to);
  r.add_complex("aten::polar", 9, polar);
  r.add_complex("aten::real", 9, real);
  r.add("aten::real", 9, real_real);
  r.add_complex("aten::imag", 9, imag);
  r.add_complex("aten::abs", 9, abs_);
  r.add_complex("aten::angle", 9, angle);
  r.add("aten::angle", 9, angle_real);
  r.add_complex("aten::isreal", 9, isreal);
  r.add("aten::isreal", 9, isreal_real);
  for (const char* op : {"aten::conj", "aten::conj_physical", "aten::_conj"})
    r.add_complex(op, 9, conj);
  r.add_complex("aten::neg", 9, neg);
  r.add_complex("aten::add", 9, add_);
  r.add_complex("aten::sub", 9, sub_);
  r.add_complex("aten::mul", 9, mul_);
  r.add_complex("aten::div", 9, div_);
  r.add_complex("aten::reciprocal", 9, reciprocal);
  r.add_complex("aten::exp", 9, exp_);
  r.add_complex("aten::sgn", 9, sgn);
  for (const char* op : {"aten::matmul", "aten::mm", "aten::bmm"}) r.add_complex(op, 9, matmul);
  r.add_complex("aten::sum", 9, sum);
  r.add_complex("aten::mean", 9, mean);
}

}  // namespace torch2onnx::symbolics
