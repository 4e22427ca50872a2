// Miscellaneous math: addcmul/addcdiv, lerp, cross, outer, tensordot, einsum,
// distances (cdist, cosine_similarity, pairwise_distance), isinf/isfinite/
// nan_to_num, aminmax, conj, atan2, hypot, logaddexp, xlogy, sinc, heaviside,
// copysign, logit and the torch.special functions that stay in graphs
// (special_xlog1py, special_entr, special_ndtr; the plain aliases such as
// special_expit are recorded under their canonical names).
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

constexpr double kPi = 3.14159265358979323846;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

ir::Value* sc(SymbolicContext& ctx, ir::DType t, double v) { return ctx.const_scalar(t, v); }

// The dtype a node computes in: its output's (Float when unknown).
ir::DType out_t(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

// Largest finite value of a floating dtype.
double max_of(ir::DType t) {
  switch (t) {
    case ir::DType::Double: return DBL_MAX;
    case ir::DType::Float16: return 65504.0;
    case ir::DType::BFloat16: return 3.3895313892515355e38;
    default: return FLT_MAX;
  }
}

// x == 0 as a bool value.
ir::Value* is_zero(SymbolicContext& ctx, ir::Value* x, ir::DType t) {
  if (t == ir::DType::Bool) return ctx.op("Not", {x});
  if (x->dtype() == ir::DType::Undefined) x->type().dtype = t;
  return helpers::equal(ctx, x, sc(ctx, t, 0.0));
}

ir::Value* mul_any(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
  return ctx.op(t == ir::DType::Bool ? "And" : "Mul", {a, b});
}

ir::Value* add_any(SymbolicContext& ctx, ir::Value* a, ir::Value* b, ir::DType t) {
  return ctx.op(t == ir::DType::Bool ? "Or" : "Add", {a, b});
}

// The scalar argument `idx` times v, unless it is the constant 1.
ir::Value* times_scalar(SymbolicContext& ctx, ir::Value* v, size_t idx, ir::DType t) {
  if (ctx.none(idx) || (ctx.constant(idx) && ctx.f(idx) == 1.0)) return v;
  return mul_any(ctx, v, ctx.scalar_value(idx, t), t);
}

// The p-norm of x over `axes` (p = 0, 1, 2, +-inf or any other number).
ir::Value* p_norm(SymbolicContext& ctx, ir::Value* x, ir::DType t, double p, const std::vector<int64_t>& axes,
                  bool keep) {
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", x, axes, keep);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", x, axes, keep);
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {x}), axes, keep);
  if (p == 0.0) {
    ir::Value* nz = ctx.cast(ctx.op("Not", {is_zero(ctx, x, t)}), t);
    return helpers::reduce(ctx, "ReduceSum", nz, axes, keep);
  }
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {x}), sc(ctx, t, p)}), axes, keep);
  return ctx.op("Pow", {s, sc(ctx, t, 1.0 / p)});
}

// ---------------------------------------------------------------- pointwise

// aten::addcmul(self, tensor1, tensor2, *, value=1): self + value * t1 * t2
void addcmul(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  auto in = helpers::inputs_as(ctx, {0, 1, 2}, t);
  ir::Value* prod = times_scalar(ctx, mul_any(ctx, in[1], in[2], t), 3, t);
  ctx.out(add_any(ctx, in[0], prod, t));
}

// aten::addcdiv(self, tensor1, tensor2, *, value=1): self + value * t1 / t2
void addcdiv(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  if (!ir::is_floating(t)) ctx.fail("integer division with addcdiv is not supported (as in PyTorch)");
  auto in = helpers::inputs_as(ctx, {0, 1, 2}, t);
  ir::Value* q = times_scalar(ctx, ctx.op("Div", {in[1], in[2]}), 3, t);
  ctx.out(ctx.op("Add", {in[0], q}));
}

// aten::lerp(self, end, weight): PyTorch's two-sided formula,
// |w| < 0.5 ? self + w * (end - self) : end - (end - self) * (1 - w).
void lerp(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* b = ctx.in_as(1, t);
  ir::Value* diff = ctx.op("Sub", {b, a});
  const Arg& w = ctx.arg(2);
  if (w.is_scalar() && w.constant) {
    const double wv = ctx.f(2);
    if (std::fabs(wv) < 0.5)
      ctx.out(ctx.op("Add", {a, ctx.op("Mul", {diff, sc(ctx, t, wv)})}));
    else
      ctx.out(ctx.op("Sub", {b, ctx.op("Mul", {diff, sc(ctx, t, 1.0 - wv)})}));
    return;
  }
  ir::Value* wv = ctx.in_as(2, t);
  ir::Value* lo = ctx.op("Add", {a, ctx.op("Mul", {wv, diff})});
  ir::Value* hi = ctx.op("Sub", {b, ctx.op("Mul", {diff, ctx.op("Sub", {sc(ctx, t, 1.0), wv})})});
  ctx.out(ctx.op("Where", {ctx.op("Less", {ctx.op("Abs", {wv}), sc(ctx, t, 0.5)}), lo, hi}));
}

// aten::atan2(self, other): atan(y / x), moved by +-pi where x < 0; 0 where both are 0.
void atan2(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* y = ctx.in_as(0, t);
  ir::Value* x = ctx.in_as(1, t);
  // ONNX Runtime's Atan is float-only.
  ir::Value* r = ctx.cast(ctx.op("Atan", {ctx.cast(ctx.op("Div", {y, x}), ir::DType::Float)}), t);
  ir::Value* shift = ctx.op("Where", {ctx.op("Less", {y, sc(ctx, t, 0.0)}), sc(ctx, t, -kPi), sc(ctx, t, kPi)});
  r = ctx.op("Where", {ctx.op("Less", {x, sc(ctx, t, 0.0)}), ctx.op("Add", {r, shift}), r});
  ir::Value* both_zero = ctx.op("And", {is_zero(ctx, x, t), is_zero(ctx, y, t)});
  ctx.out(ctx.op("Where", {both_zero, sc(ctx, t, 0.0), r}));
}

// aten::hypot(self, other) = sqrt(x^2 + y^2)
void hypot(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  ctx.out(ctx.op("Sqrt", {ctx.op("Add", {ctx.op("Mul", {x, x}), ctx.op("Mul", {y, y})})}));
}

// max(a, b) + log(1 + exp(-|a - b|) [in base 2 for logaddexp2]; equal
// infinities give themselves.
void logaddexp_impl(SymbolicContext& ctx, bool base2) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* b = ctx.in_as(1, t);
  ir::Value* m = ctx.op("Max", {a, b});
  ir::Value* d = ctx.op("Abs", {ctx.op("Sub", {a, b})});
  d = ctx.op("Where", {ctx.op("IsNaN", {d}), sc(ctx, t, kInf), d});  // inf - inf
  ir::Value* nd = ctx.op("Neg", {d});
  if (base2) nd = ctx.op("Mul", {nd, sc(ctx, t, M_LN2)});
  ir::Value* l = ctx.op("Log", {ctx.op("Add", {ctx.op("Exp", {nd}), sc(ctx, t, 1.0)})});
  if (base2) l = ctx.op("Div", {l, sc(ctx, t, M_LN2)});
  ctx.out(ctx.op("Add", {m, l}));
}
void logaddexp(SymbolicContext& ctx) { logaddexp_impl(ctx, false); }
void logaddexp2(SymbolicContext& ctx) { logaddexp_impl(ctx, true); }

// x * f(y), 0 where x == 0 unless y is NaN.
void xlog_impl(SymbolicContext& ctx, bool plus1) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* y = ctx.in_as(1, t);
  ir::Value* ly = ctx.op("Log", {plus1 ? ctx.op("Add", {y, sc(ctx, t, 1.0)}) : y});
  ir::Value* r = ctx.op("Where", {is_zero(ctx, x, t), sc(ctx, t, 0.0), ctx.op("Mul", {x, ly})});
  ctx.out(ctx.op("Where", {ctx.op("IsNaN", {y}), sc(ctx, t, kNaN), r}));
}
// aten::xlogy(self, other) (tensor or number operands)
void xlogy(SymbolicContext& ctx) { xlog_impl(ctx, false); }
// aten::special_xlog1py(self, other) = self * log1p(other)
void xlog1py(SymbolicContext& ctx) { xlog_impl(ctx, true); }

// aten::special_entr(self): -x log x for x > 0, 0 at 0, -inf below.
void entr(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* r = ctx.op("Neg", {ctx.op("Mul", {x, ctx.op("Log", {x})})});
  r = ctx.op("Where", {is_zero(ctx, x, t), sc(ctx, t, 0.0), r});
  ctx.out(ctx.op("Where", {ctx.op("Less", {x, sc(ctx, t, 0.0)}), sc(ctx, t, -kInf), r}));
}

// aten::special_ndtr(self): the standard normal CDF, (1 + erf(x / sqrt 2)) / 2.
void ndtr(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* e = ctx.op("Erf", {ctx.op("Mul", {x, sc(ctx, t, M_SQRT1_2)})});
  ctx.out(ctx.op("Mul", {ctx.op("Add", {e, sc(ctx, t, 1.0)}), sc(ctx, t, 0.5)}));
}

// aten::sinc(self): sin(pi x) / (pi x), 1 at 0.
void sinc(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* px = ctx.op("Mul", {x, sc(ctx, t, kPi)});
  ir::Value* r = ctx.op("Div", {ctx.op("Sin", {px}), px});
  ctx.out(ctx.op("Where", {is_zero(ctx, x, t), sc(ctx, t, 1.0), r}));
}

void deg2rad(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ctx.out(ctx.op("Mul", {ctx.in_as(0, t), sc(ctx, t, kPi / 180.0)}));
}
void rad2deg(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ctx.out(ctx.op("Mul", {ctx.in_as(0, t), sc(ctx, t, 180.0 / kPi)}));
}

// aten::heaviside(self, values): values where x == 0, else x > 0.
void heaviside(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  ir::Value* v = ctx.in_as(1, t);
  ir::Value* xc = x;
  ir::DType ct = t;
  if (t == ir::DType::Bool || (ir::is_integral(t) && t != ir::DType::Int32 && t != ir::DType::Int64)) {
    xc = ctx.cast(x, ir::DType::Int32);
    ct = ir::DType::Int32;
  }
  ir::Value* pos = ctx.cast(ctx.op("Greater", {xc, sc(ctx, ct, 0.0)}), t);
  ctx.out(ctx.op("Where", {is_zero(ctx, xc, ct), v, pos}));
}

// aten::copysign(self, other): |self| with the sign of other (-0 counts as negative).
void copysign(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = ctx.op("Abs", {ctx.in_as(0, t)});
  const Arg& o = ctx.arg(1);
  if (o.is_scalar() && o.constant) {
    ctx.out(std::signbit(ctx.f(1)) ? ctx.op("Neg", {a}) : a);
    return;
  }
  ir::Value* s = ctx.in_as(1, t);
  ir::Value* neg = ctx.op("Or", {ctx.op("Less", {s, sc(ctx, t, 0.0)}),
                                 ctx.op("Less", {ctx.op("Div", {sc(ctx, t, 1.0), s}), sc(ctx, t, 0.0)})});
  ctx.out(ctx.op("Where", {neg, ctx.op("Neg", {a}), a}));
}

// aten::logit(self, eps=None): log(z / (1 - z)), z = clamp(x, eps, 1 - eps) with eps.
void logit(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  if (auto eps = ctx.opt_f(1))  // Min/Max rather than Clip, which ONNX Runtime lacks for double before opset 12
    x = ctx.op("Min", {ctx.op("Max", {x, sc(ctx, t, *eps)}), sc(ctx, t, 1.0 - *eps)});
  ctx.out(ctx.op("Log", {ctx.op("Div", {x, ctx.op("Sub", {sc(ctx, t, 1.0), x})})}));
}

// ---------------------------------------------------------------- classification

// Floating inputs keep their dtype (half goes through float); others become float.
ir::Value* as_float(SymbolicContext& ctx, size_t idx, ir::DType& t) {
  t = ctx.dtype(idx);
  if (t != ir::DType::Float && t != ir::DType::Double) t = ir::DType::Float;
  return ctx.in_as(idx, t);
}

// isinf/isposinf/isneginf: IsInf from opset 10; before, a comparison with the largest finite value.
void isinf_9(SymbolicContext& ctx, bool pos, bool neg) {
  ir::DType t;
  ir::Value* x = as_float(ctx, 0, t);
  const double m = max_of(t);
  ir::Value* r;
  if (pos && neg) r = ctx.op("Greater", {ctx.op("Abs", {x}), sc(ctx, t, m)});
  else if (pos) r = ctx.op("Greater", {x, sc(ctx, t, m)});
  else r = ctx.op("Less", {x, sc(ctx, t, -m)});
  ctx.out(r);
}
void isinf_10(SymbolicContext& ctx, bool pos, bool neg) {
  ir::DType t;
  ir::Value* x = as_float(ctx, 0, t);
  ctx.out(ctx.op("IsInf", {x}, {{"detect_positive", int64_t{pos}}, {"detect_negative", int64_t{neg}}}));
}
void isinf9(SymbolicContext& ctx) { isinf_9(ctx, true, true); }
void isposinf9(SymbolicContext& ctx) { isinf_9(ctx, true, false); }
void isneginf9(SymbolicContext& ctx) { isinf_9(ctx, false, true); }
void isinf10(SymbolicContext& ctx) { isinf_10(ctx, true, true); }
void isposinf10(SymbolicContext& ctx) { isinf_10(ctx, true, false); }
void isneginf10(SymbolicContext& ctx) { isinf_10(ctx, false, true); }

// aten::isfinite(self): |x| < inf (false for NaN).
void isfinite(SymbolicContext& ctx) {
  ir::DType t;
  ir::Value* x = as_float(ctx, 0, t);
  ctx.out(ctx.op("Less", {ctx.op("Abs", {x}), sc(ctx, t, kInf)}));
}

// aten::nan_to_num(self, nan=0, posinf=max, neginf=lowest)
void nan_to_num(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  ir::Value* x = ctx.in(0);
  if (!ir::is_floating(t)) {  // integers have no NaN or infinity
    ctx.out(x);
    return;
  }
  const double m = max_of(t);
  const double nan = ctx.opt_f(1).value_or(0.0);
  const double posinf = ctx.opt_f(2).value_or(m);
  const double neginf = ctx.opt_f(3).value_or(-m);
  ir::Value* r = ctx.op("Where", {ctx.op("IsNaN", {x}), sc(ctx, t, nan), x});
  r = ctx.op("Where", {ctx.op("Greater", {x, sc(ctx, t, m)}), sc(ctx, t, posinf), r});
  ctx.out(ctx.op("Where", {ctx.op("Less", {x, sc(ctx, t, -m)}), sc(ctx, t, neginf), r}));
}

// aten::is_floating_point(self) -> bool (known from the dtype).
void is_floating_point(SymbolicContext& ctx) {
  ctx.out(ctx.const_scalar(ir::DType::Bool, ir::is_floating(ctx.dtype(0)) ? 1.0 : 0.0));
}

// conj and friends are the identity on real tensors.
void conj(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  if (t == ir::DType::Complex64 || t == ir::DType::Complex128) ctx.fail("complex tensors cannot be exported to ONNX");
  ctx.out(ctx.in(0));
}

// aten::aminmax(self, *, dim=None, keepdim=False) -> (min, max)
void aminmax(SymbolicContext& ctx) {
  const ir::DType t = ctx.dtype(0);
  const int64_t rank = ctx.rank(0);
  ir::Value* x = ctx.in(0);
  const bool keep = ctx.num_args() > 2 && ctx.b(2);
  if (rank == 0) {
    ctx.out(x, 0);
    ctx.out(x, 1);
    return;
  }
  std::vector<int64_t> axes;
  if (!ctx.none(1)) {
    axes = {helpers::normalize_dim(ctx, ctx.i(1), rank)};
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  ir::Value* xc = t == ir::DType::Bool ? ctx.cast(x, ir::DType::Int32) : x;
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceMin", xc, axes, keep), t), 0);
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceMax", xc, axes, keep), t), 1);
}

// ---------------------------------------------------------------- products

// aten::cross(self, other, dim=None) / linalg_cross(self, other, *, dim=-1):
// a[[1,2,0]] * b[[2,0,1]] - a[[2,0,1]] * b[[1,2,0]] along dim.
void cross_impl(SymbolicContext& ctx, std::optional<int64_t> dim_arg) {
  const ir::DType t = out_t(ctx);
  const int64_t rank = ctx.rank(0);
  if (ctx.rank(1) != rank) ctx.fail("the inputs must have the same number of dimensions");
  int64_t dim = -1;
  if (dim_arg) {
    dim = helpers::normalize_dim(ctx, *dim_arg, rank);
  } else {  // the first dimension of size 3
    const auto& s = ctx.sizes(0);
    for (int64_t i = 0; i < rank && dim < 0; ++i)
      if (s[static_cast<size_t>(i)] == 3) dim = i;
    if (dim < 0) ctx.fail("no dimension of size 3 in the input");
    // (PyTorch picks it at run time: a dynamic dim up to it could pick another)
    for (int64_t i = 0; i <= dim; ++i) ctx.static_dim(0, i);
  }
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* b = ctx.in_as(1, t);
  ir::Value* i120 = ctx.const_ints({1, 2, 0});
  ir::Value* i201 = ctx.const_ints({2, 0, 1});
  auto g = [&](ir::Value* v, ir::Value* idx) { return ctx.op("Gather", {v, idx}, {{"axis", dim}}); };
  ir::Value* l = mul_any(ctx, g(a, i120), g(b, i201), t);
  ir::Value* r = mul_any(ctx, g(a, i201), g(b, i120), t);
  ctx.out(ctx.op("Sub", {l, r}));
}
void cross(SymbolicContext& ctx) { cross_impl(ctx, ctx.opt_i(2)); }
void linalg_cross(SymbolicContext& ctx) { cross_impl(ctx, ctx.none(2) ? -1 : ctx.i(2)); }

// aten::outer(self, vec2) = self[:, None] * vec2
void outer(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* a = helpers::unsqueeze(ctx, ctx.in_as(0, t), {1});
  ctx.out(mul_any(ctx, a, ctx.in_as(1, t), t));
}

// Product of shape[start:end) as a 1-D [n] value.
ir::Value* shape_prod(SymbolicContext& ctx, ir::Value* shape, int64_t start, int64_t end) {
  if (start >= end) return ctx.const_ints({1});
  ir::Value* part = helpers::slice(ctx, shape, {0}, {start}, {end});
  return helpers::reduce(ctx, "ReduceProd", part, {0}, true);
}

// aten::tensordot(self, other, dims_self, dims_other): transpose the
// contracted dims together, flatten both sides to matrices, MatMul, reshape.
void tensordot(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const int64_t ra = ctx.rank(0), rb = ctx.rank(1);
  const auto da = helpers::normalize_dims(ctx, ctx.is(2), ra);
  const auto db = helpers::normalize_dims(ctx, ctx.is(3), rb);
  if (da.size() != db.size()) ctx.fail("both dims lists must have the same length");
  const int64_t k = static_cast<int64_t>(da.size());
  std::vector<int64_t> pa, pb;
  for (int64_t i = 0; i < ra; ++i)
    if (std::find(da.begin(), da.end(), i) == da.end()) pa.push_back(i);
  const int64_t fa = static_cast<int64_t>(pa.size());
  pa.insert(pa.end(), da.begin(), da.end());
  pb = db;
  for (int64_t i = 0; i < rb; ++i)
    if (std::find(db.begin(), db.end(), i) == db.end()) pb.push_back(i);
  const int64_t fb = rb - k;
  ir::Value* a = helpers::transpose(ctx, ctx.in_as(0, t), pa);
  ir::Value* b = helpers::transpose(ctx, ctx.in_as(1, t), pb);
  ir::Value* sa = ctx.op("Shape", {a});
  ir::Value* sb = ctx.op("Shape", {b});
  ir::Value* kk = shape_prod(ctx, sa, fa, ra);
  auto cat = [&](std::vector<ir::Value*> parts) { return ctx.op("Concat", parts, {{"axis", int64_t{0}}}); };
  ir::Value* a2 = ctx.op("Reshape", {a, cat({shape_prod(ctx, sa, 0, fa), kk})});
  ir::Value* b2 = ctx.op("Reshape", {b, cat({kk, shape_prod(ctx, sb, k, rb)})});
  ir::Value* m = ctx.op("MatMul", {a2, b2});
  std::vector<ir::Value*> parts;
  if (fa > 0) parts.push_back(helpers::slice(ctx, sa, {0}, {0}, {fa}));
  if (fb > 0) parts.push_back(helpers::slice(ctx, sb, {0}, {k}, {rb}));
  ir::Value* shape = parts.empty() ? ctx.constant(ir::Tensor::from_int64s({}, {0}))
                     : parts.size() == 1 ? parts[0]
                                         : cat(parts);
  ctx.out(ctx.op("Reshape", {m, shape}));
}

// aten::einsum(equation, tensors, *, path=None): ONNX Einsum (opset 12), with
// PyTorch's implicit output made explicit.
void einsum(SymbolicContext& ctx) {
  std::string eq;
  for (char c : ctx.s(0))
    if (c != ' ') eq += c;
  auto ins = ctx.list(1);
  const size_t arrow = eq.find("->");
  if (arrow == std::string::npos) {
    // Implicit output: the broadcast dims first, then the labels seen once, sorted.
    std::map<char, int> count;
    bool ellipsis = eq.find("...") != std::string::npos;
    for (char c : eq)
      if (std::isalpha(static_cast<unsigned char>(c))) ++count[c];
    std::string out = ellipsis ? "..." : "";
    for (const auto& [c, n] : count)
      if (n == 1) out += c;
    eq += "->" + out;
  }
  const ir::DType t = out_t(ctx);
  // ONNX Runtime's Einsum takes float, double, int32 and int64.
  ir::DType ct = t;
  if (t == ir::DType::Float16 || t == ir::DType::BFloat16) ct = ir::DType::Float;
  else if (!ir::is_floating(t) && t != ir::DType::Int32) ct = ir::DType::Int64;
  for (auto& v : ins) v = ctx.cast(v, ct);
  ir::Value* r = ctx.op("Einsum", ins, {{"equation", eq}});
  ctx.out(ctx.cast(r, t));
}

// ---------------------------------------------------------------- distances

// aten::cdist(x1, x2, p=2, compute_mode=None): p-norms of all row differences.
void cdist(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const int64_t r1 = ctx.rank(0), r2 = ctx.rank(1);
  if (r1 < 2 || r2 < 2) ctx.fail("cdist needs inputs of at least 2 dimensions");
  ir::Value* a = helpers::unsqueeze(ctx, ctx.in_as(0, t), {r1 - 1});  // [..., P, 1, M]
  ir::Value* b = helpers::unsqueeze(ctx, ctx.in_as(1, t), {r2 - 2});  // [..., 1, R, M]
  ir::Value* d = ctx.op("Sub", {a, b});
  const int64_t r = std::max(r1, r2) + 1;
  ctx.out(p_norm(ctx, d, t, ctx.f(2), {r - 1}, false));
}

// aten::pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False) = ||x1 - x2 + eps||_p over the last dim.
void pairwise_distance(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const int64_t r = std::max(ctx.rank(0), ctx.rank(1));
  ir::Value* d = ctx.op("Sub", {ctx.in_as(0, t), ctx.in_as(1, t)});
  d = ctx.op("Add", {d, sc(ctx, t, ctx.f(3))});
  if (r == 0) {  // the norm of a single number
    ir::Value* n = p_norm(ctx, helpers::reshape(ctx, d, {1}), t, ctx.f(2), {0}, false);
    ctx.out(n);
    return;
  }
  ctx.out(p_norm(ctx, d, t, ctx.f(2), {r - 1}, ctx.b(4)));
}

// aten::cosine_similarity(x1, x2, dim=1, eps=1e-8):
// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) over dim.
void cosine_similarity(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  const int64_t r = std::max(ctx.rank(0), ctx.rank(1));
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), r);
  const double eps = ctx.f(3);
  ir::Value* a = ctx.in_as(0, t);
  ir::Value* b = ctx.in_as(1, t);
  // Broadcast both first (the norms are over the common shape), unless both
  // shapes are the same for every input the export accepts.
  bool same = ctx.sizes(0) == ctx.sizes(1);
  for (int64_t d = 0; same && d < ctx.rank(0); ++d) same = !ctx.dim_is_dynamic(0, d) && !ctx.dim_is_dynamic(1, d);
  if (!same) {
    ir::Value* a2 = ctx.op("Expand", {a, ctx.op("Shape", {b})});
    b = ctx.op("Expand", {b, ctx.op("Shape", {a})});
    a = a2;
  }
  auto normalized = [&](ir::Value* v) {
    ir::Value* n = helpers::reduce(ctx, "ReduceL2", v, {dim}, true);
    return ctx.op("Div", {v, ctx.op("Max", {n, sc(ctx, t, eps)})});
  };
  ir::Value* p = ctx.op("Mul", {normalized(a), normalized(b)});
  ctx.out(helpers::reduce(ctx, "ReduceSum", p, {dim}, false));
}

}  // namespace

void register_math(Registry& r) {
  r.add("aten::addcmul", 9, addcmul);
  r.add("aten::addcdiv", 9, addcdiv);
  r.add("aten::lerp", 9, lerp);
  r.add("aten::cross", 9, cross);
  r.add("aten::linalg_cross", 9, linalg_cross);
  r.add("aten::outer", 9, outer);
  r.add("aten::tensordot", 9, tensordot);
  r.add("aten::einsum", 12, einsum);
  r.add("aten::cdist", 9, cdist);
  r.add("aten::cosine_similarity", 9, cosine_similarity);
  r.add("aten::pairwise_distance", 9, pairwise_distance);
  r.add("aten::isinf", 9, isinf9);
  r.add("aten::isinf", 10, isinf10);
  r.add("aten::isposinf", 9, isposinf9);
  r.add("aten::isposinf", 10, isposinf10);
  r.add("aten::isneginf", 9, isneginf9);
  r.add("aten::isneginf", 10, isneginf10);
  r.add("aten::isfinite", 9, isfinite);
  r.add("aten::nan_to_num", 9, nan_to_num);
  r.add("aten::aminmax", 9, aminmax);
  r.add("aten::is_floating_point", 9, is_floating_point);
  r.add("aten::conj", 9, conj);
  r.add("aten::conj_physical", 9, conj);
  r.add("aten::atan2", 9, atan2);
  r.add("aten::hypot", 9, hypot);
  r.add("aten::logaddexp", 9, logaddexp);
  r.add("aten::logaddexp2", 9, logaddexp2);
  r.add("aten::xlogy", 9, xlogy);
  r.add("aten::special_xlog1py", 9, xlog1py);
  r.add("aten::special_entr", 9, entr);
  r.add("aten::special_ndtr", 9, ndtr);
  r.add("aten::sinc", 9, sinc);
  r.add("aten::deg2rad", 9, deg2rad);
  r.add("aten::rad2deg", 9, rad2deg);
  r.add("aten::heaviside", 9, heaviside);
  r.add("aten::copysign", 9, copysign);
  r.add("aten::logit", 9, logit);
}

}  // namespace torch2onnx::symbolics
