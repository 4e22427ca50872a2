// Reductions: sum, mean, prod, amax/amin, max/min (all, per dim with
// indices), argmax/argmin, any/all, count_nonzero, nansum/nanmean, std/var,
// logsumexp, norms, cumsum.
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

std::vector<int64_t> all_axes(SymbolicContext& ctx) { return reduce_axes(ctx, 1u << 20); }

bool opt_bool(SymbolicContext& ctx, size_t idx, bool dflt = false) {
  return idx < ctx.num_args() && !ctx.none(idx) ? ctx.b(idx) : dflt;
}

// Dtypes ONNX Runtime's ReduceMax/ReduceMin/ArgMax take at every opset.
bool minmax_native(ir::DType t) {
  return ir::is_floating(t) || t == ir::DType::Int32 || t == ir::DType::Int64;
}

// Whether any element over `axes` is NaN (bool, reduced like the result).
ir::Value* any_nan(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes, bool keep) {
  ir::Value* n = ctx.cast(ctx.op("IsNaN", {x}), ir::DType::Int32);
  return ctx.cast(helpers::reduce(ctx, "ReduceMax", n, axes, keep), ir::DType::Bool);
}

// ReduceMax/ReduceMin of any dtype: bool and 8/16-bit integers go through
// int32; NaN propagates as in PyTorch (ONNX Runtime's reductions skip it).
ir::Value* reduce_any_dtype(SymbolicContext& ctx, const char* op, ir::Value* x, const std::vector<int64_t>& axes,
                            bool keep, ir::DType dt) {
  if (ir::is_floating(dt)) {
    ir::Value* r = helpers::reduce(ctx, op, x, axes, keep);
    ir::Value* nan = ctx.const_scalar(dt, std::numeric_limits<double>::quiet_NaN());
    return ctx.op("Where", {any_nan(ctx, x, axes, keep), nan, r});
  }
  if (minmax_native(dt)) return helpers::reduce(ctx, op, x, axes, keep);
  ir::Value* r = helpers::reduce(ctx, op, ctx.cast(x, ir::DType::Int32), axes, keep);
  return ctx.cast(r, dt);
}

// The dtype to sum t in: ONNX ReduceSum/ReduceProd/ReduceMean take no 8/16-bit
// integers or bool; half accumulates in float, as in PyTorch.
ir::DType sum_dtype(ir::DType t) {
  if (t == ir::DType::Float16) return ir::DType::Float;
  if (ir::is_floating(t) || t == ir::DType::Int32 || t == ir::DType::Int64) return t;
  return ir::DType::Int64;
}

// sum(int[] | float[] | bool[]) -> a number (Python's sum() of a list in TorchScript).
void list_sum(SymbolicContext& ctx) {
  const Arg& list = ctx.arg(0);
  const ir::DType t = ir::is_floating(ctx.out_dtype()) ? ir::DType::Double : ir::DType::Int64;
  if (list.value) {  // a list computed at run time: a 1-D tensor, or a sequence of 0-d numbers
    ir::Value* items = list.value;
    if (items->type().kind == ir::ValueType::Kind::Sequence)
      items = ctx.op("ConcatFromSequence", {items}, {{"axis", int64_t{0}}, {"new_axis", int64_t{1}}});
    ctx.out(helpers::reduce(ctx, "ReduceSum", ctx.cast(items, t), {0}, false));
    return;
  }
  if (!list.is_list()) ctx.fail("argument 0 must be a list of numbers");
  double constant_part = 0;
  ir::Value* s = nullptr;
  for (size_t k = 0; k < list.elements.size(); ++k) {
    const Arg& e = list.elements[k];
    if (e.constant) {
      constant_part += e.kind == Arg::Kind::Float ? e.f : e.kind == Arg::Kind::Bool ? e.b : static_cast<double>(e.i);
      continue;
    }
    ir::Value* v = ctx.cast(ctx.elem(0, k), t);
    s = s ? ctx.op("Add", {s, v}) : v;
  }
  ir::Value* c = ctx.const_scalar(t, constant_part);
  ctx.out(!s ? c : constant_part == 0 ? s : ctx.op("Add", {s, c}));
}

// sum/mean/prod(self, dtype=None) | (self, dim, keepdim=False, dtype=None)
void reduce_arith(SymbolicContext& ctx, const char* op) {
  if (ctx.arg(0).is_list() && std::string(op) == "ReduceSum") return list_sum(ctx);
  const ir::DType t = ctx.out_dtype();
  ir::Value* x = ctx.in_as(0, sum_dtype(t));
  if (ctx.rank(0) == 0) {
    ctx.out(ctx.cast(x, t));
    return;
  }
  ir::Value* r;
  if (ctx.num_args() <= 2)  // whole tensor
    r = helpers::reduce(ctx, op, x, all_axes(ctx), false);
  else
    r = helpers::reduce(ctx, op, x, reduce_axes(ctx, 1), ctx.b(2));
  ctx.out(ctx.cast(r, t));
}

void sum(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceSum"); }
void mean(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceMean"); }
void prod(SymbolicContext& ctx) { reduce_arith(ctx, "ReduceProd"); }

// nansum/nanmean(self, dim=None, keepdim=False, *, dtype=None): NaN counts as absent.
void nan_reduce(SymbolicContext& ctx, bool is_mean) {
  const ir::DType t = ctx.out_dtype(), c = sum_dtype(t);
  ir::Value* x = ctx.in_as(0, c);
  const auto axes = reduce_axes(ctx, 1);
  const bool keep = opt_bool(ctx, 2);
  if (!ir::is_floating(t)) {
    ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceSum", x, axes, keep), t));
    return;
  }
  ir::Value* nan = ctx.op("IsNaN", {x});
  ir::Value* zero = ctx.const_scalar(c, 0.0);
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Where", {nan, zero, x}), axes, keep);
  if (is_mean) {
    ir::Value* n = helpers::reduce(ctx, "ReduceSum", ctx.cast(ctx.op("Not", {nan}), c), axes, keep);
    s = ctx.op("Div", {s, n});
  }
  ctx.out(ctx.cast(s, t));
}
void nansum(SymbolicContext& ctx) { nan_reduce(ctx, false); }
void nanmean(SymbolicContext& ctx) { nan_reduce(ctx, true); }

// amax/amin(self, dim=[], keepdim=False)
void amax_amin(SymbolicContext& ctx, const char* op) {
  ctx.out(reduce_any_dtype(ctx, op, ctx.in(0), reduce_axes(ctx, 1), opt_bool(ctx, 2), ctx.dtype(0)));
}
void amax(SymbolicContext& ctx) { amax_amin(ctx, "ReduceMax"); }
void amin(SymbolicContext& ctx) { amax_amin(ctx, "ReduceMin"); }

// Elementwise max/min (max.other): ONNX Max/Min take integers from opset 12
// (ONNX Runtime's not 16-bit ones); before, Greater/Less and Where.
template <int Opset>
ir::Value* binary_max_min(SymbolicContext& ctx, bool is_max) {
  const ir::DType t = ctx.out_dtype();
  auto in = helpers::inputs_as(ctx, {0, 1}, t);
  if (t == ir::DType::Bool) return ctx.op(is_max ? "Or" : "And", in);
  if (ir::is_floating(t) || (Opset >= 12 && t != ir::DType::Int16)) return ctx.op(is_max ? "Max" : "Min", in);
  // Where of int32 (ONNX Runtime has no Where for 8/16-bit integers but uint8).
  const ir::DType c = t == ir::DType::Int64 || t == ir::DType::UInt8 ? t : ir::DType::Int32;
  for (auto& v : in) v = ctx.cast(v, c);
  ir::Value* pick = ctx.op(is_max ? "Greater" : "Less", in);
  return ctx.cast(ctx.op("Where", {pick, in[0], in[1]}), t);
}

// ArgMax/ArgMin over `axis` of x (dtype t), first occurrence as PyTorch,
// which counts NaN as the extreme value.
ir::Value* arg_reduce_axis(SymbolicContext& ctx, const char* op, ir::Value* x, ir::DType t, int64_t axis, bool keep) {
  const ir::Attributes attrs{{"axis", axis}, {"keepdims", int64_t{keep}}};
  if (!minmax_native(t)) x = ctx.cast(x, ir::DType::Int32);
  ir::Value* r = ctx.op(op, {x}, attrs);
  if (!ir::is_floating(t)) return r;
  ir::Value* nan = ctx.cast(ctx.op("IsNaN", {x}), ir::DType::Int32);
  ir::Value* first_nan = ctx.op("ArgMax", {nan}, attrs);
  ir::Value* has_nan = ctx.cast(helpers::reduce(ctx, "ReduceMax", nan, {axis}, keep), ir::DType::Bool);
  return ctx.op("Where", {has_nan, first_nan, r});
}

// max/min: (self) -> all; (self, other) -> elementwise; (self, dim, keepdim) -> (values, indices)
template <int Opset>
void max_min(SymbolicContext& ctx, bool is_max) {
  const char* red = is_max ? "ReduceMax" : "ReduceMin";
  if (ctx.num_args() == 1) {
    ctx.out(reduce_any_dtype(ctx, red, ctx.in(0), all_axes(ctx), false, ctx.dtype(0)));
    return;
  }
  if (ctx.num_args() == 2 && ctx.arg(1).is_tensor()) {
    ctx.out(binary_max_min<Opset>(ctx, is_max));
    return;
  }
  const int64_t rank = ctx.rank(0);
  const bool keep = opt_bool(ctx, 2);
  ir::Value* x = ctx.in(0);
  if (rank == 0) {
    ctx.out(x, 0);
    ctx.out(ctx.const_int(0), 1);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(reduce_any_dtype(ctx, red, x, {dim}, keep, ctx.dtype(0)), 0);
  ctx.out(arg_reduce_axis(ctx, is_max ? "ArgMax" : "ArgMin", x, ctx.dtype(0), dim, keep), 1);
}

template <int Opset>
void max(SymbolicContext& ctx) {
  max_min<Opset>(ctx, true);
}
template <int Opset>
void min(SymbolicContext& ctx) {
  max_min<Opset>(ctx, false);
}

// argmax/argmin(self, dim=None, keepdim=False)
void arg_reduce(SymbolicContext& ctx, const char* op) {
  ir::Value* x = ctx.in(0);
  const ir::DType t = ctx.dtype(0);
  const int64_t rank = ctx.rank(0);
  const bool keep = opt_bool(ctx, 2);
  if (ctx.num_args() < 2 || ctx.none(1)) {  // over all elements
    ir::Value* r = arg_reduce_axis(ctx, op, helpers::reshape(ctx, x, {-1}), t, 0, false);
    if (keep && rank > 0) r = helpers::reshape(ctx, r, std::vector<int64_t>(static_cast<size_t>(rank), 1));
    ctx.out(r);
    return;
  }
  if (rank == 0) {
    ctx.out(ctx.const_int(0));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(arg_reduce_axis(ctx, op, x, t, dim, keep));
}
void argmax(SymbolicContext& ctx) { arg_reduce(ctx, "ArgMax"); }
void argmin(SymbolicContext& ctx) { arg_reduce(ctx, "ArgMin"); }

// x != 0 as int32 0/1 (a cast to bool is x != 0 for every dtype, NaN included).
ir::Value* nonzero_int(SymbolicContext& ctx, ir::Value* x) {
  return ctx.cast(ctx.cast(x, ir::DType::Bool), ir::DType::Int32);
}

// any/all(self) | (self, dim, keepdim): the result is bool (uint8 for uint8 inputs).
void any_all(SymbolicContext& ctx, const char* op) {
  ir::Value* x = nonzero_int(ctx, ctx.in(0));
  ir::Value* r;
  if (ctx.rank(0) == 0)
    r = x;
  else if (ctx.num_args() == 1)
    r = helpers::reduce(ctx, op, x, all_axes(ctx), false);
  else
    r = helpers::reduce(ctx, op, x, reduce_axes(ctx, 1), opt_bool(ctx, 2));
  ctx.out(ctx.cast(ctx.cast(r, ir::DType::Bool), ctx.out_dtype()));
}
void any(SymbolicContext& ctx) { any_all(ctx, "ReduceMax"); }
void all(SymbolicContext& ctx) { any_all(ctx, "ReduceMin"); }

// count_nonzero(self, dim=None) | (self, int[] dim) -> int64
void count_nonzero(SymbolicContext& ctx) {
  ir::Value* x = ctx.cast(nonzero_int(ctx, ctx.in(0)), ir::DType::Int64);
  if (ctx.rank(0) == 0) {
    ctx.out(x);
    return;
  }
  ctx.out(helpers::reduce(ctx, "ReduceSum", x, reduce_axes(ctx, 1), false));
}

// Number of reduced elements as a value of dtype t (folded when static).
ir::Value* reduced_count(SymbolicContext& ctx, ir::Value* x, const std::vector<int64_t>& axes, ir::DType t) {
  if (axes.empty()) return ctx.const_scalar(t, 1.0);
  ir::Value* dims = ctx.op("Gather", {ctx.op("Shape", {x}), ctx.const_ints(axes)}, {{"axis", int64_t{0}}});
  return ctx.cast(helpers::reduce(ctx, "ReduceProd", dims, {0}, false), t);
}

// var/std: (self, unbiased) | (self, dim, unbiased, keepdim) | (self, dim, *, correction, keepdim)
ir::Value* variance(SymbolicContext& ctx, ir::Value* x, std::vector<int64_t>& axes, bool& keep) {
  double correction = 1.0;
  keep = false;
  if (ctx.num_args() == 2) {
    axes = all_axes(ctx);
    correction = ctx.b(1) ? 1.0 : 0.0;
  } else {
    axes = reduce_axes(ctx, 1);
    const Arg& c = ctx.arg(2);
    if (c.kind == Arg::Kind::Bool) correction = c.b ? 1.0 : 0.0;
    else if (!c.is_none()) correction = ctx.f(2);
    keep = opt_bool(ctx, 3);
  }
  const ir::DType t = x->dtype();
  if (!ir::is_floating(t)) ctx.fail("std/var of an integer tensor is not supported (as in PyTorch)");
  ir::Value* mean = helpers::reduce(ctx, "ReduceMean", x, axes, true);
  ir::Value* d = ctx.op("Sub", {x, mean});
  ir::Value* ss = helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {d, d}), axes, keep);
  ir::Value* n = reduced_count(ctx, x, axes, t);
  ir::Value* denom = correction == 0.0 ? n : ctx.op("Sub", {n, ctx.const_scalar(t, correction)});
  // PyTorch clamps the divisor at 0: N <= correction gives inf/nan.
  denom = ctx.op("Max", {denom, ctx.const_scalar(t, 0.0)});
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

// logsumexp(self, dim, keepdim): max + log(sum(exp(x - max))), stable for
// large inputs (ONNX ReduceLogSumExp is not); integers are promoted to float.
void logsumexp(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  ir::Value* x = ctx.in_as(0, t);
  if (ctx.rank(0) == 0) {
    ctx.out(x);
    return;
  }
  const auto axes = reduce_axes(ctx, 1);
  const bool keep = opt_bool(ctx, 2);
  ir::Value* m = helpers::reduce(ctx, "ReduceMax", x, axes, true);
  // An infinite max (all -inf, or +inf present) must not turn into nan.
  ir::Value* inf = ctx.const_scalar(t, std::numeric_limits<double>::infinity());
  ir::Value* finite = ctx.op("Less", {ctx.op("Abs", {m}), inf});
  m = ctx.op("Where", {finite, m, ctx.const_scalar(t, 0.0)});
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Exp", {ctx.op("Sub", {x, m})}), axes, keep);
  ir::Value* mk = keep ? m : helpers::squeeze(ctx, m, axes);
  ctx.out(ctx.op("Add", {ctx.op("Log", {s}), mk}));
}

// The p-norm over axes: p = 1, 2, inf, -inf, 0 or general.
ir::Value* p_norm(SymbolicContext& ctx, ir::Value* x, double p, const std::vector<int64_t>& axes, bool keep) {
  const ir::DType t = x->dtype();
  if (p == 1.0) return helpers::reduce(ctx, "ReduceL1", x, axes, keep);
  if (p == 2.0) return helpers::reduce(ctx, "ReduceL2", x, axes, keep);
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.op("Abs", {x}), axes, keep);
  if (p == 0.0) return helpers::reduce(ctx, "ReduceSum", ctx.cast(ctx.cast(x, ir::DType::Bool), t), axes, keep);
  ir::Value* s =
      helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {ctx.op("Abs", {x}), ctx.const_scalar(t, p)}), axes, keep);
  return ctx.op("Pow", {s, ctx.const_scalar(t, 1.0 / p)});
}

// norm(self, p=2) | (self, p, dtype) | (self, p, dim, keepdim[, dtype])
void norm(SymbolicContext& ctx) {
  ir::Value* x = ctx.in_as(0, ctx.out_dtype());
  const double p = ctx.num_args() > 1 && !ctx.none(1) ? ctx.f(1) : 2.0;
  const bool with_dim = ctx.num_args() > 3 && ctx.arg(2).is_list();
  const std::vector<int64_t> axes = with_dim ? reduce_axes(ctx, 2) : all_axes(ctx);
  const bool keep = with_dim && ctx.b(3);
  if (ctx.rank(0) == 0) {
    ctx.out(p == 0.0 ? ctx.cast(ctx.cast(x, ir::DType::Bool), ctx.out_dtype()) : ctx.op("Abs", {x}));
    return;
  }
  ctx.out(p_norm(ctx, x, p, axes, keep));
}

// frobenius_norm(self[, dim, keepdim])
void frobenius_norm(SymbolicContext& ctx) {
  const std::vector<int64_t> axes = ctx.num_args() > 1 ? reduce_axes(ctx, 1) : all_axes(ctx);
  ir::Value* x = ctx.in(0);
  if (ctx.rank(0) == 0) {
    ctx.out(ctx.op("Abs", {x}));
    return;
  }
  ctx.out(helpers::reduce(ctx, "ReduceL2", x, axes, opt_bool(ctx, 2)));
}

// linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None)
void linalg_vector_norm(SymbolicContext& ctx) {
  ir::Value* x = ctx.in_as(0, ctx.out_dtype());
  const double p = ctx.f(1);
  if (ctx.rank(0) == 0) {
    ctx.out(p == 0.0 ? ctx.cast(ctx.cast(x, ir::DType::Bool), ctx.out_dtype()) : ctx.op("Abs", {x}));
    return;
  }
  ctx.out(p_norm(ctx, x, p, reduce_axes(ctx, 2), opt_bool(ctx, 3)));
}

// cumsum(self, dim, dtype=None). ONNX Runtime's CumSum takes int32/int64/float/double.
void cumsum(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const ir::DType t = ctx.out_dtype();
  const ir::DType c = t == ir::DType::Float16 ? ir::DType::Float : sum_dtype(t);
  ir::Value* x = ctx.in_as(0, c);
  if (rank == 0) {
    ctx.out(ctx.cast(x, t));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ctx.out(ctx.cast(ctx.op("CumSum", {x, ctx.const_int(dim)}), t));
}

// sum_to_size(self, size): sums the leading dims away and the dims where
// size is 1 (kept), so the result has `size`.
void sum_to_size(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const std::vector<int64_t> size = ctx.is(1);
  const int64_t lead = rank - static_cast<int64_t>(size.size());
  if (lead < 0) ctx.fail("sum_to_size: the size has more dims than the tensor");
  const ir::DType t = ctx.out_dtype(), c = sum_dtype(t);
  ir::Value* x = ctx.in_as(0, c);
  std::vector<int64_t> kept;
  for (size_t i = 0; i < size.size(); ++i) {
    const int64_t d = lead + static_cast<int64_t>(i);
    if (size[i] == 1) kept.push_back(d);  // summing a dim of size 1 changes nothing
  }
  if (!kept.empty()) x = helpers::reduce(ctx, "ReduceSum", x, kept, true);
  if (lead > 0) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < lead; ++i) axes.push_back(i);
    x = helpers::reduce(ctx, "ReduceSum", x, axes, false);
  }
  ctx.out(ctx.cast(x, t));
}

}  // namespace

void register_reduction(Registry& r) {
  r.add("aten::sum", 9, sum);
  r.add("aten::mean", 9, mean);
  r.add("aten::prod", 9, prod);
  r.add("aten::nansum", 9, nansum);
  r.add("aten::nanmean", 9, nanmean);
  r.add("aten::amax", 9, amax);
  r.add("aten::amin", 9, amin);
  r.add("aten::max", 9, max<9>);
  r.add("aten::max", 12, max<12>);
  r.add("aten::min", 9, min<9>);
  r.add("aten::min", 12, min<12>);
  r.add("aten::argmax", 9, argmax);
  r.add("aten::argmin", 9, argmin);
  r.add("aten::any", 9, any);
  r.add("aten::all", 9, all);
  r.add("aten::count_nonzero", 9, count_nonzero);
  r.add("aten::var", 9, var);
  r.add("aten::std", 9, std_);
  r.add("aten::var_mean", 9, var_mean_);
  r.add("aten::std_mean", 9, std_mean);
  r.add("aten::logsumexp", 9, logsumexp);
  r.add("aten::norm", 9, norm);
  r.add("aten::frobenius_norm", 9, frobenius_norm);
  r.add("aten::linalg_vector_norm", 9, linalg_vector_norm);
  r.add("aten::cumsum", 11, cumsum);
  r.add("aten::sum_to_size", 9, sum_to_size);
}

}  // namespace torch2onnx::symbolics
