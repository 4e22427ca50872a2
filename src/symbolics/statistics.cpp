// Statistics: cov, corrcoef (PyTorch's Correlation.cpp formulas), quantile /
// nanquantile (a sort by TopK, then PyTorch's rank arithmetic and lerp).
#ifndef T2O_TORCH_VERSION_NUM
#error "T2O_TORCH_VERSION_NUM is set by CMakeLists.txt for this file"
#endif
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Value* sc(SymbolicContext& ctx, DType t, double v) { return ctx.const_scalar(t, v); }

DType out_t(SymbolicContext& ctx) {
  DType t = ctx.out_dtype();
  return t == DType::Undefined ? DType::Float : t;
}

// torch.cov's [V, V] matrix (before the final squeeze) of x (dims: variables,
// observations; a 1-D x is one variable) in dtype t, as aten/native/Correlation.cpp:
// w = fweights * aweights, avg = sum(x * w) / sum(w), the norm factor
// sum(w) - correction * sum(w * aweights) / sum(w) (without aweights,
// sum(w) - correction), set to 0 when <= 0, c = (x - avg) @ ((x - avg) * w)^T / norm.
Value* cov_matrix(SymbolicContext& ctx, Value* x, int64_t rank, int64_t correction, Value* fw, Value* aw, DType t) {
  if (rank > 2) ctx.fail("cov takes a tensor of at most 2 dimensions");
  Value* in = rank < 2 ? helpers::reshape(ctx, x, {1, -1}) : x;
  Value* w = nullptr;
  if (fw) w = ctx.cast(fw, t);
  if (aw) aw = ctx.cast(aw, t);
  if (aw) w = w ? ctx.op("Mul", {w, aw}) : aw;
  Value* w_sum = w ? helpers::reduce(ctx, "ReduceSum", w, {0}, false)
                   : ctx.cast(helpers::dim_size(ctx, in, 1), t);
  Value* avg = ctx.op("Div", {helpers::reduce(ctx, "ReduceSum", w ? ctx.op("Mul", {in, w}) : in, {1}, true), w_sum});
  Value* corr = sc(ctx, t, static_cast<double>(correction));
  Value* norm;
  if (w && aw && correction != 0) {
    Value* waw = ctx.op("Div", {helpers::reduce(ctx, "ReduceSum", ctx.op("Mul", {w, aw}), {0}, false), w_sum});
    norm = ctx.op("Sub", {w_sum, ctx.op("Mul", {corr, waw})});
  } else {
    norm = ctx.op("Sub", {w_sum, corr});
  }
  norm = ctx.op("Max", {norm, sc(ctx, t, 0.0)});
  Value* xm = ctx.op("Sub", {in, avg});
  Value* rhs = helpers::transpose(ctx, w ? ctx.op("Mul", {xm, w}) : xm, {1, 0});
  return ctx.op("Div", {ctx.op("MatMul", {xm, rhs}), norm});
}

int64_t num_vars(SymbolicContext& ctx) { return ctx.rank(0) < 2 ? 1 : ctx.static_dim(0, 0); }

// aten::cov(self, correction, fweights, aweights)
void cov(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  Value* c = cov_matrix(ctx, ctx.in_as(0, t), ctx.rank(0), ctx.i(1), ctx.opt_in(2), ctx.opt_in(3), t);
  ctx.out(num_vars(ctx) == 1 ? helpers::reshape(ctx, c, {}) : c);
}

// aten::corrcoef(self): cov / (stddev_i * stddev_j), clipped to [-1, 1]
// (NaNs kept); one variable gives c / c.
void corrcoef(SymbolicContext& ctx) {
  const DType t = out_t(ctx);
  Value* c = cov_matrix(ctx, ctx.in_as(0, t), ctx.rank(0), 1, nullptr, nullptr, t);
  const int64_t v = num_vars(ctx);
  if (v == 1) {
    c = helpers::reshape(ctx, c, {});
    return ctx.out(ctx.op("Div", {c, c}));
  }
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < v; ++i) pos.push_back(i * v + i);
  Value* d = ctx.op("Gather", {helpers::reshape(ctx, c, {-1}), ctx.const_ints(pos)}, {{"axis", int64_t{0}}});
  Value* sd = ctx.op("Sqrt", {d});
  c = ctx.op("Div", {c, helpers::unsqueeze(ctx, sd, {1})});
  c = ctx.op("Div", {c, helpers::unsqueeze(ctx, sd, {0})});
  Value* clipped = ctx.op("Min", {ctx.op("Max", {c, sc(ctx, t, -1.0)}), sc(ctx, t, 1.0)});
  ctx.out(ctx.op("Where", {ctx.op("IsNaN", {c}), c, clipped}));
}

// aten::quantile / nanquantile(self, q, dim, keepdim, interpolation), as
// aten/native/Sorting.cpp: the reduced dim moved last and sorted (NaNs
// replaced by +inf for TopK and accounted for by count), ranks = q * (n - 1)
// in double (nanquantile: n = the non-NaN count), rounded per interpolation (nearest:
// half to even), the values below/above gathered and lerped as at::lerp does.
// quantile gives NaN for a slice with a NaN; nanquantile for an all-NaN slice.
void quantile(SymbolicContext& ctx, bool ignore_nan) {
  const DType t = out_t(ctx);
  if (!ir::is_floating(t)) ctx.fail("quantile takes a floating point tensor");
  const std::string mode = ctx.none(4) ? std::string("linear") : ctx.s(4);
  if (mode != "linear" && mode != "lower" && mode != "higher" && mode != "midpoint" && mode != "nearest")
    ctx.fail("quantile interpolation '" + mode + "' is not one of linear, lower, higher, midpoint, nearest");
  const int64_t r = ctx.rank(0);
  const bool q_scalar = !ctx.arg(1).is_tensor() || ctx.rank(1) == 0;
  if (!q_scalar && ctx.rank(1) != 1) ctx.fail("quantile takes a 0-D or 1-D q");
  Value* q = helpers::reshape(ctx, ctx.in_as(1, t), {-1});  // [Q]
  const std::optional<int64_t> dim = ctx.opt_i(2);
  const bool keep = ctx.none(3) ? false : ctx.b(3);

  Value* x = ctx.in_as(0, t);
  int64_t d = 0;
  Value* xt;
  if (!dim || r == 0) {
    xt = helpers::reshape(ctx, x, {-1});
  } else {
    d = helpers::normalize_dim(ctx, *dim, r);
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < r; ++k)
      if (k != d) perm.push_back(k);
    perm.push_back(d);
    xt = helpers::transpose(ctx, x, perm);
  }
  const int64_t rt = (!dim || r == 0) ? 1 : r;  // rank of xt; the sorted dim is last
  const int64_t last = rt - 1;
  Value* n = helpers::dim_size(ctx, xt, last);
  Value* isnan = ctx.op("IsNaN", {xt});
  Value* filled = ctx.op("Where", {isnan, sc(ctx, t, kInf), xt});
  Value* sorted = ctx.op_n("TopK", {filled, helpers::unsqueeze(ctx, n, {0})}, 2,
                           {{"axis", last}, {"largest", int64_t{0}}, {"sorted", int64_t{1}}})[0];
  Value* nan_count = helpers::reduce(ctx, "ReduceSum", ctx.cast(isnan, t), {last}, true);  // [..., 1]
  // PyTorch 2.14 computes the ranks in double from q in the input's dtype
  // (0.6f * 5 is a little above 3, and 'higher' picks index 4); earlier
  // releases in the input's dtype (0.6f * 5 rounds to 3: index 3). The
  // lowering follows the LibTorch it is built on (T2O_TORCH_VERSION_NUM, set
  // by CMakeLists.txt for this file).
#if T2O_TORCH_VERSION_NUM >= 214
  const DType D = DType::Double;
#else
  const DType D = t;
#endif
  Value* count = ctx.cast(n, D);
  if (ignore_nan) count = ctx.op("Sub", {count, ctx.cast(nan_count, D)});
  Value* ranks = ctx.op("Mul", {ctx.cast(q, D), ctx.op("Sub", {count, sc(ctx, D, 1.0)})});  // [Q] or [..., Q]
  if (ignore_nan) ranks = ctx.op("Max", {ranks, sc(ctx, D, 0.0)});
  if (mode == "lower") ranks = ctx.op("Floor", {ranks});
  if (mode == "higher") ranks = ctx.op("Ceil", {ranks});
  if (mode == "nearest") ranks = helpers::round_half_even(ctx, ranks);

  // indices broadcast to sorted's leading dims and Q
  Value* idx_shape = ctx.op("Concat", {helpers::slice(ctx, ctx.op("Shape", {sorted}), {0}, {0}, {last}),
                                       ctx.op("Shape", {q})},
                            {{"axis", int64_t{0}}});
  auto gather = [&](Value* rk) {
    Value* i = ctx.op("Expand", {ctx.cast(rk, DType::Int64), idx_shape});
    return ctx.op("GatherElements", {sorted, i}, {{"axis", last}});
  };
  Value* below = ctx.op("Floor", {ranks});
  Value* res = gather(below);
  if (mode == "linear" || mode == "midpoint") {
    Value* above = gather(ctx.op("Ceil", {ranks}));
    Value* w = mode == "midpoint" ? sc(ctx, t, 0.5) : ctx.cast(ctx.op("Sub", {ranks, below}), t);
    Value* diff = ctx.op("Sub", {above, res});
    // at::lerp: weight < 0.5 ? self + weight * (end - self) : end - (end - self) * (1 - weight)
    Value* lo = ctx.op("Add", {res, ctx.op("Mul", {w, diff})});
    Value* hi = ctx.op("Sub", {above, ctx.op("Mul", {diff, ctx.op("Sub", {sc(ctx, t, 1.0), w})})});
    res = mode == "midpoint" ? hi : ctx.op("Where", {ctx.op("Less", {w, sc(ctx, t, 0.5)}), lo, hi});
  }
  // NaN where the slice has a NaN (quantile) or no number at all (nanquantile)
  Value* nan_rows = ignore_nan ? helpers::equal(ctx, count, sc(ctx, D, 0.0))
                               : ctx.op("Greater", {nan_count, sc(ctx, t, 0.0)});
  res = ctx.op("Where", {nan_rows, sc(ctx, t, kNaN), res});  // [..., Q]

  // Q first, then the kept dims
  std::vector<int64_t> perm{last};
  for (int64_t k = 0; k < last; ++k) perm.push_back(k);
  res = helpers::transpose(ctx, res, perm);  // [Q, ...]
  if (keep && r > 0) {
    if (!dim) {
      std::vector<int64_t> axes;
      for (int64_t k = 1; k <= r; ++k) axes.push_back(k);
      res = helpers::unsqueeze(ctx, res, axes);
    } else {
      res = helpers::unsqueeze(ctx, res, {d + 1});
    }
  }
  if (q_scalar) res = helpers::squeeze(ctx, res, {0});
  ctx.out(res);
}

}  // namespace

void register_statistics(Registry& r) {
  r.add("aten::cov", 9, cov);
  r.add("aten::corrcoef", 9, corrcoef);
  // TopK ascending and GatherElements start at opset 11
  r.add("aten::quantile", 11, [](SymbolicContext& ctx) { quantile(ctx, false); });
  r.add("aten::nanquantile", 11, [](SymbolicContext& ctx) { quantile(ctx, true); });
}

}  // namespace torch2onnx::symbolics
