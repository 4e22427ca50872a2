// Linear algebra: determinants (Det from opset 11), linalg_norm /
// linalg_matrix_norm (nuclear and spectral norms from linalg_svd.cpp's
// singular values), weight_norm, renorm, trace. (linalg_vector_norm is in
// reduction.cpp; factorizations are in linalg_lu/solve/decomp/eigh/svd.cpp.)
#include <cmath>
#include <limits>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"
#include "symbolics/linalg_decomp.h"

namespace torch2onnx::symbolics {
namespace {

ir::Value* sc(SymbolicContext& ctx, ir::DType t, double v) { return ctx.const_scalar(t, v); }

ir::DType out_t(SymbolicContext& ctx) {
  ir::DType t = ctx.out_dtype();
  return t == ir::DType::Undefined ? ir::DType::Float : t;
}

// ONNX Runtime's Det computes in float32: other dtypes go through it.
ir::Value* det_of(SymbolicContext& ctx, ir::Value* x, ir::DType t) {
  return ctx.cast(ctx.op("Det", {ctx.cast(x, ir::DType::Float)}), t);
}

// aten::linalg_det(A) (torch.det is recorded as linalg_det)
void det(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ctx.out(det_of(ctx, ctx.in(0), t));
}

// aten::logdet(self): log(det), NaN for a negative determinant.
void logdet(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ctx.out(ctx.op("Log", {det_of(ctx, ctx.in(0), t)}));
}

// aten::slogdet / linalg_slogdet(A) -> (sign, logabsdet)
void slogdet(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype(0) == ir::DType::Undefined ? ir::DType::Float : ctx.out_dtype(0);
  ir::Value* d = det_of(ctx, ctx.in(0), t);
  ctx.out(ctx.op("Sign", {d}), 0);
  const ir::DType t1 = ctx.out_dtype(1) == ir::DType::Undefined ? t : ctx.out_dtype(1);
  ctx.out(ctx.cast(ctx.op("Log", {ctx.op("Abs", {d})}), t1), 1);
}

// The vector p-norm over axes.
ir::Value* vector_norm(SymbolicContext& ctx, ir::Value* x, ir::DType t, double p, const std::vector<int64_t>& axes,
                       bool keep) {
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", x, axes, keep);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", x, axes, keep);
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {x}), axes, keep);
  if (p == 0.0) {
    if (x->dtype() == ir::DType::Undefined) x->type().dtype = t;
    ir::Value* nz = ctx.op("Not", {helpers::equal(ctx, x, sc(ctx, t, 0.0))});
    return helpers::reduce(ctx, "ReduceSum", ctx.cast(nz, t), axes, keep);
  }
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {x}), sc(ctx, t, p)}), axes, keep);
  return ctx.op("Pow", {s, sc(ctx, t, 1.0 / p)});
}

// The matrix norm over (d0, d1): 'fro', 1, -1, inf, -inf.
ir::Value* matrix_norm(SymbolicContext& ctx, ir::Value* x, const std::string& ord, double p, int64_t d0, int64_t d1,
                       bool keep) {
  if (ord == "fro") return helpers::reduce(ctx, "ReduceL2", x, {d0, d1}, keep);
  if (ord == "nuc" || (ord.empty() && std::fabs(p) == 2.0))  // from the singular values (linalg_svd.cpp)
    return decomp::matrix_norm_svd(ctx, x, ctx.static_sizes(0), x->dtype(), ord == "nuc" ? "nuc" : (p > 0 ? "2" : "-2"), d0,
                                   d1, keep);
  if (std::fabs(p) != 1.0 && !std::isinf(p))
    ctx.fail("matrix norm order " + std::to_string(p) + " is not one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf");
  // ord +-1: max/min over columns of the column sums; ord +-inf: over rows of the row sums.
  const int64_t sum_axis = std::isinf(p) ? d1 : d0;
  const int64_t pick_axis = std::isinf(p) ? d0 : d1;
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Abs", {x}), {sum_axis}, true);
  ir::Value* r = helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", s, {pick_axis}, true);
  if (!keep) r = helpers::squeeze(ctx, r, {std::min(d0, d1), std::max(d0, d1)});
  return r;
}

// The ord argument: a string, a number or None.
struct Ord {
  bool given = false;
  std::string s;  // "fro" / "nuc" when a string
  double p = 2.0;
};

Ord read_ord(SymbolicContext& ctx, size_t idx) {
  Ord o;
  if (ctx.none(idx)) return o;
  o.given = true;
  if (ctx.arg(idx).kind == Arg::Kind::String) o.s = ctx.s(idx);
  else o.p = ctx.f(idx);
  return o;
}

// aten::linalg_norm(self, ord=None, dim=None, keepdim=False, *, dtype=None)
// (ord a number or 'fro'/'nuc')
void linalg_norm(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.cast(ctx.in(0), t);
  const int64_t rank = ctx.rank(0);
  const Ord ord = read_ord(ctx, 1);
  const bool keep = ctx.b(3);
  std::vector<int64_t> dims;
  if (!ctx.none(2)) dims = helpers::normalize_dims(ctx, ctx.is(2), rank);
  if (!ord.given) {
    if (dims.empty()) {  // the 2-norm of all elements
      if (rank == 0) {
        ctx.out(ctx.op("Abs", {x}));
        return;
      }
      std::vector<int64_t> all;
      for (int64_t i = 0; i < rank; ++i) all.push_back(i);
      ctx.out(helpers::reduce(ctx, "ReduceL2", x, all, keep));
      return;
    }
    ctx.out(helpers::reduce(ctx, "ReduceL2", x, dims, keep));
    return;
  }
  if (dims.empty()) {
    if (rank == 1) dims = {0};
    else if (rank == 2) dims = {0, 1};
    else ctx.fail("with ord given and dim=None the input must be 1-D or 2-D");
  }
  if (dims.size() == 1) {
    if (!ord.s.empty()) ctx.fail("ord='" + ord.s + "' is a matrix norm and needs two dims");
    ctx.out(vector_norm(ctx, x, t, ord.p, dims, keep));
    return;
  }
  if (dims.size() != 2) ctx.fail("dim must have one or two elements");
  ctx.out(matrix_norm(ctx, x, ord.s, ord.p, dims[0], dims[1], keep));
}

// aten::linalg_matrix_norm(self, ord, dim=[-2, -1], keepdim=False, *, dtype=None)
void linalg_matrix_norm(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.cast(ctx.in(0), t);
  const int64_t rank = ctx.rank(0);
  Ord ord = read_ord(ctx, 1);
  if (!ord.given) ord.s = "fro";
  const auto dims = helpers::normalize_dims(ctx, ctx.is(2), rank);
  if (dims.size() != 2) ctx.fail("dim must have two elements");
  ctx.out(matrix_norm(ctx, x, ord.s, ord.p, dims[0], dims[1], ctx.b(3)));
}

// The 2-norm over every axis but `dim` (all axes for dim = -1), kept.
ir::Value* norm_except_dim(SymbolicContext& ctx, ir::Value* v, int64_t rank, int64_t dim) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) axes.push_back(i);
  if (axes.empty()) return ctx.op("Abs", {v});
  return helpers::reduce(ctx, "ReduceL2", v, axes, true);
}

// aten::_weight_norm(v, g, dim=0) = v * (g / ||v||), the norm over all dims
// but dim (over everything for dim = -1; -2 and below count from the end).
void weight_norm(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* v = ctx.in_as(0, t);
  ir::Value* g = ctx.in_as(1, t);
  const int64_t rank = ctx.rank(0);
  int64_t dim = ctx.i(2);
  // (-1 is "every dim"; other negative dims count from the end, as PyTorch's transpose(0, dim) takes them)
  if (dim < -1 && dim >= -rank) dim += rank;
  if (dim < -1 || dim >= rank) ctx.fail("dim " + std::to_string(dim) + " is out of range");
  ir::Value* n = norm_except_dim(ctx, v, rank, dim);
  if (dim == -1 && rank > 0) n = helpers::reshape(ctx, n, {});
  ctx.out(ctx.op("Mul", {v, ctx.op("Div", {g, n})}));
}

// aten::renorm(self, p, dim, maxnorm): each slice along dim whose p-norm
// exceeds maxnorm is scaled to maxnorm / (norm + 1e-7).
void renorm(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  ir::Value* x = ctx.in_as(0, t);
  const int64_t rank = ctx.rank(0);
  const double p = ctx.f(1);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), std::max<int64_t>(rank, 1));
  const double maxnorm = ctx.f(3);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) axes.push_back(i);
  ir::Value* n = axes.empty() ? ctx.op("Abs", {x}) : vector_norm(ctx, x, t, p, axes, true);
  ir::Value* scale = ctx.op("Div", {sc(ctx, t, maxnorm), ctx.op("Add", {n, sc(ctx, t, 1e-7)})});
  ir::Value* f = ctx.op("Where", {ctx.op("Greater", {n, sc(ctx, t, maxnorm)}), scale, sc(ctx, t, 1.0)});
  ctx.out(ctx.op("Mul", {x, f}));
}

// aten::trace(self): the sum of the main diagonal of a matrix.
void trace(SymbolicContext& ctx) {
  const ir::DType t = out_t(ctx);
  if (ctx.rank(0) != 2) ctx.fail("trace needs a 2-D input");
  // EyeLike and Mul do not take every integer type: compute in the output dtype.
  ir::DType ct = t == ir::DType::Bool ? ir::DType::Int64 : t;
  ir::Value* x = ctx.cast(ctx.in(0), ct);
  ir::Value* d = ctx.op("Mul", {x, ctx.op("EyeLike", {x})});
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceSum", d, {0, 1}, false), t));
}

}  // namespace

void register_linalg(Registry& r) {
  r.add("aten::linalg_det", 11, det);
  r.add("aten::logdet", 11, logdet);
  r.add("aten::slogdet", 11, slogdet);
  r.add("aten::linalg_slogdet", 11, slogdet);
  r.add("aten::linalg_norm", 9, linalg_norm);
  r.add("aten::linalg_matrix_norm", 9, linalg_matrix_norm);
  r.add("aten::_weight_norm", 9, weight_norm);
  r.add("aten::renorm", 9, renorm);
  r.add("aten::trace", 9, trace);
}

}  // namespace torch2onnx::symbolics
