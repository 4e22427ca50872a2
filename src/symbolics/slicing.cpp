// Taking parts of a tensor along one dim: slice, select, narrow, index_select.
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

ir::Value* bound(SymbolicContext& ctx, size_t idx, int64_t dflt) {
  if (ctx.none(idx)) return ctx.const_ints({dflt});
  return helpers::unsqueeze(ctx, ctx.scalar_value(idx, ir::DType::Int64), {0});
}

// aten::slice(self, dim=0, start=None, end=None, step=1)
void slice(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  const int64_t step = ctx.num_args() > 4 && !ctx.none(4) ? ctx.i(4) : 1;
  if (step <= 0) ctx.fail("slice step must be positive");
  ir::Value* x = ctx.in(0);
  const bool const_start = ctx.none(2) || ctx.constant(2), const_end = ctx.none(3) || ctx.constant(3);
  if (const_start && const_end) {
    const int64_t start = ctx.none(2) ? 0 : ctx.i(2);
    const int64_t end = ctx.none(3) ? kMax : ctx.i(3);
    if (start == 0 && end == kMax && step == 1) {
      ctx.out(x);
      return;
    }
    ctx.out(helpers::slice(ctx, x, {dim}, {start}, {end}, {step}));
    return;
  }
  ir::Value* steps = step == 1 ? nullptr : ctx.const_ints({step});
  ctx.out(helpers::slice_dynamic(ctx, x, bound(ctx, 2, 0), bound(ctx, 3, kMax), ctx.const_ints({dim}), steps));
}

// An index along `dim` as a value; negative constants are resolved with the
// example size where Gather cannot take them (before opset 11).
ir::Value* index_value(SymbolicContext& ctx, size_t idx, int64_t dim) {
  if (ctx.constant(idx) && ctx.arg(idx).kind == Arg::Kind::Int) {
    int64_t i = ctx.i(idx);
    if (i < 0 && ctx.opset() < 11) i += ctx.sizes(0)[static_cast<size_t>(dim)];
    return ctx.const_int(i);
  }
  return ctx.scalar_value(idx, ir::DType::Int64);
}

// aten::select(self, dim, index): Gather with a 0-d index drops the dim.
void select(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ctx.out(ctx.op("Gather", {ctx.in(0), index_value(ctx, 2, dim)}, {{"axis", dim}}));
}

// aten::narrow(self, dim, start, length)
void narrow(SymbolicContext& ctx) {
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ir::Value* x = ctx.in(0);
  if (ctx.constant(2) && ctx.constant(3)) {
    int64_t start = ctx.i(2);
    if (start < 0) start += ctx.sizes(0)[static_cast<size_t>(dim)];
    ctx.out(helpers::slice(ctx, x, {dim}, {start}, {start + ctx.i(3)}));
    return;
  }
  ir::Value* start = bound(ctx, 2, 0);
  ir::Value* end = ctx.op("Add", {start, bound(ctx, 3, 0)});
  ctx.out(helpers::slice_dynamic(ctx, x, start, end, ctx.const_ints({dim}), nullptr));
}

// aten::index_select(self, dim, index)
void index_select(SymbolicContext& ctx) {
  const int64_t rank = ctx.rank(0);
  const int64_t dim = rank == 0 ? 0 : helpers::normalize_dim(ctx, ctx.i(1), rank);
  ir::Value* x = ctx.in(0);
  if (rank == 0) x = helpers::unsqueeze(ctx, x, {0});
  ir::Value* y = ctx.op("Gather", {x, ctx.in_as(2, ir::DType::Int64)}, {{"axis", dim}});
  ctx.out(rank == 0 ? helpers::reshape(ctx, y, {-1}) : y);
}

}  // namespace

void register_slicing(Registry& r) {
  r.add("aten::slice", 9, slice);
  r.add("aten::select", 9, select);
  r.add("aten::narrow", 9, narrow);
  r.add("aten::index_select", 9, index_select);
}

}  // namespace torch2onnx::symbolics
