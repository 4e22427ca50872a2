// Taking parts of a tensor along one dim: slice, select, narrow, index_select.
// Opset 9's Slice has no steps and only constant bounds: other slices there
// are Gathers of computed indices.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A slice bound as a 1-D [1] int64 value (None: dflt).
ir::Value* bound(SymbolicContext& ctx, size_t idx, int64_t dflt) {
  if (ctx.none(idx)) return ctx.const_ints({dflt});
  return helpers::unsqueeze(ctx, ctx.scalar_value(idx, ir::DType::Int64), {0});
}

// A slice bound as a 0-d int64 value (None: dflt).
ir::Value* bound0(SymbolicContext& ctx, size_t idx, int64_t dflt) {
  if (ctx.none(idx)) return ctx.const_int(dflt);
  return ctx.scalar_value(idx, ir::DType::Int64);
}

// x[start:end:step] along dim for opset 9, whose Slice has neither steps nor
// run-time bounds: a Gather of start, start + step, ... (0-d int64 values,
// Python slice semantics: negative counts from the end, clamped to the size).
// The indices come from NonZero of a ConstantOfShape (no Range before opset
// 11); with static shapes all of it folds to a constant.
ir::Value* gather_range(SymbolicContext& ctx, ir::Value* x, int64_t dim, ir::Value* start, ir::Value* end,
                        ir::Value* step) {
  ir::Value* n = helpers::dim_size(ctx, x, dim);
  ir::Value* zero = ctx.const_int(0);
  auto normalized = [&](ir::Value* v) {
    v = ctx.op("Where", {ctx.op("Less", {v, zero}), ctx.op("Add", {v, n}), v});
    v = ctx.op("Where", {ctx.op("Less", {v, zero}), zero, v});
    return ctx.op("Where", {ctx.op("Greater", {v, n}), n, v});
  };
  start = normalized(start);
  end = normalized(end);
  // count = max(0, ceil((end - start) / step))
  ir::Value* span = ctx.op("Sub", {ctx.op("Add", {ctx.op("Sub", {end, start}), step}), ctx.const_int(1)});
  ir::Value* count = ctx.op("Div", {span, step});
  count = ctx.op("Where", {ctx.op("Less", {count, zero}), zero, count});
  ir::Value* ones = ctx.op("ConstantOfShape", {helpers::unsqueeze(ctx, count, {0})},
                           {{"value", ir::Tensor::from_int64s({1}, {1})}});
  ir::Value* iota = helpers::reshape(ctx, ctx.op("NonZero", {ones}), {-1});
  ir::Value* idx = ctx.op("Add", {start, ctx.op("Mul", {iota, step})});
  return ctx.op("Gather", {x, idx}, {{"axis", dim}});
}

// aten::slice(self, dim=0, start=None, end=None, step=1). Opset 9: Slice for
// constant bounds with step 1, gather_range otherwise; opset 10: Slice.
template <int Opset>
void slice(SymbolicContext& ctx) {
  if (ctx.arg(0).is_list()) ctx.fail("slicing a list cannot be exported");
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const bool has_step = ctx.num_args() > 4 && !ctx.none(4);
  const bool const_step = !has_step || ctx.constant(4);
  const int64_t step = has_step && const_step ? ctx.i(4) : 1;
  if (step <= 0) ctx.fail("slice step must be positive");
  ir::Value* x = ctx.in(0);
  const bool const_bounds = (ctx.none(2) || ctx.constant(2)) && (ctx.none(3) || ctx.constant(3));
  if (const_bounds && const_step) {
    const int64_t start = ctx.none(2) ? 0 : ctx.i(2);
    const int64_t end = ctx.none(3) ? kMax : ctx.i(3);
    if (start == 0 && end == kMax && step == 1) {
      ctx.out(x);
      return;
    }
    if (Opset >= 10 || step == 1) {
      ctx.out(helpers::slice(ctx, x, {dim}, {start}, {end}, {step}));
      return;
    }
  }
  if (Opset < 10) {
    ir::Value* st = const_step ? ctx.const_int(step) : ctx.scalar_value(4, ir::DType::Int64);
    ctx.out(gather_range(ctx, x, dim, bound0(ctx, 2, 0), bound0(ctx, 3, kMax), st));
    return;
  }
  ir::Value* steps = nullptr;
  if (!const_step) steps = helpers::unsqueeze(ctx, ctx.scalar_value(4, ir::DType::Int64), {0});
  else if (step != 1) steps = ctx.const_ints({step});
  ctx.out(helpers::slice_dynamic(ctx, x, bound(ctx, 2, 0), bound(ctx, 3, kMax), ctx.const_ints({dim}), steps));
}

// An index along `dim` of x as a 0-d int64 value. Gather takes negative
// indices from opset 11; before, they are wrapped here (constants with the
// example size, run-time values with the shape).
template <int Opset>
ir::Value* index_value(SymbolicContext& ctx, ir::Value* x, size_t idx, int64_t dim) {
  // (a negative constant index into a dynamic dim is wrapped at run time)
  if (ctx.constant(idx) && (Opset >= 11 || ctx.i(idx) >= 0 || !ctx.dim_is_dynamic(0, dim))) {
    int64_t i = ctx.i(idx);
    if (i < 0 && Opset < 11) i += ctx.sizes(0)[static_cast<size_t>(dim)];
    return ctx.const_int(i);
  }
  ir::Value* i = ctx.scalar_value(idx, ir::DType::Int64);
  if (Opset >= 11) return i;
  ir::Value* neg = ctx.op("Less", {i, ctx.const_int(0)});
  return ctx.op("Where", {neg, ctx.op("Add", {i, helpers::dim_size(ctx, x, dim)}), i});
}

// aten::select(self, dim, index): Gather with a 0-d index drops the dim.
template <int Opset>
void select(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ir::Value* x = ctx.in(0);
  ctx.out(ctx.op("Gather", {x, index_value<Opset>(ctx, x, 2, dim)}, {{"axis", dim}}));
}

// aten::narrow(self, dim, start, length); start may be a 0-d tensor.
template <int Opset>
void narrow(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ir::Value* x = ctx.in(0);
  if (ctx.constant(2) && ctx.constant(3) && (ctx.i(2) >= 0 || !ctx.dim_is_dynamic(0, dim))) {
    int64_t start = ctx.i(2);
    if (start < 0) start += ctx.sizes(0)[static_cast<size_t>(dim)];
    ctx.out(helpers::slice(ctx, x, {dim}, {start}, {start + ctx.i(3)}));
    return;
  }
  // A negative start counts from the end (start + length may then be 0).
  ir::Value* start = bound0(ctx, 2, 0);
  ir::Value* size = helpers::dim_size(ctx, x, dim);
  start = ctx.op("Where", {ctx.op("Less", {start, ctx.const_int(0)}), ctx.op("Add", {start, size}), start});
  ir::Value* end = ctx.op("Add", {start, bound0(ctx, 3, 0)});
  if (Opset < 10) {
    ctx.out(gather_range(ctx, x, dim, start, end, ctx.const_int(1)));
    return;
  }
  ctx.out(helpers::slice_dynamic(ctx, x, helpers::unsqueeze(ctx, start, {0}), helpers::unsqueeze(ctx, end, {0}),
                                 ctx.const_ints({dim}), nullptr));
}

// aten::index_select(self, dim, index). A 0-d index keeps the dim (one
// element); a 0-d self stays itself (PyTorch checks the indices are 0).
void index_select(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  if (rank == 0) {
    ctx.out(ctx.in(0));
    return;
  }
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ir::Value* index = ctx.in_as(2, ir::DType::Int64);
  if (ctx.arg(2).rank() != 1) index = helpers::reshape(ctx, index, {-1});
  ctx.out(ctx.op("Gather", {ctx.in(0), index}, {{"axis", dim}}));
}

}  // namespace

void register_slicing(Registry& r) {
  // The *_copy forms (functionalized graphs) are the same computations.
  for (const char* op : {"aten::slice", "aten::slice_copy"}) {
    r.add(op, 9, slice<9>);
    r.add(op, 10, slice<10>);
  }
  for (const char* op : {"aten::select", "aten::select_copy"}) {
    r.add(op, 9, select<9>);
    r.add(op, 11, select<11>);
  }
  r.add("aten::narrow", 9, narrow<9>);
  r.add("aten::narrow", 10, narrow<10>);
  r.add("aten::index_select", 9, index_select);
}

}  // namespace torch2onnx::symbolics
