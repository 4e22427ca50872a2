// Sorting and selection: sort, argsort, msort, topk, kthvalue, median,
// nanmedian, mode, unique (_unique, _unique2, unique_dim, unique_consecutive),
// bucketize, searchsorted.
//
// Everything that orders goes through TopK, whose form changed twice: k is an
// attribute before opset 10 and an input from 10; `largest`/`sorted` exist
// from 11 (before, the k smallest are the k largest of -x), and only floating
// types are accepted before 11. TopK breaks ties by the lower index, so the
// sorts are stable.
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// The TopK generation a declaration lowers to.
enum class Form { K_attr /* opset 9 */, K_input /* opset 10 */, Full /* opset 11 */ };

Value* set_dtype(Value* v, DType dt) {
  v->type().dtype = dt;
  return v;
}

struct TopKResult {
  Value* values;
  Value* indices;
};

// The k largest (or smallest) along `axis`, sorted. `k` is a 1-D int64 [1]
// value (k_static its example value, needed for the attribute form).
TopKResult top_k(SymbolicContext& ctx, Form form, Value* x, DType dt, int64_t axis, Value* k, int64_t k_static,
                 bool largest, bool sorted = true) {
  DType work = dt;
  if (form == Form::Full) {
    if (dt == DType::Float16 || dt == DType::BFloat16) work = DType::Float;
    else if (!ir::is_floating(dt) && dt != DType::Int32 && dt != DType::Int64) work = DType::Int32;
  } else if (dt != DType::Float && dt != DType::Double) {
    work = DType::Float;  // TopK takes only floating types before opset 11
  }
  Value* xw = ctx.cast(x, work);
  const bool negate = !largest && form != Form::Full;
  if (negate) xw = ctx.op("Neg", {xw});
  ir::Attributes attrs{{"axis", axis}};
  std::vector<Value*> ins{xw};
  if (form == Form::K_attr) attrs.emplace_back("k", k_static);
  else ins.push_back(k);
  if (form == Form::Full) {
    attrs.emplace_back("largest", int64_t{largest ? 1 : 0});
    attrs.emplace_back("sorted", int64_t{sorted ? 1 : 0});
  }
  auto outs = ctx.op_n("TopK", ins, 2, attrs);
  set_dtype(outs[1], DType::Int64);
  Value* vals = outs[0];
  if (negate) vals = ctx.op("Neg", {vals});
  return {ctx.cast(vals, dt), outs[1]};
}

// x.size(axis) as TopK's k: [n].
Value* full_k(SymbolicContext& ctx, Value* x, int64_t axis) {
  return helpers::unsqueeze(ctx, helpers::dim_size(ctx, x, axis), {0});
}

// ---------------------------------------------------------------- sort

// aten::sort(self, dim=-1, descending=False) / sort.stable(self, *, stable, dim=-1, descending=False)
// -> (values, indices); argsort the same -> indices.
// The size of dim `dim` of argument 0, for the attribute form of TopK (only
// it needs the size at export time).
int64_t static_k(SymbolicContext& ctx, Form form, int64_t dim) {
  return form == Form::K_attr ? ctx.static_dim(0, dim) : -1;
}

void sort(SymbolicContext& ctx, Form form, bool want_values) {
  const size_t off = ctx.num_args() >= 4 ? 1 : 0;  // the .stable overloads
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("sorting a 0-d tensor is not supported");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 1 + off ? ctx.i(1 + off) : -1, rank);
  const bool descending = ctx.num_args() > 2 + off && ctx.b(2 + off);
  auto r = top_k(ctx, form, x, ctx.dtype(0), dim, full_k(ctx, x, dim), static_k(ctx, form, dim), descending);
  if (want_values) {
    ctx.out(r.values, 0);
    ctx.out(r.indices, 1);
  } else {
    ctx.out(r.indices);
  }
}

// aten::msort(self): sort along dim 0, values only.
void msort(SymbolicContext& ctx, Form form) {
  Value* x = ctx.in(0);
  if (ctx.rank(0) == 0) ctx.fail("sorting a 0-d tensor is not supported");
  ctx.out(top_k(ctx, form, x, ctx.dtype(0), 0, full_k(ctx, x, 0), static_k(ctx, form, 0), false).values);
}

// An int argument as TopK's k ([1]), constant or computed.
Value* k_value(SymbolicContext& ctx, size_t idx) {
  if (ctx.constant(idx)) return ctx.const_ints({ctx.i(idx)});
  return helpers::unsqueeze(ctx, ctx.scalar_value(idx, DType::Int64), {0});
}

int64_t k_static(SymbolicContext& ctx, size_t idx, Form form) {
  if (ctx.constant(idx)) return ctx.i(idx);
  if (form == Form::K_attr) ctx.fail("k computed at run time needs opset 10 or later");
  return ctx.arg(idx).example ? static_cast<int64_t>(*ctx.arg(idx).example) : 0;
}

// aten::topk(self, k, dim=-1, largest=True, sorted=True) -> (values, indices)
void topk(SymbolicContext& ctx, Form form) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("topk of a 0-d tensor is not supported");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : -1, rank);
  const bool largest = ctx.num_args() <= 3 || ctx.b(3);
  const bool sorted = ctx.num_args() <= 4 || ctx.b(4);
  auto r = top_k(ctx, form, x, ctx.dtype(0), dim, k_value(ctx, 1), k_static(ctx, 1, form), largest, sorted);
  ctx.out(r.values, 0);
  ctx.out(r.indices, 1);
}

// Element `pos` (0-d int64) along `dim` of values and indices, keeping the dim or not.
void pick(SymbolicContext& ctx, TopKResult r, Value* pos, int64_t dim, bool keepdim) {
  Value* v = ctx.op("Gather", {r.values, pos}, {{"axis", dim}});
  Value* i = ctx.op("Gather", {r.indices, pos}, {{"axis", dim}});
  if (keepdim) {
    v = helpers::unsqueeze(ctx, v, {dim});
    i = helpers::unsqueeze(ctx, i, {dim});
  }
  ctx.out(v, 0);
  ctx.out(i, 1);
}

// aten::kthvalue(self, k, dim=-1, keepdim=False) -> (values, indices): the k-th smallest.
void kthvalue(SymbolicContext& ctx, Form form) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) ctx.fail("kthvalue of a 0-d tensor is not supported");
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 2 ? ctx.i(2) : -1, rank);
  const bool keepdim = ctx.num_args() > 3 && ctx.b(3);
  Value* k = k_value(ctx, 1);
  auto r = top_k(ctx, form, x, ctx.dtype(0), dim, k, k_static(ctx, 1, form), false);
  Value* pos = ctx.constant(1) ? ctx.const_int(ctx.i(1) - 1)
                               : ctx.op("Sub", {ctx.scalar_value(1, DType::Int64), ctx.const_int(1)});
  pick(ctx, r, pos, dim, keepdim);
}

// The lower median along `dim` of x (NaN-propagating like PyTorch: a row
// with a NaN gives NaN and the index of its first NaN).
TopKResult median_along(SymbolicContext& ctx, Form form, Value* x, DType dt, int64_t dim, int64_t n_static,
                        bool keepdim) {
  const bool fp = ir::is_floating(dt);
  if (form == Form::K_attr && n_static < 0)
    ctx.fail("the median along a dynamic dim needs opset 10 or later (TopK's k as an input)");
  Value* isnan = fp ? ctx.op("IsNaN", {x}) : nullptr;
  Value* xs = fp ? ctx.op("Where", {isnan, ctx.const_scalar(dt, std::numeric_limits<double>::infinity()), x}) : x;
  Value* n = helpers::dim_size(ctx, x, dim);
  auto r = top_k(ctx, form, xs, dt, dim, helpers::unsqueeze(ctx, n, {0}), n_static, false);
  Value* pos = form == Form::K_attr ? ctx.const_int((n_static - 1) / 2)
                                    : ctx.op("Div", {ctx.op("Sub", {n, ctx.const_int(1)}), ctx.const_int(2)});
  Value* v = ctx.op("Gather", {r.values, pos}, {{"axis", dim}});
  Value* i = ctx.op("Gather", {r.indices, pos}, {{"axis", dim}});
  if (fp) {
    Value* nanf = ctx.cast(isnan, DType::Float);
    Value* any = ctx.op("Greater", {helpers::reduce(ctx, "ReduceMax", nanf, {dim}, false), ctx.const_scalar(DType::Float, 0)});
    Value* first = ctx.op("ArgMax", {nanf}, {{"axis", dim}, {"keepdims", int64_t{0}}});
    v = ctx.op("Where", {any, ctx.const_scalar(dt, std::nan("")), v});
    i = ctx.op("Where", {any, first, i});
  }
  if (keepdim) {
    v = helpers::unsqueeze(ctx, v, {dim});
    i = helpers::unsqueeze(ctx, i, {dim});
  }
  return {v, i};
}

// The (nan)median forms: (self) -> values of all elements, and
// (self, dim, keepdim=False) -> (values, indices). along(x, dim, n, keepdim)
// computes them along `dim` of size n.
template <typename Along>
void median_forms(SymbolicContext& ctx, Along along) {
  Value* x = ctx.in(0);
  if (ctx.num_args() == 1) {
    int64_t numel = 1;  // (-1: dynamic; only opset 9's TopK needs it)
    for (int64_t d = 0; d < ctx.rank(0); ++d) numel = ctx.dim_is_dynamic(0, d) || numel < 0 ? -1 : numel * ctx.sizes(0)[d];
    ctx.out(along(helpers::reshape(ctx, x, {-1}), 0, numel, false).values);
    return;
  }
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {x}), 0);
    ctx.out(ctx.const_int(0), 1);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  auto r = along(x, dim, ctx.dim_is_dynamic(0, dim) ? -1 : ctx.sizes(0)[static_cast<size_t>(dim)],
                 ctx.num_args() > 2 && ctx.b(2));
  ctx.out(r.values, 0);
  ctx.out(r.indices, 1);
}

// aten::median
void median(SymbolicContext& ctx, Form form) {
  const DType dt = ctx.dtype(0);
  median_forms(ctx, [&](Value* x, int64_t dim, int64_t n, bool keepdim) {
    return median_along(ctx, form, x, dt, dim, n, keepdim);
  });
}

// aten::nanmedian: the lower median of the non-NaN values (NaN when there are none).
TopKResult nanmedian_along(SymbolicContext& ctx, Value* x, DType dt, int64_t dim, bool keepdim) {
  if (!ir::is_floating(dt)) {
    Value* n = helpers::dim_size(ctx, x, dim);
    auto r = top_k(ctx, Form::Full, x, dt, dim, helpers::unsqueeze(ctx, n, {0}), 0, false);
    Value* pos = ctx.op("Div", {ctx.op("Sub", {n, ctx.const_int(1)}), ctx.const_int(2)});
    Value* v = ctx.op("Gather", {r.values, pos}, {{"axis", dim}});
    Value* i = ctx.op("Gather", {r.indices, pos}, {{"axis", dim}});
    if (keepdim) {
      v = helpers::unsqueeze(ctx, v, {dim});
      i = helpers::unsqueeze(ctx, i, {dim});
    }
    return {v, i};
  }
  Value* isnan = ctx.op("IsNaN", {x});
  Value* xs = ctx.op("Where", {isnan, ctx.const_scalar(dt, std::numeric_limits<double>::infinity()), x});
  auto r = top_k(ctx, Form::Full, xs, dt, dim, helpers::unsqueeze(ctx, helpers::dim_size(ctx, x, dim), {0}), 0, false);
  Value* count = helpers::reduce(ctx, "ReduceSum", ctx.cast(ctx.op("Not", {isnan}), DType::Int64), {dim}, true);
  // (count - 1) / 2, and 0 for rows without any number.
  Value* last = ctx.op("Where", {ctx.op("Greater", {count, ctx.const_int(0)}), ctx.op("Sub", {count, ctx.const_int(1)}),
                                 ctx.const_int(0)});
  Value* pos = ctx.op("Div", {last, ctx.const_int(2)});
  Value* v = ctx.op("GatherElements", {r.values, pos}, {{"axis", dim}});
  Value* i = ctx.op("GatherElements", {r.indices, pos}, {{"axis", dim}});
  v = ctx.op("Where", {ctx.op("Equal", {count, ctx.const_int(0)}), ctx.const_scalar(dt, std::nan("")), v});
  if (!keepdim) {
    v = helpers::squeeze(ctx, v, {dim});
    i = helpers::squeeze(ctx, i, {dim});
  }
  return {v, i};
}

void nanmedian(SymbolicContext& ctx) {
  const DType dt = ctx.dtype(0);
  median_forms(ctx, [&](Value* x, int64_t dim, int64_t, bool keepdim) {
    return nanmedian_along(ctx, x, dt, dim, keepdim);
  });
}

// aten::mode(self, dim=-1, keepdim=False) -> (values, indices): the most
// frequent value (the smallest of equally frequent ones) and the index of its
// last occurrence, as PyTorch returns them.
void mode(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  const DType dt = ctx.dtype(0);
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.op("Identity", {x}), 0);
    ctx.out(ctx.const_int(0), 1);
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.num_args() > 1 ? ctx.i(1) : -1, rank);
  const bool keepdim = ctx.num_args() > 2 && ctx.b(2);
  // A dtype ONNX Runtime's Where and reductions accept.
  const DType work = dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float
                     : ir::is_floating(dt) || dt == DType::Int32 || dt == DType::Int64 ? dt
                                                                                       : DType::Int32;
  Value* xw = ctx.cast(x, work);
  Value* eq = ctx.op("Equal", {helpers::unsqueeze(ctx, xw, {dim + 1}), helpers::unsqueeze(ctx, xw, {dim})});
  Value* counts = helpers::reduce(ctx, "ReduceSum", ctx.cast(eq, DType::Int64), {dim + 1}, false);
  Value* best = helpers::reduce(ctx, "ReduceMax", counts, {dim}, true);
  Value* big = ir::is_floating(work) ? ctx.const_scalar(work, std::numeric_limits<double>::infinity())
               : work == DType::Int64 ? ctx.constant(ir::Tensor::scalar_int(work, std::numeric_limits<int64_t>::max()))
                                      : ctx.constant(ir::Tensor::scalar_int(work, std::numeric_limits<int32_t>::max()));
  Value* val = helpers::reduce(ctx, "ReduceMin", ctx.op("Where", {ctx.op("Equal", {counts, best}), xw, big}), {dim}, true);
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  Value* pos = helpers::reshape(
      ctx, ctx.op("Range", {ctx.const_int(0), helpers::dim_size(ctx, x, dim), ctx.const_int(1)}), shape);
  Value* idx = helpers::reduce(ctx, "ReduceMax", ctx.op("Where", {ctx.op("Equal", {xw, val}), pos, ctx.const_int(-1)}),
                               {dim}, true);
  if (!keepdim) {
    val = helpers::squeeze(ctx, val, {dim});
    idx = helpers::squeeze(ctx, idx, {dim});
  }
  ctx.out(ctx.cast(val, dt), 0);
  ctx.out(idx, 1);
}

// ---------------------------------------------------------------- unique

// ONNX Runtime's Unique takes these element types.
DType unique_dtype(DType t) {
  if (t == DType::Float || t == DType::Double || t == DType::Int64 || t == DType::Int8) return t;
  if (ir::is_floating(t)) return DType::Float;
  return DType::Int64;
}

struct UniqueResult {
  Value* values;
  Value* inverse;  // flat
  Value* counts;
};

UniqueResult onnx_unique(SymbolicContext& ctx, Value* x, DType dt, bool sorted, std::optional<int64_t> axis) {
  ir::Attributes attrs{{"sorted", int64_t{sorted ? 1 : 0}}};
  if (axis) attrs.emplace_back("axis", *axis);
  auto outs = ctx.op_n("Unique", {ctx.cast(x, unique_dtype(dt))}, 4, attrs);
  for (size_t k = 1; k < 4; ++k) set_dtype(outs[k], DType::Int64);
  return {ctx.cast(outs[0], dt), outs[2], outs[3]};
}

Value* empty_long(SymbolicContext& ctx) { return ctx.constant(ir::Tensor::from_int64s({}, {0})); }

// Sorted unique of a flat floating tensor as PyTorch computes it: NaNs are
// never equal, so each is its own value, after the others in their order
// (ONNX Runtime's Unique drops them). The NaNs are set apart, the rest goes
// through Unique, and the NaNs come back at the end: index u + j and count
// 1 for the j-th NaN.
UniqueResult unique_with_nans(SymbolicContext& ctx, Value* flat, DType dt) {
  Value* nan = ctx.op("IsNaN", {flat});
  Value* ok = ctx.op("Not", {nan});
  auto r = onnx_unique(ctx, ctx.op("Compress", {flat, ok}, {{"axis", int64_t{0}}}), dt, true, std::nullopt);
  Value* nans = ctx.op("Compress", {flat, nan}, {{"axis", int64_t{0}}});
  Value* zero = ctx.const_int(0);
  Value* one = ctx.const_scalar(DType::Int64, 1);
  Value* u = ctx.op("Shape", {r.values});
  // element i: its index among the kept values (k) or among the NaNs (j)
  Value* k = ctx.op("Sub", {ctx.op("CumSum", {ctx.cast(ok, DType::Int64), zero}), one});
  Value* j = ctx.op("Sub", {ctx.op("CumSum", {ctx.cast(nan, DType::Int64), zero}), one});
  // (padded: Gather must not index an empty inverse when every element is NaN)
  Value* padded = ctx.op("Concat", {r.inverse, ctx.constant(ir::Tensor::from_int64s({0}, {1}))}, {{"axis", int64_t{0}}});
  Value* k0 = ctx.op("Where", {nan, zero, k});  // (Max takes int64 from opset 12)
  Value* kept_index = ctx.op("Gather", {padded, k0});
  Value* inverse = ctx.op("Where", {nan, ctx.op("Add", {j, u}), kept_index});
  Value* nan_counts = ctx.op("Expand", {one, ctx.op("Shape", {nans})});
  return {ctx.op("Concat", {r.values, nans}, {{"axis", int64_t{0}}}), inverse,
          ctx.op("Concat", {r.counts, nan_counts}, {{"axis", int64_t{0}}})};
}

// aten::_unique2(self, sorted=True, return_inverse=False, return_counts=False) -> (values, inverse, counts)
// aten::_unique(self, sorted=True, return_inverse=False) -> (values, inverse)
void unique(SymbolicContext& ctx) {
  // PyTorch's CPU kernels return sorted values whatever `sorted` says (ONNX's
  // Unique with sorted=0 keeps first occurrences: a different order).
  const bool sorted = true;
  const bool inverse = ctx.num_args() > 2 && ctx.b(2);
  const bool counts = ctx.num_args() > 3 && ctx.b(3);
  Value* x = ctx.in(0);
  auto r = ir::is_floating(ctx.dtype(0)) ? unique_with_nans(ctx, helpers::reshape(ctx, x, {-1}), ctx.dtype(0))
                                         : onnx_unique(ctx, helpers::reshape(ctx, x, {-1}), ctx.dtype(0), sorted,
                                                       std::nullopt);
  ctx.out(r.values, 0);
  ctx.out(inverse ? ctx.op("Reshape", {r.inverse, ctx.op("Shape", {x})}) : empty_long(ctx), 1);
  if (ctx.num_outputs() > 2) ctx.out(counts ? r.counts : empty_long(ctx), 2);
}

// aten::unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False): always sorted,
// and PyTorch always returns the inverse and the counts.
void unique_dim(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  auto r = onnx_unique(ctx, ctx.in(0), ctx.dtype(0), true, dim);
  ctx.out(r.values, 0);
  ctx.out(r.inverse, 1);
  ctx.out(r.counts, 2);
}

// aten::unique_consecutive(self, return_inverse=False, return_counts=False, dim=None)
// aten::unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False)
void unique_consecutive_impl(SymbolicContext& ctx, std::optional<int64_t> dim, bool inverse, bool counts) {
  Value* x = ctx.in(0);
  const int64_t rank = ctx.rank(0);
  const int64_t a = dim ? *dim : 0;
  Value* xf = dim ? x : helpers::reshape(ctx, x, {-1});
  const DType dt = ctx.dtype(0);
  Value* xw = dt == DType::Bool ? ctx.cast(xf, DType::Int32) : xf;
  Value* next = helpers::slice(ctx, xw, {a}, {1}, {kMax});
  Value* prev = helpers::slice(ctx, xw, {a}, {0}, {-1});
  Value* differs = ctx.op("Not", {ctx.op("Equal", {next, prev})});
  if (dim && rank > 1) {
    std::vector<int64_t> others;
    for (int64_t d = 0; d < rank; ++d)
      if (d != a) others.push_back(d);
    differs = ctx.cast(helpers::reduce(ctx, "ReduceMax", ctx.cast(differs, DType::Int32), others, false), DType::Bool);
  }
  Value* first = ctx.constant(ir::Tensor::scalar_int(DType::Bool, 1).reshaped({1}));
  Value* mark = ctx.op("Concat", {first, differs}, {{"axis", int64_t{0}}});  // [n]: a run starts here
  // (Gather rather than Compress, which has no ONNX shape inference.)
  Value* starts = helpers::reshape(ctx, ctx.op("NonZero", {mark}), {-1});  // [U]
  ctx.out(ctx.op("Gather", {xf, starts}, {{"axis", a}}), 0);
  if (inverse) {
    Value* inv = ctx.op("Sub", {ctx.op("CumSum", {ctx.cast(mark, DType::Int64), ctx.const_int(0)}), ctx.const_int(1)});
    if (!dim) inv = ctx.op("Reshape", {inv, ctx.op("Shape", {x})});
    ctx.out(inv, 1);
  } else {
    ctx.out(empty_long(ctx), 1);
  }
  if (counts) {
    Value* n = ctx.op("Shape", {mark});
    Value* ends = ctx.op("Concat", {helpers::slice(ctx, starts, {0}, {1}, {kMax}), n}, {{"axis", int64_t{0}}});
    ctx.out(ctx.op("Sub", {ends, starts}), 2);
  } else {
    ctx.out(empty_long(ctx), 2);
  }
}

void unique_consecutive(SymbolicContext& ctx) {
  const bool inverse = ctx.num_args() > 1 && ctx.b(1);
  const bool counts = ctx.num_args() > 2 && ctx.b(2);
  std::optional<int64_t> dim;
  if (ctx.num_args() > 3 && !ctx.none(3)) dim = helpers::normalize_dim(ctx, ctx.i(3), ctx.rank(0));
  // With a dim, PyTorch always returns the inverse and the counts.
  unique_consecutive_impl(ctx, dim, inverse || dim.has_value(), counts || dim.has_value());
}

void unique_dim_consecutive(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  unique_consecutive_impl(ctx, dim, true, true);
}

// ---------------------------------------------------------------- bucketize / searchsorted

// For each value of x: how many entries of the sorted sequence are < x
// (left) or <= x (right), along the sequence's last dim; NaN goes past the end.
struct SearchArgs {
  Value* seq;    // sorted sequence: 1-D [M] or N-D [..., M]
  Value* x;      // values
  int64_t x_rank;
  bool nd;       // seq has more than one dim
};

Value* search(SymbolicContext& ctx, const SearchArgs& a, bool right, DType out) {
  Value* xu = helpers::unsqueeze(ctx, a.x, {a.x_rank});                             // [..., K, 1]
  Value* seq = a.nd ? helpers::unsqueeze(ctx, a.seq, {a.x_rank - 1}) : a.seq;       // [..., 1, M] or [M]
  Value* below = right ? ctx.op("Not", {ctx.op("Greater", {seq, xu})}) : ctx.op("Less", {seq, xu});
  Value* n = helpers::reduce(ctx, "ReduceSum", ctx.cast(below, DType::Int64), {a.x_rank}, false);
  if (ir::is_floating(a.x->dtype())) {
    Value* len = helpers::dim_size(ctx, a.seq, a.nd ? a.x_rank - 1 : 0);
    n = ctx.op("Where", {ctx.op("IsNaN", {a.x}), len, n});
  }
  return ctx.cast(n, out);
}

// aten::bucketize(self, boundaries, *, out_int32=False, right=False)
void bucketize(SymbolicContext& ctx) {
  const DType t = ir::promote_types(ctx.dtype(0), ctx.dtype(1));
  SearchArgs a{ctx.in_as(1, t), ctx.in_as(0, t), ctx.arg(0).is_scalar() ? 0 : ctx.rank(0), false};
  const bool out_int32 = ctx.num_args() > 2 && ctx.b(2);
  const bool right = ctx.num_args() > 3 && ctx.b(3);
  ctx.out(search(ctx, a, right, out_int32 ? DType::Int32 : DType::Int64));
}

// aten::searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None)
void searchsorted(SymbolicContext& ctx) {
  const DType t = ir::promote_types(ctx.dtype(0), ctx.dtype(1));
  const int64_t seq_rank = ctx.rank(0);
  Value* seq = ctx.in_as(0, t);
  if (ctx.num_args() > 5 && !ctx.none(5)) {
    Value* sorter = ctx.cast(ctx.in(5), DType::Int64);
    if (seq_rank == 1) {
      seq = ctx.op("Gather", {seq, sorter}, {{"axis", int64_t{0}}});
    } else {
      if (ctx.opset() < 11) ctx.fail("a sorter for a multi-dimensional sequence needs opset 11 or later");
      seq = ctx.op("GatherElements", {seq, sorter}, {{"axis", seq_rank - 1}});
    }
  }
  const bool out_int32 = ctx.num_args() > 2 && ctx.b(2);
  bool right = ctx.num_args() > 3 && ctx.b(3);
  if (ctx.num_args() > 4 && !ctx.none(4)) right = ctx.s(4) == "right";
  const int64_t x_rank = ctx.arg(1).is_scalar() ? 0 : ctx.rank(1);
  if (seq_rank > 1 && x_rank != seq_rank) ctx.fail("the values must have the sequence's rank");
  SearchArgs a{seq, ctx.in_as(1, t), x_rank, seq_rank > 1};
  ctx.out(search(ctx, a, right, out_int32 ? DType::Int32 : DType::Int64));
}

}  // namespace

void register_sort(Registry& r) {
  r.add("aten::sort", 9, [](SymbolicContext& c) { sort(c, Form::K_attr, true); });
  r.add("aten::sort", 10, [](SymbolicContext& c) { sort(c, Form::K_input, true); });
  r.add("aten::sort", 11, [](SymbolicContext& c) { sort(c, Form::Full, true); });
  r.add("aten::argsort", 9, [](SymbolicContext& c) { sort(c, Form::K_attr, false); });
  r.add("aten::argsort", 10, [](SymbolicContext& c) { sort(c, Form::K_input, false); });
  r.add("aten::argsort", 11, [](SymbolicContext& c) { sort(c, Form::Full, false); });
  r.add("aten::msort", 9, [](SymbolicContext& c) { msort(c, Form::K_attr); });
  r.add("aten::msort", 10, [](SymbolicContext& c) { msort(c, Form::K_input); });
  r.add("aten::msort", 11, [](SymbolicContext& c) { msort(c, Form::Full); });
  r.add("aten::topk", 9, [](SymbolicContext& c) { topk(c, Form::K_attr); });
  r.add("aten::topk", 10, [](SymbolicContext& c) { topk(c, Form::K_input); });
  r.add("aten::topk", 11, [](SymbolicContext& c) { topk(c, Form::Full); });
  r.add("aten::kthvalue", 9, [](SymbolicContext& c) { kthvalue(c, Form::K_attr); });
  r.add("aten::kthvalue", 10, [](SymbolicContext& c) { kthvalue(c, Form::K_input); });
  r.add("aten::kthvalue", 11, [](SymbolicContext& c) { kthvalue(c, Form::Full); });
  r.add("aten::median", 9, [](SymbolicContext& c) { median(c, Form::K_attr); });
  r.add("aten::median", 10, [](SymbolicContext& c) { median(c, Form::K_input); });
  r.add("aten::median", 11, [](SymbolicContext& c) { median(c, Form::Full); });
  r.add("aten::nanmedian", 11, nanmedian);
  r.add("aten::mode", 11, mode);
  r.add("aten::_unique", 11, unique);
  r.add("aten::_unique2", 11, unique);
  r.add("aten::unique_dim", 11, unique_dim);
  r.add("aten::unique_consecutive", 11, unique_consecutive);
  r.add("aten::unique_dim_consecutive", 11, unique_dim_consecutive);
  r.add("aten::bucketize", 9, bucketize);
  r.add("aten::searchsorted", 9, searchsorted);
}

}  // namespace torch2onnx::symbolics
