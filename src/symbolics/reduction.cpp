// Reductions: sum, mean, prod, amax/amin, max/min (all, per dim with
// indices), argmax/argmin, any/all, std/var, logsumexp, norms, cumsum.
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// Reduced axes from a dim argument (int, int list, None or [] = all).
std::vector<int64_t> reduce_axes(SymbolicContext& ctx, size_t idx) {
  const int64_t rank = ctx.rank(0);
  std::vector<int64_t> axes;
  if (idx < ctx.num_args() && !ctx.none(idx)) axes = helpers::normalize_dims(ctx, ctx.is(idx), rank);
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  return axes;
}

// ReduceMax/Min do not take booleans: go through int32.
ir::Value* reduce_any_dtype(SymbolicContext& ctx, const char* op, ir::Value* x, const std::vector<int64_t>& axes,
                            bool keep, ir::DType dt) {
  if (dt != ir::DType::Bool) return helpers::reduce(ctx, op, x, axes, keep);
  ir::Value* r = helpers::reduce(ctx, op, ctx.cast(x, ir::DType::Int32), axes, keep);
  return ctx.cast(r, ir::DType::Bool);
}

// sum/mean/prod(self, dtype=None) or (self, dim, keepdim=False, dtype=None)
void reduce_arith(SymbolicContext& ctx, const char* op) {
  const ir::DType t = ctx.out_dtype();
  ir::Value* x = ctx.cast(ctx.in(0), t);
  if (ctx.rank(0) == 0) {
    ctx.out(x);
    return;
  }
  if (ctx.num_args() <= 2) {  // whole tensor
    ctx.out(helpers::reduce(ctx, op, x, reduce_axes(ctx, 99), false));
    return;
  }
  ctx.out(helpers::reduce(ctx, op, x, reduce_axes(ctx, 1), ctx.b(2)));
}

void sum(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceSum"); }
void mean(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceMean"); }
void prod(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceProd"); }

// amax/amin(self, dim=[], keepdim=False)
void amax(SymbolicContext& ctx) {
  ctx.out(reduce_any_dtype(ctx, "ReduceMax", ctx.in(0), reduce_axes(ctx, 1), ctx.num_args() > 2 && ctx.b(2), ctx.dtype(0)));
}
void amin(SymbolicContext& ctx) {
  ctx.out(reduce_any_dtype(ctx, "ReduceMin", ctx.in(0), reduce_axes(ctx, 1), ctx.num_args() > 2 && ctx.b(2), ctx.dtype(0)));
}

// max/min: (self) -> all; (self, other) -> elementwise; (self, dim, keepdim) -> (values, indices)
void max_min(SymbolicContext& ctx, bool is_max) {
  const char* red = is_max ? "ReduceMax" : "ReduceMin";
  if (ctx.num_args() == 1) {
    ctx.out(reduce_any_dtype(ctx, red, ctx.in(0), reduce_axes(ctx, 99), false, ctx.dtype(0)));
    return;
  }
  if (ctx.num_args() == 2 && ctx.arg(1).is_tensor()) {
    const ir::DType t = ctx.out_dtype();
    ctx.out(ctx.op(is_max ? "Max" : "Min", helpers::inputs_as(ctx, {0, 1}, t)));
    return;
  }
  const int64_t rank = ctx.rank(0);
  const bool keep = ctx.b(2);
  ir::Value* x = ctx.in(0);
  if (rank == 0) {
    ctx.out(x, 0);
    ctx.out(ctx.const_int(0), 1);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(reduce_any_dtype(ctx, red, x, {dim}, keep, ctx.dtype(0)), 0);
  ir::Value* xi = ctx.dtype(0) == ir::DType::Bool ? ctx.cast(x, ir::DType::Int32) : x;
  ctx.out(ctx.op(is_max ? "ArgMax" : "ArgMin", {xi}, {{"axis", dim}, {"keepdims", int64_t{keep}}}), 1);
}

void max(SymbolicContext& ctx) { max_min(ctx, true); }
void min(SymbolicContext& ctx) { max_min(ctx, false); }

// argmax/argmin(self, dim=None, keepdim=False)
void arg_reduce(SymbolicContext& ctx, const char* op) {
  ir::Value* x = ctx.in(0);
  if (ctx.dtype(0) == ir::DType::Bool) x = ctx.cast(x, ir::DType::Int32);
  const bool keep = ctx.num_args() > 2 && ctx.b(2);
  if (ctx.num_args() < 2 || ctx.none(1)) {
    ir::Value* flat = helpers::reshape(ctx, x, {-1});
    ir::Value* r = ctx.op(op, {flat}, {{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
    if (keep) r = helpers::reshape(ctx, r, std::vector<int64_t>(static_cast<size_t>(ctx.rank(0)), 1));
    ctx.out(r);
    return;
  }
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.const_int(0));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(ctx.op(op, {x}, {{"axis", dim}, {"keepdims", int64_t{keep}}}));
}
void argmax(SymbolicContext& ctx) { arg_reduce(ctx, "ArgMax"); }
void argmin(SymbolicContext& ctx) { arg_reduce(ctx, "ArgMin"); }

// any/all(self) or (self, dim, keepdim)
void any_all(SymbolicContext& ctx, const char* op) {
  ir::Value* x = ctx.cast(ctx.in(0), ir::DType::Int32);
  x = ctx.op("Not", {ctx.op("Equal", {x, ctx.const_scalar(ir::DType::Int32, 0)})});
  x = ctx.cast(x, ir::DType::Int32);
  ir::Value* r;
  if (ctx.num_args() == 1)
    r = helpers::reduce(ctx, op, x, reduce_axes(ctx, 99), false);
  else
    r = helpers::reduce(ctx, op, x, reduce_axes(ctx, 1), ctx.b(2));
  ctx.out(ctx.cast(r, ctx.out_dtype()));
}
void any(SymbolicContext& ctx) { any_all(ctx, "ReduceMax"); }
void all(SymbolicContext& ctx) { any_all(ctx, "ReduceMin"); }

// Number of reduced elements as a value of dtype t (folded when static).
ir::Value* reduced_count(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes, ir::DType t) {
  ir::Value* dims = ctx.op("Gather", {ctx.op("Shape", {x}), ctx.const_ints(axes)}, {{"axis", int64_t{0}}});
  return ctx.cast(helpers::reduce(ctx, "ReduceProd", dims, {}, false), t);
}

// var/std: (self, unbiased) | (self, dim, unbiased, keepdim) | (self, dim, *, correction, keepdim)
ir::Value* variance(SymbolicContext& ctx, ir::Value* x, std::vector<int64_t>& axes_out, bool& keep) {
  std::vector<int64_t> axes;
  double correction = 1.0;
  keep = false;
  if (ctx.num_args() == 2) {
    axes = reduce_axes(ctx, 99);
    correction = ctx.b(1) ? 1.0 : 0.0;
  } else {
    axes = reduce_axes(ctx, 1);
    const Arg& c = ctx.arg(2);
    if (c.kind == Arg::Kind::Bool) correction = c.b ? 1.0 : 0.0;
    else if (!c.is_none()) correction = ctx.f(2);
    keep = ctx.num_args() > 3 && ctx.b(3);
  }
  const ir::DType t = ctx.dtype(0);
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* ss = helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {d, d}), axes, keep);
  ir::Value* n = reduced_count(ctx, x, axes, t);
  ir::Value* denom = correction == 0.0 ? n : ctx.op("Sub", {n, ctx.const_scalar(t, correction)});
  axes_out = axes;
  return ctx.op("Div", {ss, denom});
}

void var(SymbolicContext& ctx) {
  std::vector<int64_t> axes;
  bool keep;
  ctx.out(variance(ctx, ctx.in(0), axes, keep));
}
void std_(SymbolicContext& ctx) {
  std::vector<int64_t> axes;
  bool keep;
  ctx.out(ctx.op("Sqrt", {variance(ctx, ctx.in(0), axes, keep)}));
}
void var_mean(SymbolicContext& ctx, bool take_sqrt) {
  std::vector<int64_t> axes;
  bool keep;
  ir::Value* x = ctx.in(0);
  ir::Value* v = variance(ctx, x, axes, keep);
  ctx.out(take_sqrt ? ctx.op("Sqrt", {v}) : v, 0);
  ctx.out(helpers::reduce(ctx, "ReduceMean", x, axes, keep), 1);
}
void var_mean_(SymbolicContext& ctx) { var_mean(ctx, false); }
void std_mean(SymbolicContext& ctx) { var_mean(ctx, true); }

// logsumexp(self, dim, keepdim)
void logsumexp(SymbolicContext& ctx) {
  ctx.out(helpers::reduce(ctx, "ReduceLogSumExp", ctx.in(0), reduce_axes(ctx, 1), ctx.b(2)));
}

// The p-norm over axes: p = 1, 2, inf, -inf, 0 or general.
ir::Value* p_norm(SymbolicContext& ctx, ir::Value* x, double p, const std::vector<int64_t>& axes, bool keep) {
  const ir::DType t = x->dtype() == ir::DType::Undefined ? ctx.dtype(0) : x->dtype();
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", x, axes, keep);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", x, axes, keep);
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {x}), axes, keep);
  if (p == 0.0) {
    ir::Value* nz = ctx.cast(ctx.op("Not", {ctx.op("Equal", {x, ctx.const_scalar(t, 0.0)})}), t);
    return helpers::reduce(ctx, "ReduceSum", nz, axes, keep);
  }
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {x}), ctx.const_scalar(t, p)}), axes, keep);
  return ctx.op("Pow", {s, ctx.const_scalar(t, 1.0 / p)});
}

// norm(self, p=2) | norm(self, p, dim, keepdim[, dtype])
void norm(SymbolicContext& ctx) {
  ir::Value* x = ctx.cast(ctx.in(0), ctx.out_dtype());
  const double p = ctx.num_args() > 1 && !ctx.none(1) ? ctx.f(1) : 2.0;
  const std::vector<int64_t> axes = ctx.num_args() > 2 ? reduce_axes(ctx, 2) : reduce_axes(ctx, 99);
  const bool keep = ctx.num_args() > 3 && ctx.b(3);
  ctx.out(p_norm(ctx, x, p, axes, keep));
}

// frobenius_norm(self[, dim, keepdim])
void frobenius_norm(SymbolicContext& ctx) {
  const std::vector<int64_t> axes = ctx.num_args() > 1 ? reduce_axes(ctx, 1) : reduce_axes(ctx, 99);
  ctx.out(helpers::reduce(ctx, "ReduceL2", ctx.in(0), axes, ctx.num_args() > 2 && ctx.b(2)));
}

// linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None)
void linalg_vector_norm(SymbolicContext& ctx) {
  ir::Value* x = ctx.cast(ctx.in(0), ctx.out_dtype());
  const double p = ctx.f(1);
  const std::vector<int64_t> axes = reduce_axes(ctx, 2);
  ir::Value* flat = x;
  std::vector<int64_t> ax = axes;
  if (ctx.none(2) && ctx.rank(0) > 0) {  // over all elements
    flat = helpers::reshape(ctx, x, {-1});
    ax = {0};
    if (ctx.b(3)) ctx.fail("keepdim with dim=None is not supported");
  }
  ctx.out(p_norm(ctx, flat, p, ax, ctx.b(3)));
}

// cumsum(self, dim, dtype=None)
void cumsum(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  ir::Value* x = ctx.cast(ctx.in(0), ctx.out_dtype());
  if (rank == 0) {
    ctx.out(x);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(ctx.op("CumSum", {x, ctx.const_int(dim)}));
}

}  // namespace

void register_reduction(Registry& r) {
  r.add("aten::sum", 9, sum);
  r.add("aten::mean", 9, mean);
  r.add("aten::prod", 9, prod);
  r.add("aten::amax", 9, amax);
  r.add("aten::amin", 9, amin);
  r.add("aten::max", 9, max);
  r.add("aten::min", 9, min);
  r.add("aten::argmax", 9, argmax);
  r.add("aten::argmin", 9, argmin);
  r.add("aten::any", 9, any);
  r.add("aten::all", 9, all);
  r.add("aten::var", 9, var);
  r.add("aten::std", 9, std_);
  r.add("aten::var_mean", 9, var_mean_);
  r.add("aten::std_mean", 9, std_mean);
  r.add("aten::logsumexp", 9, logsumexp);
  r.add("aten::norm", 9, norm);
  r.add("aten::frobenius_norm", 9, frobenius_norm);
  r.add("aten::linalg_vector_norm", 9, linalg_vector_norm);
  r.add("aten::cumsum", 11, cumsum);
}

}  // namespace torch2onnx::symbolics
