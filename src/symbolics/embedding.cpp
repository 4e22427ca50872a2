// Embedding lookups: embedding (Gather), embedding_renorm (max_norm), and
// embedding_bag (sum / mean / max over bags given by offsets).
#include <cmath>
#include <limits>

#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
// padding_idx and the rest only matter for gradients.
void embedding(SymbolicContext& ctx) {
  ctx.out(ctx.op("Gather", {ctx.in(0), ctx.in_as(1, ir::DType::Int64)}, {{"axis", int64_t{0}}}));
}

// The p-norm of each row of a 2-D tensor, as [rows, 1].
ir::Value* row_norms(SymbolicContext& ctx, ir::Value* w, double p, ir::DType dt) {
  if (p == 2) return helpers::reduce(ctx, "ReduceL2", w, {1}, true);
  if (p == 1) return helpers::reduce(ctx, "ReduceL1", w, {1}, true);
  ir::Value* a = ctx.op("Abs", {w});
  if (std::isinf(p)) return helpers::reduce(ctx, p > 0 ? "ReduceMax" : "ReduceMin", a, {1}, true);
  if (p == 0) return helpers::reduce(ctx, "ReduceSum", ctx.cast(ctx.op("Greater", {a, ctx.const_scalar(dt, 0)}), dt),
                                     {1}, true);
  ir::Value* s = helpers::reduce(ctx, "ReduceSum", ctx.op("Pow", {a, ctx.const_scalar(dt, p)}), {1}, true);
  return ctx.op("Pow", {s, ctx.const_scalar(dt, 1.0 / p)});
}

// aten::embedding_renorm_(weight, indices, max_norm, norm_type) (what embedding(max_norm=...)
// records; functionalized to its out-of-place form): each row referenced by
// `indices` whose norm exceeds max_norm is scaled by max_norm / (norm + 1e-7).
void embedding_renorm(SymbolicContext& ctx, const char* scatter) {
  const ir::DType dt = ctx.dtype(0);
  if (ctx.rank(0) != 2) ctx.fail("the embedding weight must be 2-D");
  const double max_norm = ctx.f(2), p = ctx.f(3);
  ir::Value* w = ctx.in(0);
  ir::Value* idx = helpers::reshape(ctx, ctx.in_as(1, ir::DType::Int64), {-1});
  // referenced[r] = 1 for rows named in indices (a scatter of ones into zeros).
  ir::Value* rows = helpers::slice(ctx, ctx.op("Shape", {w}), {0}, {0}, {1});
  ir::Value* zeros = ctx.op("ConstantOfShape", {rows}, {{"value", ir::Tensor::from_doubles(dt, {0.0}, {1})}});
  ir::Value* ones = ctx.op("ConstantOfShape", {ctx.op("Shape", {idx})}, {{"value", ir::Tensor::from_doubles(dt, {1.0}, {1})}});
  ir::Value* referenced = ctx.op(scatter, {zeros, idx, ones}, {{"axis", int64_t{0}}});
  referenced = helpers::unsqueeze(ctx, referenced, {1});  // [rows, 1]
  ir::Value* norm = row_norms(ctx, w, p, dt);
  ir::Value* scale = ctx.op("Div", {ctx.const_scalar(dt, max_norm), ctx.op("Add", {norm, ctx.const_scalar(dt, 1e-7)})});
  ir::Value* over = ctx.op("Greater", {norm, ctx.const_scalar(dt, max_norm)});
  ir::Value* apply = ctx.op("And", {over, ctx.cast(referenced, ir::DType::Bool)});
  ctx.out(ctx.op("Where", {apply, ctx.op("Mul", {w, scale}), w}));
}
void embedding_renorm_9(SymbolicContext& ctx) { embedding_renorm(ctx, "Scatter"); }
void embedding_renorm_11(SymbolicContext& ctx) { embedding_renorm(ctx, "ScatterElements"); }

// aten::embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
//                     include_last_offset[, padding_idx]) -> (output, offset2bag, bag_size, max_indices)
//
// Bag b holds indices[offsets[b] : offsets[b + 1]] (the last bag runs to the
// end, or include_last_offset makes the last offset its end). Each index
// position j belongs to bag (number of offsets <= j) - 1; a [bags, n] one-hot
// membership matrix then sums (MatMul), averages or maximizes the gathered
// rows, with offsets known only at run time. Empty bags give zeros, as in
// PyTorch. Only the first output (the bags) is exported.
void embedding_bag(SymbolicContext& ctx) {
  const ir::DType dt = ctx.dtype(0);
  if (ctx.rank(0) != 2) ctx.fail("the embedding weight must be 2-D");
  if (ctx.rank(1) != 1) ctx.fail("indices must be 1-D here (2-D inputs are flattened by F.embedding_bag)");
  const int64_t mode = ctx.i(4);
  if (mode < 0 || mode > 2) ctx.fail("unknown mode " + std::to_string(mode));
  ir::Value* psw = ctx.num_args() > 6 ? ctx.opt_in(6) : nullptr;
  if (psw && mode != 0) ctx.fail("per_sample_weights is only supported for mode='sum'");
  const bool include_last = ctx.num_args() > 7 && !ctx.none(7) && ctx.b(7);
  // padding_idx: None for none in embedding_bag, which counts negative values from the end;
  // _embedding_bag takes it normalized, -1 for none.
  std::optional<int64_t> pad_arg = ctx.num_args() > 8 ? ctx.opt_i(8) : std::nullopt;
  if (pad_arg && pad_arg.value_or(0) < 0 && ctx.kind() == "aten::embedding_bag")
    pad_arg = pad_arg.value_or(0) + ctx.sizes(0)[0];
  const bool has_padding = pad_arg.has_value() && pad_arg.value_or(-1) >= 0;
  const int64_t padding_idx = pad_arg.value_or(-1);

  ir::Value* idx = ctx.in_as(1, ir::DType::Int64);
  ir::Value* offsets = ctx.in_as(2, ir::DType::Int64);
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  ir::Value* n = ctx.op("Shape", {idx});  // [1]
  // Bag b covers positions [starts[b], ends[b]).
  ir::Value* starts = offsets;
  ir::Value* ends = helpers::slice(ctx, offsets, {0}, {1}, {kEnd});
  if (include_last)
    starts = helpers::slice(ctx, offsets, {0}, {0}, {-1});
  else
    ends = ctx.op("Concat", {ends, n}, {{"axis", int64_t{0}}});

  ir::Value* pos = helpers::arange(ctx, helpers::squeeze(ctx, n, {0}));  // positions 0..n-1
  pos = helpers::unsqueeze(ctx, pos, {0});                       // [1, n]
  ir::Value* s2 = helpers::unsqueeze(ctx, starts, {1});          // [B, 1]
  ir::Value* e2 = helpers::unsqueeze(ctx, ends, {1});            // [B, 1]
  ir::Value* member = ctx.op("And", {ctx.op("Not", {ctx.op("Less", {pos, s2})}), ctx.op("Less", {pos, e2})});
  if (has_padding) {
    ir::Value* keep =
        ctx.op("Not", {ctx.op("Equal", {idx, ctx.const_scalar(ir::DType::Int64, static_cast<double>(padding_idx))})});
    member = ctx.op("And", {member, helpers::unsqueeze(ctx, keep, {0})});
  }
  ir::Value* weights = ctx.cast(member, dt);                     // [B, n]
  ir::Value* count = helpers::reduce(ctx, "ReduceSum", weights, {1}, true);  // [B, 1]

  ir::Value* rows = ctx.op("Gather", {ctx.in(0), idx}, {{"axis", int64_t{0}}});  // [n, D]
  if (psw) rows = ctx.op("Mul", {rows, helpers::unsqueeze(ctx, ctx.cast(psw, dt), {1})});
  ir::Value* y;
  if (mode == 2) {
    // max: over the bag's rows; empty bags give 0.
    ir::Value* m3 = helpers::unsqueeze(ctx, member, {2});  // [B, n, 1]
    ir::Value* masked = ctx.op("Where", {m3, helpers::unsqueeze(ctx, rows, {0}), ctx.const_scalar(dt, -INFINITY)});
    y = helpers::reduce(ctx, "ReduceMax", masked, {1}, false);  // [B, D]
    y = ctx.op("Where", {ctx.op("Greater", {count, ctx.const_scalar(dt, 0)}), y, ctx.const_scalar(dt, 0)});
  } else {
    y = ctx.op("MatMul", {weights, rows});
    if (mode == 1) y = ctx.op("Div", {y, ctx.op("Max", {count, ctx.const_scalar(dt, 1)})});
  }
  ctx.out(y, 0);
}

}  // namespace

void register_embedding(Registry& r) {
  r.add("aten::embedding", 9, embedding);
  r.add("aten::embedding_renorm", 9, embedding_renorm_9);
  r.add("aten::embedding_renorm", 11, embedding_renorm_11);
  r.add("aten::embedding_bag", 9, embedding_bag);
  r.add("aten::_embedding_bag", 9, embedding_bag);
}

}  // namespace torch2onnx::symbolics
