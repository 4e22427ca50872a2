// Scans and cumulative operators beyond CumSum: cumprod, logcumsumexp,
// cummax/cummin (Loops over the scanned axis, helpers::loop), diff,
// trapezoid/trapz, cumulative_trapezoid and gradient (slices and arithmetic).
#include <functional>
#include <limits>
#include <string>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

// x[start:end] along dim (constant bounds, negative counted from the end).
Value* sl(SymbolicContext& ctx, Value* x, int64_t dim, int64_t start, int64_t end) {
  return helpers::slice(ctx, x, {dim}, {start}, {end});
}

// The permutation that moves axis 0 (a Loop's stacked scan axis) to `dim`.
std::vector<int64_t> scan_axis_to(int64_t dim, int64_t rank) {
  std::vector<int64_t> perm;
  for (int64_t k = 1; k <= dim; ++k) perm.push_back(k);
  perm.push_back(0);
  for (int64_t k = dim + 1; k < rank; ++k) perm.push_back(k);
  return perm;
}

// A floating dtype ONNX Runtime computes in: float16/bfloat16 go through float.
DType float_compute(DType t) { return t == DType::Double ? DType::Double : DType::Float; }

// log(exp(a) + exp(b)), -inf when both are -inf.
Value* logaddexp(SymbolicContext& ctx, Value* a, Value* b, ir::DType t) {
  Value* m = ctx.op("Max", {a, b});
  Value* d = ctx.op("Neg", {ctx.op("Abs", {ctx.op("Sub", {a, b})})});
  Value* sum = ctx.op("Add", {m, ctx.op("Log", {ctx.op("Add", {ctx.const_scalar(t, 1.0), ctx.op("Exp", {d})})})});
  Value* both_neg_inf = helpers::equal(ctx, m, ctx.const_scalar(t, -std::numeric_limits<double>::infinity()));
  return ctx.op("Where", {both_neg_inf, m, sum});
}

// A running fold along dim: a Loop over dim carrying the running value (its
// start `init`, broadcast to a slice) and stacking each step's value, moved
// back to dim. Empty dims work (no Gather of element 0).
Value* running(SymbolicContext& ctx, Value* x, int64_t dim, int64_t rank, Value* init,
               const std::function<Value*(SymbolicContext&, Value* acc, Value* xi)>& step) {
  std::vector<int64_t> others;
  for (int64_t k = 0; k < rank; ++k)
    if (k != dim) others.push_back(k);
  Value* shape = ctx.op("Gather", {ctx.op("Shape", {x}), ctx.const_ints(others)}, {{"axis", int64_t{0}}});
  Value* start = ctx.op("Expand", {init, shape});
  Value* n = helpers::dim_size(ctx, x, dim);
  auto outs = helpers::loop(ctx, n, {start},
                            [&](SymbolicContext& b, Value* i, const std::vector<Value*>& c) -> std::vector<Value*> {
                              Value* next = step(b, c[0], b.op("Gather", {x, i}, {{"axis", dim}}));
                              return {next, next};
                            },
                            1);
  // ONNX Runtime stacks zero iterations as shape (0): reshape to (n, others...),
  // a size 0 meaning 0 (allowzero, opset 14+; before, n = 0 becomes -1)
  Value* lead = helpers::reshape(ctx, n, {1});
  ir::Attributes zero;
  if (ctx.opset() >= 14) zero.emplace_back("allowzero", int64_t{1});
  else lead = ctx.op("Where", {ctx.op("Equal", {lead, ctx.const_ints({0})}), ctx.const_ints({-1}), lead});
  Value* stacked = ctx.op("Reshape", {outs[1], ctx.op("Concat", {lead, shape}, {{"axis", int64_t{0}}})}, std::move(zero));
  return helpers::transpose(ctx, stacked, scan_axis_to(dim, rank));
}

// aten::logcumsumexp(self, dim): the running log(exp(acc) + exp(x)) from -inf.
void logcumsumexp(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) return ctx.out(x);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const ir::DType t = ctx.dtype(0);
  Value* init = ctx.const_scalar(t, -std::numeric_limits<double>::infinity());
  ctx.out(running(ctx, x, dim, rank, init,
                  [&](SymbolicContext& b, Value* acc, Value* xi) { return logaddexp(b, acc, xi, t); }));
}

// aten::cumprod(self, dim, dtype=None): the running product, multiplied in
// order as PyTorch does (the same rounding; NaN and inf times 0 give NaN;
// integers wrap as in PyTorch). 8/16-bit integers and bool multiply in int64
// (PyTorch promotes them to int64 unless dtype says otherwise). `product`
// multiplies x (of that compute dtype) along dim; a 0-d self is its own product.
template <typename Product>
void cumprod_with(SymbolicContext& ctx, Product product) {
  const ir::DType t = ctx.out_dtype();
  const int64_t rank = ctx.rank(0);
  if (rank == 0) return ctx.out(ctx.in_as(0, t));
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const DType c = ir::is_floating(t) ? float_compute(t) : (t == DType::Int32 ? DType::Int32 : DType::Int64);
  ctx.out(ctx.cast(product(ctx.cast(ctx.in_as(0, t), c), dim, rank, c), t));
}

void cumprod(SymbolicContext& ctx) {
  cumprod_with(ctx, [&](Value* x, int64_t dim, int64_t rank, DType c) {
    return running(ctx, x, dim, rank, ctx.const_scalar(c, 1.0),
                   [](SymbolicContext& b, Value* acc, Value* xi) { return b.op("Mul", {acc, xi}); });
  });
}

// Opset 26: one CumProd node (ONNX Runtime multiplies in order, as PyTorch).
void cumprod_26(SymbolicContext& ctx) {
  cumprod_with(ctx, [&](Value* x, int64_t dim, int64_t, DType) {
    return ctx.op("CumProd", {x, ctx.const_int(dim)});
  });
}

// aten::cummax / aten::cummin(self, dim) -> (values, indices). A Loop over dim
// carries the running extreme and its index, PyTorch's rule: x[i] replaces it
// when x[i] is NaN or (the running value is not NaN and x[i] >= it (cummax) /
// <= it (cummin)), so ties take the last index and NaN sticks, its index
// moving to each later NaN. The start value is -inf/+inf (the dtype's
// lowest/highest integer), which every first element replaces, so an empty
// dim needs no Gather of element 0.
void cumextreme(SymbolicContext& ctx, bool is_max) {
  const DType t = ctx.dtype(0);
  const int64_t rank = ctx.rank(0);
  Value* x = ctx.in(0);
  if (rank == 0) {
    ctx.out(x, 0);
    ctx.out(ctx.const_int(0), 1);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const bool fl = ir::is_floating(t);
  // ONNX Runtime compares float, double, int32 and int64: others widen (exactly).
  const DType c = fl ? float_compute(t) : (t == DType::Int32 ? DType::Int32 : DType::Int64);
  Value* xc = ctx.cast(x, c);
  std::vector<int64_t> others;
  for (int64_t k = 0; k < rank; ++k)
    if (k != dim) others.push_back(k);
  Value* shape = ctx.op("Gather", {ctx.op("Shape", {xc}), ctx.const_ints(others)}, {{"axis", int64_t{0}}});
  Value* start;
  if (fl) {
    start = ctx.const_scalar(c, is_max ? -std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::infinity());
  } else if (c == DType::Int32) {
    start = ctx.constant(ir::Tensor::scalar_int(c, is_max ? std::numeric_limits<int32_t>::min()
                                                          : std::numeric_limits<int32_t>::max()));
  } else {
    start = ctx.constant(ir::Tensor::scalar_int(c, is_max ? std::numeric_limits<int64_t>::min()
                                                          : std::numeric_limits<int64_t>::max()));
  }
  Value* v0 = ctx.op("Expand", {start, shape});
  Value* i0 = ctx.op("Expand", {ctx.const_int(0), shape});
  auto outs = helpers::loop(
      ctx, helpers::dim_size(ctx, xc, dim), {v0, i0},
      [&](SymbolicContext& b, Value* i, const std::vector<Value*>& cur) -> std::vector<Value*> {
        Value* xi = b.op("Gather", {xc, i}, {{"axis", dim}});
        // x >= cur is not (x < cur); x <= cur is not (x > cur)
        Value* take = b.op("Not", {b.op(is_max ? "Less" : "Greater", {xi, cur[0]})});
        if (fl) {
          take = b.op("And", {take, b.op("Not", {b.op("IsNaN", {cur[0]})})});
          take = b.op("Or", {take, b.op("IsNaN", {xi})});
        }
        Value* v = b.op("Where", {take, xi, cur[0]});
        Value* idx = b.op("Where", {take, i, cur[1]});
        return {v, idx, v, idx};
      },
      2);
  // ONNX Runtime stacks zero iterations as shape (0): reshape to (n, others...)
  Value* stacked = ctx.op("Concat", {helpers::reshape(ctx, helpers::dim_size(ctx, xc, dim), {1}), shape},
                          {{"axis", int64_t{0}}});
  const auto perm = scan_axis_to(dim, rank);
  ctx.out(ctx.cast(helpers::transpose(ctx, ctx.op("Reshape", {outs[2], stacked}), perm), t), 0);
  ctx.out(helpers::transpose(ctx, ctx.op("Reshape", {outs[3], stacked}), perm), 1);
}

// aten::diff(self, n=1, dim=-1, prepend=None, append=None): prepend/append
// concatenated along dim, then n times x[1:] - x[:-1] (logical xor for bool);
// n past the length leaves an empty dim, as in PyTorch.
void diff(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("diff needs a tensor with at least one dimension");
  const int64_t n = ctx.none(1) ? 1 : ctx.i(1);
  if (n < 0) ctx.fail("diff: order must be non-negative");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.none(2) ? -1 : ctx.i(2), rank);
  DType t = ctx.out_dtype();
  if (t == DType::Undefined) t = ctx.dtype(0);
  const bool is_bool = t == DType::Bool;
  // ONNX Runtime subtracts float, double, int32 and int64; small ints wrap back on the cast.
  const DType c = is_bool ? t : ir::is_floating(t) ? float_compute(t) : (t == DType::Int64 ? t : DType::Int32);
  std::vector<Value*> parts;
  if (!ctx.none(3)) parts.push_back(ctx.cast(ctx.in(3), c));
  parts.push_back(ctx.cast(ctx.in(0), c));
  if (!ctx.none(4)) parts.push_back(ctx.cast(ctx.in(4), c));
  Value* x = parts.size() == 1 ? parts[0] : ctx.op("Concat", parts, {{"axis", dim}});
  for (int64_t k = 0; k < n; ++k) {
    Value* hi = sl(ctx, x, dim, 1, kEnd);
    Value* lo = sl(ctx, x, dim, 0, -1);
    x = ctx.op(is_bool ? "Xor" : "Sub", {hi, lo});
  }
  ctx.out(ctx.cast(x, t));
}

// The trapezoid rule's arguments: y, the spacing (a scalar, or the
// differences of the sample points x along dim) and dim.
struct Trapezoid {
  Value* y = nullptr;      // y in the compute dtype
  Value* dx = nullptr;     // spacing: 0-d, or broadcastable to y[1:]
  bool dx_scalar = true;
  int64_t dim = 0;
  DType c = DType::Float;  // compute dtype
  DType t = DType::Float;  // output dtype
};

// aten::trapezoid/trapz/cumulative_trapezoid .x(y, x, dim) and .dx(y, dx=1, dim).
Trapezoid trapezoid_args(SymbolicContext& ctx) {
  Trapezoid a;
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("trapezoid needs y with at least one dimension");
  a.t = ctx.out_dtype();
  if (a.t == DType::Undefined || !ir::is_floating(a.t)) a.t = DType::Float;
  a.c = float_compute(a.t);
  const bool x_form = ctx.arg(1).is_tensor();
  a.dim = helpers::normalize_dim(ctx, ctx.none(2) ? -1 : ctx.i(2), rank);
  a.y = ctx.cast(ctx.in(0), a.c);
  if (!x_form) {
    a.dx = ctx.none(1) ? ctx.const_scalar(a.c, 1.0) : ctx.scalar_value(1, a.c);
    return a;
  }
  Value* x = ctx.cast(ctx.in(1), a.c);
  const int64_t xr = ctx.rank(1);
  if (xr == 1) {  // 1-D sample points lie along dim
    std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
    shape[static_cast<size_t>(a.dim)] = -1;
    x = helpers::reshape(ctx, x, shape);
  } else if (xr < rank) {  // leading 1s, as PyTorch views x
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < rank - xr; ++k) axes.push_back(k);
    x = helpers::unsqueeze(ctx, x, axes);
  } else if (xr > rank) {
    ctx.fail("trapezoid: x has more dimensions than y");
  }
  a.dx = ctx.op("Sub", {sl(ctx, x, a.dim, 1, kEnd), sl(ctx, x, a.dim, 0, -1)});
  a.dx_scalar = false;
  return a;
}

// (y[1:] + y[:-1]) * dx / 2 along dim: the area of each trapezoid.
Value* trapezoids(SymbolicContext& ctx, const Trapezoid& a) {
  Value* s = ctx.op("Add", {sl(ctx, a.y, a.dim, 1, kEnd), sl(ctx, a.y, a.dim, 0, -1)});
  return ctx.op("Div", {ctx.op("Mul", {s, a.dx}), ctx.const_scalar(a.c, 2.0)});
}

// aten::trapezoid / aten::trapz: the sum of the trapezoids (0 for an empty dim).
void trapezoid(SymbolicContext& ctx) {
  Trapezoid a = trapezoid_args(ctx);
  ctx.out(ctx.cast(helpers::reduce(ctx, "ReduceSum", trapezoids(ctx, a), {a.dim}, false), a.t));
}

// aten::cumulative_trapezoid: their running sum (CumSum, opset 11).
void cumulative_trapezoid(SymbolicContext& ctx) {
  Trapezoid a = trapezoid_args(ctx);
  ctx.out(ctx.cast(ctx.op("CumSum", {trapezoids(ctx, a), ctx.const_int(a.dim)}), a.t));
}

int find_arg(const SymbolicContext& ctx, const std::string& name) {
  for (size_t k = 0; k < ctx.num_args(); ++k)
    if (ctx.arg(k).name == name) return static_cast<int>(k);
  return -1;
}

// aten::gradient (every overload: spacing None / Scalar / Scalar[] / Tensor[],
// dim None / int / int[], edge_order 1 or 2) -> Tensor[]: PyTorch's
// second-order central differences inside, one-sided differences of order
// edge_order at both ends; with coordinate tensors, the non-uniform formulas
// (numpy's), coefficient for coefficient as PyTorch writes them.
void gradient(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  int sp = find_arg(ctx, "spacing"), di = find_arg(ctx, "dim"), eo = find_arg(ctx, "edge_order");
  if (di < 0 || eo < 0) {  // positional: (self, dim, edge_order) or (self, spacing, dim, edge_order)
    if (ctx.num_args() == 3) {
      sp = -1, di = 1, eo = 2;
    } else {
      sp = 1, di = 2, eo = 3;
    }
  }
  const int64_t edge_order = ctx.none(static_cast<size_t>(eo)) ? 1 : ctx.i(static_cast<size_t>(eo));
  if (edge_order != 1 && edge_order != 2) ctx.fail("gradient: edge_order must be 1 or 2");
  std::vector<int64_t> dims;
  if (ctx.none(static_cast<size_t>(di))) {
    for (int64_t k = 0; k < rank; ++k) dims.push_back(k);
  } else {
    dims = helpers::normalize_dims(ctx, ctx.is(static_cast<size_t>(di)), rank);
  }
  const DType in_t = ctx.dtype(0);
  DType t = ir::is_floating(in_t) ? in_t : DType::Float;
  // spacing: scalars (one for all dims, or one per dim) or 1-D coordinates per dim
  const bool has_sp = sp >= 0 && !ctx.none(static_cast<size_t>(sp));
  const Arg* spa = has_sp ? &ctx.arg(static_cast<size_t>(sp)) : nullptr;
  const bool coords = spa && spa->is_list() && !spa->elements.empty() && spa->elements[0].is_tensor();
  if (spa && spa->is_list() && spa->elements.size() != dims.size())
    ctx.fail("gradient: spacing must have one entry per differentiated dim");
  if (coords) {
    for (const Arg& e : spa->elements)
      if (ir::is_floating(e.dtype)) t = ir::promote_types(t, e.dtype);
  }
  const DType c = float_compute(t);
  Value* f = ctx.cast(ctx.in(0), c);
  const auto& sizes = ctx.sizes(0);
  std::vector<Value*> results;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = dims[k];
    if (sizes[static_cast<size_t>(d)] < edge_order + 1)
      ctx.fail("gradient: each differentiated dim needs at least edge_order + 1 samples");
    auto S = [&](int64_t s, int64_t e) { return sl(ctx, f, d, s, e); };
    auto sc = [&](double v) { return ctx.const_scalar(c, v); };
    auto mul = [&](Value* a, Value* b) { return ctx.op("Mul", {a, b}); };
    auto add = [&](Value* a, Value* b) { return ctx.op("Add", {a, b}); };
    auto sub = [&](Value* a, Value* b) { return ctx.op("Sub", {a, b}); };
    auto div = [&](Value* a, Value* b) { return ctx.op("Div", {a, b}); };
    Value *center, *prepend, *append;
    if (!coords) {
      Value* h;
      if (!spa) {
        h = sc(1.0);
      } else if (spa->is_list()) {
        h = ctx.cast(ctx.elem(static_cast<size_t>(sp), k), c);
      } else {
        h = ctx.scalar_value(static_cast<size_t>(sp), c);
      }
      center = div(div(sub(S(2, kEnd), S(0, -2)), h), sc(2.0));
      if (edge_order == 1) {
        prepend = div(sub(S(1, 2), S(0, 1)), h);
        append = div(sub(S(-1, kEnd), S(-2, -1)), h);
      } else {
        prepend = div(sub(add(mul(S(0, 1), sc(-1.5)), mul(S(1, 2), sc(2.0))), mul(S(2, 3), sc(0.5))), h);
        append = div(add(add(mul(S(-3, -2), sc(0.5)), mul(S(-2, -1), sc(-2.0))), mul(S(-1, kEnd), sc(1.5))), h);
      }
    } else {
      Value* x = ctx.cast(ctx.elem(static_cast<size_t>(sp), k), c);
      Value* dx = sub(sl(ctx, x, 0, 1, kEnd), sl(ctx, x, 0, 0, -1));
      std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
      shape[static_cast<size_t>(d)] = -1;
      auto along = [&](Value* v) { return helpers::reshape(ctx, v, shape); };
      Value* dx1 = sl(ctx, dx, 0, 0, -1);
      Value* dx2 = sl(ctx, dx, 0, 1, kEnd);
      Value* a = along(div(ctx.op("Neg", {dx2}), mul(dx1, add(dx1, dx2))));
      Value* b = along(div(sub(dx2, dx1), mul(dx1, dx2)));
      Value* cc = along(div(dx1, mul(dx2, add(dx1, dx2))));
      center = add(add(mul(a, S(0, -2)), mul(b, S(1, -1))), mul(cc, S(2, kEnd)));
      auto at = [&](int64_t i) { return ctx.op("Gather", {dx, ctx.const_int(i)}, {{"axis", int64_t{0}}}); };
      Value *d0 = at(0), *dl = at(-1);
      if (edge_order == 1) {
        prepend = div(sub(S(1, 2), S(0, 1)), d0);
        append = div(sub(S(-1, kEnd), S(-2, -1)), dl);
      } else {
        Value *d1 = at(1), *dm = at(-2);
        Value* pa = div(ctx.op("Neg", {add(mul(sc(2.0), d0), d1)}), mul(d0, add(d0, d1)));
        Value* pb = div(add(d0, d1), mul(d0, d1));
        Value* pc = div(ctx.op("Neg", {d0}), mul(d1, add(d0, d1)));
        prepend = add(add(mul(pa, S(0, 1)), mul(pb, S(1, 2))), mul(pc, S(2, 3)));
        Value* aa = div(dl, mul(dm, add(dl, dm)));
        Value* ab = div(ctx.op("Neg", {add(dl, dm)}), mul(dl, dm));
        Value* ac = div(add(mul(sc(2.0), dl), dm), mul(dl, add(dl, dm)));
        append = add(add(mul(aa, S(-3, -2)), mul(ab, S(-2, -1))), mul(ac, S(-1, kEnd)));
      }
    }
    results.push_back(ctx.cast(ctx.op("Concat", {prepend, center, append}, {{"axis", d}}), t));
  }
  ctx.out_list(results);
}

}  // namespace

void register_scan(Registry& r) {
  r.add("aten::cumprod", 9, cumprod);
  r.add("aten::cumprod", 26, cumprod_26);
  r.add("aten::logcumsumexp", 9, logcumsumexp);
  r.add("aten::cummax", 9, [](SymbolicContext& c) { cumextreme(c, true); });
  r.add("aten::cummin", 9, [](SymbolicContext& c) { cumextreme(c, false); });
  r.add("aten::diff", 9, diff);
  r.add("aten::trapezoid", 9, trapezoid);
  r.add("aten::trapz", 9, trapezoid);
  r.add("aten::cumulative_trapezoid", 11, cumulative_trapezoid);
  r.add("aten::gradient", 9, gradient);
}

}  // namespace torch2onnx::symbolics
