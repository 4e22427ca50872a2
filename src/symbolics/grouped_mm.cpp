// Grouped matrix products, as mixtures of experts compute them:
// aten::_grouped_mm(mat_a, mat_b, offs=None, bias=None, out_dtype=None) in
// every layout PyTorch takes, and transformers' custom op
// transformers::grouped_mm_fallback(input, weight, offs) (2-D x 3-D).
// offs holds each group's end along the grouped dim (cumulative, not
// decreasing); an ONNX Loop multiplies each group's slice only (what each
// expert owns: no dense product of every token with every expert), and what
// no group covers is zero (transformers' fallback; PyTorch leaves it unset).
//   2-D x 3-D: a (S, K), b (E, K, N) -> (S, N): rows [start_i, end_i) of a times b[i]
//   3-D x 2-D: a (E, M, K), b (K, N) -> (M, N): a[i] times columns [start_i, end_i) of b
//   2-D x 2-D: a (M, K), b (K, N) -> (E, M, N): a[:, s_i:e_i] times b[s_i:e_i, :] (groups along K)
//   3-D x 3-D: a (E, M, K), b (E, K, N) -> (E, M, N): a batched MatMul, no offs
#include <functional>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

using ir::DType;
using ir::Value;

// Each group's start and end: 1-D int64 values of E elements.
struct Groups {
  Value* starts;
  Value* ends;
  Value* count;  // E, 0-d
};

Groups groups(SymbolicContext& ctx, Value* offs) {
  Value* ends = ctx.cast(offs, DType::Int64);
  Value* starts = ctx.op("Concat", {ctx.const_ints({0}), helpers::slice(ctx, ends, {0}, {0}, {-1})},
                         {{"axis", int64_t{0}}});
  return {starts, ends, helpers::dim_size(ctx, ends, 0)};
}

// v[i] of a 1-D value as a 1-D value of one element (Slice bounds).
Value* one(SymbolicContext& b, Value* v, Value* i) {
  return b.op("Gather", {v, helpers::unsqueeze(b, i, {0})}, {{"axis", int64_t{0}}});
}

// Rows (axis 0) or columns (axis 1) [start_i, end_i) of v.
Value* group_slice(SymbolicContext& b, Value* v, const Groups& g, Value* i, int64_t axis) {
  return helpers::slice_dynamic(b, v, one(b, g.starts, i), one(b, g.ends, i), b.const_ints({axis}), b.const_ints({1}));
}

// Zeros of `dt` shaped by the 1-D int64 `shape`.
Value* zeros(SymbolicContext& ctx, Value* shape, DType dt) {
  return ctx.op("ConstantOfShape", {shape}, {{"value", ir::Tensor::scalar(dt, 0.0).reshaped({1})}});
}

// [Shape(v)[d]] as a 1-D value.
Value* size1(SymbolicContext& ctx, Value* v, int64_t d) {
  return helpers::slice(ctx, ctx.op("Shape", {v}), {0}, {d}, {d + 1});
}

// The products of the groups concatenated along `axis`, then zeros up to
// `total` (1-D) along it; `other` (1-D) is the result's other dim.
Value* concat_groups(SymbolicContext& ctx, const Groups& g, DType dt, int64_t axis, Value* other, Value* total,
                     const std::function<Value*(SymbolicContext&, Value*)>& product) {
  Value* empty = zeros(ctx, ctx.op("Concat", axis == 0 ? std::vector<Value*>{ctx.const_ints({0}), other}
                                                       : std::vector<Value*>{other, ctx.const_ints({0})},
                                   {{"axis", int64_t{0}}}), dt);
  Value* done = helpers::loop(ctx, g.count, {empty},
                              [&](SymbolicContext& b, Value* i, const std::vector<Value*>& carried) {
                                return std::vector<Value*>{
                                    b.op("Concat", {carried[0], product(b, i)}, {{"axis", axis}})};
                              })[0];
  Value* rest = ctx.op("Sub", {total, size1(ctx, done, axis)});
  Value* pad = zeros(ctx, ctx.op("Concat", axis == 0 ? std::vector<Value*>{rest, other} : std::vector<Value*>{other, rest},
                                 {{"axis", int64_t{0}}}), dt);
  return ctx.op("Concat", {done, pad}, {{"axis", axis}});
}

Value* grouped(SymbolicContext& ctx, Value* a, Value* b, Value* offs, int64_t ra, int64_t rb, DType dt) {
  if (ra == 3 && rb == 3) {
    if (offs) ctx.fail("offs is not taken by the 3-D x 3-D layout");
    return ctx.op("MatMul", {a, b});
  }
  if (!offs) ctx.fail("the " + std::to_string(ra) + "-D x " + std::to_string(rb) + "-D layout needs offs");
  const Groups g = groups(ctx, offs);
  if (ra == 2 && rb == 3)  // rows of a per expert
    return concat_groups(ctx, g, dt, 0, size1(ctx, b, 2), size1(ctx, a, 0), [&](SymbolicContext& body, Value* i) {
      return body.op("MatMul", {group_slice(body, a, g, i, 0), body.op("Gather", {b, i}, {{"axis", int64_t{0}}})});
    });
  if (ra == 3 && rb == 2)  // columns of b per group
    return concat_groups(ctx, g, dt, 1, size1(ctx, a, 1), size1(ctx, b, 1), [&](SymbolicContext& body, Value* i) {
      return body.op("MatMul", {body.op("Gather", {a, i}, {{"axis", int64_t{0}}}), group_slice(body, b, g, i, 1)});
    });
  if (ra == 2 && rb == 2)  // groups along K: one (M, N) product each, stacked
    return helpers::loop(ctx, g.count, {},
                         [&](SymbolicContext& body, Value* i, const std::vector<Value*>&) {
                           return std::vector<Value*>{
                               body.op("MatMul", {group_slice(body, a, g, i, 1), group_slice(body, b, g, i, 0)})};
                         },
                         /*num_scan=*/1)[0];
  ctx.fail("mat_a and mat_b must be 2-D or 3-D, got " + std::to_string(ra) + "-D and " + std::to_string(rb) + "-D");
}

// aten::_grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None)
void grouped_mm(SymbolicContext& ctx) {
  if (ctx.num_args() > 3 && !ctx.none(3)) ctx.fail("a bias is not supported (PyTorch takes none either)");
  const DType dt = ctx.dtype(0);
  Value* a = ctx.in(0);
  Value* b = ctx.in_as(1, dt);
  Value* offs = ctx.num_args() > 2 && !ctx.none(2) ? ctx.in(2) : nullptr;
  ctx.out(grouped(ctx, a, b, offs, ctx.rank(0), ctx.rank(1), dt));
}

// transformers::grouped_mm_fallback(input, weight, offs): input (S, K) sorted
// by expert, weight (E, K, N), offs (E,) -> (S, N)
void grouped_mm_fallback(SymbolicContext& ctx) {
  if (ctx.rank(0) != 2 || ctx.rank(1) != 3) ctx.fail("expects input (S, K) and weight (E, K, N)");
  const DType dt = ctx.dtype(0);
  ctx.out(grouped(ctx, ctx.in(0), ctx.in_as(1, dt), ctx.in(2), 2, 3, dt));
}

}  // namespace

void register_grouped_mm(Registry& r) {
  r.add("aten::_grouped_mm", 11, grouped_mm);
  r.add("transformers::grouped_mm_fallback", 11, grouped_mm_fallback);
}

}  // namespace torch2onnx::symbolics
