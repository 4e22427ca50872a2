// softmax / log_softmax. Before opset 13 ONNX's Softmax flattens the input to
// 2-D at `axis`, which is PyTorch's softmax only along the last dimension;
// other dims go through a transpose.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// The input in the output's dtype: softmax(self, dim, dtype=None) casts to
// dtype first; _softmax(self, dim, half_to_float) computes half in float.
ir::Value* input_with_dtype(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  if (!ir::is_floating(t)) ctx.fail("softmax of an integer tensor needs a floating dtype= (as in PyTorch)");
  return ctx.in_as(0, t);
}

// Softmax of a 0-d tensor: as a 1-element vector.
bool softmax_0d(SymbolicContext& ctx, const char* op) {
  if (ctx.rank(0) != 0) return false;
  helpers::normalize_dim(ctx, ctx.i(1), 1);
  ir::Value* y = ctx.op(op, {helpers::unsqueeze(ctx, input_with_dtype(ctx), {0})}, {{"axis", int64_t{0}}});
  ctx.out(helpers::squeeze(ctx, y, {0}));
  return true;
}

void softmax_last_axis_only(SymbolicContext& ctx, const char* op) {
  if (softmax_0d(ctx, op)) return;
  const int64_t rank = ctx.rank(0);
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), rank);
  ir::Value* x = input_with_dtype(ctx);
  if (dim == rank - 1) {
    ctx.out(ctx.op(op, {x}, {{"axis", dim}}));
    return;
  }
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(dim)], perm.back());
  ir::Value* t = ctx.op("Transpose", {x}, {{"perm", perm}});
  ir::Value* y = ctx.op(op, {t}, {{"axis", rank - 1}});
  ctx.out(ctx.op("Transpose", {y}, {{"perm", perm}}));
}

void softmax_any_axis(SymbolicContext& ctx, const char* op) {
  if (softmax_0d(ctx, op)) return;
  const int64_t dim = helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0));
  ctx.out(ctx.op(op, {input_with_dtype(ctx)}, {{"axis", dim}}));
}

void softmax_9(SymbolicContext& ctx) { softmax_last_axis_only(ctx, "Softmax"); }
void softmax_13(SymbolicContext& ctx) { softmax_any_axis(ctx, "Softmax"); }
void log_softmax_9(SymbolicContext& ctx) { softmax_last_axis_only(ctx, "LogSoftmax"); }
void log_softmax_13(SymbolicContext& ctx) { softmax_any_axis(ctx, "LogSoftmax"); }

}  // namespace

void register_softmax(Registry& r) {
  r.add("aten::softmax", 9, softmax_9);
  r.add("aten::softmax", 13, softmax_13);
  r.add("aten::log_softmax", 9, log_softmax_9);
  r.add("aten::log_softmax", 13, log_softmax_13);
  r.add("aten::_softmax", 9, softmax_9);
  r.add("aten::_softmax", 13, softmax_13);
  r.add("aten::_log_softmax", 9, log_softmax_9);
  r.add("aten::_log_softmax", 13, log_softmax_13);
}

}  // namespace torch2onnx::symbolics
