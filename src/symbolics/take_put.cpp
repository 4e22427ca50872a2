// Gathers and scatters through flat or broadcast indices: take_along_dim,
// put, index_reduce, segment_reduce (ScatterElements with a reduction: add
// and mul from opset 16, max and min from 18).
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Negative indices counted from `size` (a 0-d or 1-D int64 value).
Value* wrapped(SymbolicContext& ctx, Value* idx, Value* size) {
  idx = ctx.cast(idx, DType::Int64);
  return ctx.op("Where", {ctx.op("Less", {idx, ctx.const_int(0)}), ctx.op("Add", {idx, size}), idx});
}

Value* numel(SymbolicContext& ctx, Value* x) {
  return helpers::reduce(ctx, "ReduceProd", ctx.op("Shape", {x}), {}, false);
}

// x's shape with axis `dim` set to 1 (a 1-D int64 value).
Value* shape_without(SymbolicContext& ctx, Value* x, int64_t dim, int64_t rank) {
  std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  Value* mask = ctx.constant(ir::Tensor::from_int64s([&] {
    std::vector<int64_t> m(static_cast<size_t>(rank), 1);
    m[static_cast<size_t>(dim)] = 0;
    return m;
  }(), {rank}));
  // shape * mask + (1 - mask): the dim becomes 1
  Value* s = ctx.op("Mul", {ctx.op("Shape", {x}), mask});
  return ctx.op("Add", {s, ctx.op("Sub", {ctx.const_ints(ones), mask})});
}

// aten::take_along_dim(self, indices, dim=None): GatherElements after
// broadcasting self and indices against each other on every other dim.
void take_along_dim(SymbolicContext& ctx) {
  Value* x = ctx.in(0);
  Value* idx = ctx.cast(ctx.in(1), DType::Int64);
  if (ctx.none(2)) {
    Value* flat = helpers::reshape(ctx, x, {-1});
    Value* i = wrapped(ctx, helpers::reshape(ctx, idx, {-1}), numel(ctx, x));
    return ctx.out(ctx.op("GatherElements", {flat, i}, {{"axis", int64_t{0}}}));
  }
  const int64_t rank = ctx.rank(0);
  if (ctx.rank(1) != rank) ctx.fail("take_along_dim: input and indices should have the same number of dimensions");
  if (rank == 0) return ctx.out(x);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(2), rank);
  Value* xe = ctx.op("Expand", {x, shape_without(ctx, idx, dim, rank)});
  Value* ie = ctx.op("Expand", {idx, shape_without(ctx, x, dim, rank)});
  ie = wrapped(ctx, ie, helpers::dim_size(ctx, x, dim));
  ctx.out(ctx.op("GatherElements", {xe, ie}, {{"axis", dim}}));
}

// aten::put(self, index, source, accumulate=False): into self flattened.
// Accumulation: ScatterElements with reduction "add" from 16; before, the
// sums per position through a one-hot MatMul.
void put(SymbolicContext& ctx, bool scatter_add) {
  Value* x = ctx.in(0);
  const DType t = ctx.dtype(0);
  Value* flat = helpers::reshape(ctx, x, {-1});
  Value* n = numel(ctx, x);
  Value* idx = wrapped(ctx, helpers::reshape(ctx, ctx.in(1), {-1}), n);
  Value* src = helpers::reshape(ctx, ctx.in_as(2, t), {-1});
  const bool accumulate = !ctx.none(3) && ctx.b(3);
  Value* y;
  if (!accumulate) {
    y = ctx.op("ScatterElements", {flat, idx, src}, {{"axis", int64_t{0}}});
  } else if (scatter_add) {
    y = ctx.op("ScatterElements", {flat, idx, src}, {{"axis", int64_t{0}}, {"reduction", "add"}});
  } else {
    const DType mt = ir::is_floating(t) ? (t == DType::Double ? DType::Double : DType::Float) : DType::Int64;
    Value* onehot = ctx.cast(ctx.op("Equal", {helpers::unsqueeze(ctx, idx, {1}),
                                              helpers::unsqueeze(ctx, helpers::arange(ctx, n), {0})}),
                             mt);  // [N, numel]
    Value* sums = helpers::squeeze(ctx, ctx.op("MatMul", {helpers::unsqueeze(ctx, ctx.cast(src, mt), {0}), onehot}), {0});
    y = ctx.cast(ctx.op("Add", {ctx.cast(flat, mt), sums}), t);
  }
  ctx.out(ctx.op("Reshape", {y, ctx.op("Shape", {x})}));
}
void put_11(SymbolicContext& ctx) { put(ctx, false); }
void put_16(SymbolicContext& ctx) { put(ctx, true); }

// The reduction's neutral element (what an excluded self or an empty segment starts from).
double identity_of(const std::string& reduce, DType t) {
  if (reduce == "prod") return 1.0;
  const bool fl = ir::is_floating(t);
  if (reduce == "amax" || reduce == "max")
    return fl ? -kInf : static_cast<double>(t == DType::Int32 ? std::numeric_limits<int32_t>::lowest()
                                                              : std::numeric_limits<int64_t>::lowest());
  if (reduce == "amin" || reduce == "min")
    return fl ? kInf : static_cast<double>(t == DType::Int32 ? std::numeric_limits<int32_t>::max()
                                                             : std::numeric_limits<int64_t>::max());
  return 0.0;
}

const char* onnx_reduction(SymbolicContext& ctx, const std::string& reduce, bool has_minmax) {
  if (reduce == "sum" || reduce == "mean") return "add";
  if (reduce == "prod") return "mul";
  if (reduce == "amax" || reduce == "max" || reduce == "amin" || reduce == "min") {
    if (!has_minmax) ctx.fail("the reduction '" + reduce + "' needs ScatterElements with max/min: opset 18 or later");
    return reduce == "amax" || reduce == "max" ? "max" : "min";
  }
  ctx.fail("unknown reduction '" + reduce + "'");
}

// a / b, rounded down for integers (as PyTorch's mean of an integer index_reduce).
Value* mean_div(SymbolicContext& ctx, Value* a, Value* b, DType t) {
  if (ir::is_floating(t)) return ctx.op("Div", {a, b});
  return ctx.op("Div", {ctx.op("Sub", {a, ctx.op("Mod", {a, b})}), b});
}

// aten::index_reduce(self, dim, index, source, reduce, *, include_self=True)
void index_reduce(SymbolicContext& ctx, bool has_minmax) {
  Value* x = ctx.in(0);
  const DType t = ctx.dtype(0);
  const bool scalar = ctx.rank(0) == 0;
  const int64_t rank = scalar ? 1 : ctx.rank(0);
  if (scalar) x = helpers::reshape(ctx, x, {1});
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const std::string reduce = ctx.s(4);
  const bool include_self = ctx.none(5) || ctx.b(5);
  const char* red = onnx_reduction(ctx, reduce, has_minmax);
  Value* src = ctx.in_as(3, t);
  if (ctx.rank(3) != rank) src = helpers::reshape(ctx, src, std::vector<int64_t>(static_cast<size_t>(rank), 1));
  Value* idx = helpers::reshape(ctx, ctx.cast(ctx.in(2), DType::Int64), {-1});
  idx = wrapped(ctx, idx, helpers::dim_size(ctx, x, dim));
  std::vector<int64_t> along(static_cast<size_t>(rank), 1);
  along[static_cast<size_t>(dim)] = -1;
  Value* idx_e = ctx.op("Expand", {helpers::reshape(ctx, idx, along), ctx.op("Shape", {src})});
  auto fill_like = [&](Value* like, double v) {
    return ctx.op("Expand", {ctx.const_scalar(t, v), ctx.op("Shape", {like})});
  };
  Value* base = x;
  if (!include_self)  // the indexed places start from the neutral element
    base = ctx.op("ScatterElements", {x, idx_e, fill_like(src, identity_of(reduce, t))}, {{"axis", dim}});
  Value* y = ctx.op("ScatterElements", {base, idx_e, src}, {{"axis", dim}, {"reduction", red}});
  if (reduce == "mean") {
    Value* ones = fill_like(x, 1.0);
    Value* count_base =
        include_self ? ones : ctx.op("ScatterElements", {ones, idx_e, fill_like(src, 0.0)}, {{"axis", dim}});
    Value* count = ctx.op("ScatterElements", {count_base, idx_e, fill_like(src, 1.0)}, {{"axis", dim}, {"reduction", "add"}});
    // (an indexed place without self has a count >= 1; the others keep count 1)
    y = mean_div(ctx, y, count, t);
  }
  ctx.out(scalar ? helpers::reshape(ctx, y, std::vector<int64_t>{}) : y);
}
void index_reduce_16(SymbolicContext& ctx) { index_reduce(ctx, false); }
void index_reduce_18(SymbolicContext& ctx) { index_reduce(ctx, true); }

// aten::segment_reduce(data, reduce, *, lengths=None, indices=None,
// offsets=None, axis=0, unsafe=False, initial=None): 1-D lengths or offsets
// along axis 0. Each row's segment is the number of segment ends at or
// before it; the rows are scattered into [segments, ...] with the reduction.
void segment_reduce(SymbolicContext& ctx, bool has_minmax) {
  Value* data = ctx.in(0);
  const DType t = ctx.dtype(0);
  const std::string reduce = ctx.s(1);
  if (!ctx.none(3)) ctx.fail("segment_reduce with indices is not supported (PyTorch does not implement it either)");
  const int64_t axis = ctx.num_args() > 5 && !ctx.none(5) ? ctx.i(5) : 0;
  if (helpers::normalize_dim(ctx, axis, ctx.rank(0)) != 0) ctx.fail("segment_reduce is supported along axis 0");
  Value* lengths;
  if (!ctx.none(2)) {
    if (ctx.rank(2) != 1) ctx.fail("segment_reduce is supported with 1-D lengths");
    lengths = ctx.cast(ctx.in(2), DType::Int64);
  } else if (!ctx.none(4)) {
    if (ctx.rank(4) != 1) ctx.fail("segment_reduce is supported with 1-D offsets");
    Value* off = ctx.cast(ctx.in(4), DType::Int64);
    lengths = ctx.op("Sub", {helpers::slice(ctx, off, {0}, {1}, {std::numeric_limits<int64_t>::max()}),
                             helpers::slice(ctx, off, {0}, {0}, {-1})});
  } else {
    ctx.fail("segment_reduce needs lengths or offsets");
  }
  const char* red = onnx_reduction(ctx, reduce, has_minmax);
  const std::optional<double> initial = ctx.num_args() > 7 ? ctx.opt_f(7) : std::nullopt;
  Value* ends = ctx.op("CumSum", {lengths, ctx.const_int(0)});  // [S]
  Value* rows = helpers::arange(ctx, helpers::dim_size(ctx, data, 0));  // [N]
  Value* seg = helpers::reduce(
      ctx, "ReduceSum",
      ctx.cast(ctx.op("LessOrEqual", {helpers::unsqueeze(ctx, ends, {0}), helpers::unsqueeze(ctx, rows, {1})}),
               DType::Int64),
      {1}, false);  // [N]: the segment of each row
  const int64_t rank = ctx.rank(0);
  std::vector<int64_t> col(static_cast<size_t>(rank), 1);
  col[0] = -1;
  Value* data_shape = ctx.op("Shape", {data});
  Value* idx_e = ctx.op("Expand", {helpers::reshape(ctx, seg, col), data_shape});
  Value* out_shape = ctx.op("Concat", {ctx.op("Shape", {lengths}), helpers::slice(ctx, data_shape, {0}, {1}, {rank})},
                            {{"axis", int64_t{0}}});
  const double start = initial && reduce != "mean" ? *initial : identity_of(reduce, t);
  Value* base = ctx.op("Expand", {ctx.const_scalar(t, start), out_shape});
  Value* y = ctx.op("ScatterElements", {base, idx_e, data}, {{"axis", int64_t{0}}, {"reduction", red}});
  if (reduce == "mean") {
    std::vector<int64_t> s_col(static_cast<size_t>(rank), 1);
    s_col[0] = -1;
    Value* count = ctx.cast(helpers::reshape(ctx, lengths, s_col), t);
    if (initial) {  // (initial + sum) / count, initial for an empty segment
      Value* init = ctx.const_scalar(t, *initial);
      y = ctx.op("Where", {helpers::equal(ctx, count, ctx.const_scalar(t, 0)), ctx.op("Expand", {init, out_shape}),
                           ctx.op("Div", {ctx.op("Add", {y, init}), count})});
    } else {
      y = ctx.op("Div", {y, count});  // an empty segment: 0 / 0 = NaN, as PyTorch
    }
  } else if ((reduce == "max" || reduce == "min") && !initial && !ir::is_floating(t)) {
    ctx.fail("segment_reduce max/min of integers without an initial value is not supported");
  }
  ctx.out(y);
}
void segment_reduce_16(SymbolicContext& ctx) { segment_reduce(ctx, false); }
void segment_reduce_18(SymbolicContext& ctx) { segment_reduce(ctx, true); }

}  // namespace

void register_take_put(Registry& r) {
  r.add("aten::take_along_dim", 11, take_along_dim);
  r.add("aten::put", 11, put_11);
  r.add("aten::put", 16, put_16);
  r.add("aten::index_reduce", 16, index_reduce_16);
  r.add("aten::index_reduce", 18, index_reduce_18);
  r.add("aten::segment_reduce", 16, segment_reduce_16);
  r.add("aten::segment_reduce", 18, segment_reduce_18);
}

}  // namespace torch2onnx::symbolics
