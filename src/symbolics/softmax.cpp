// softmax / log_softmax. Before opset 13 ONNX's Softmax flattens the input to
// 2-D at `axis`, which is PyTorch's softmax only along the last dimension;
// other dims go through a transpose.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::softmax(self, dim, dtype=None)
ir::Value* input_with_dtype(SymbolicContext& ctx) {
  ir::Value* x = ctx.in(0);
  // softmax's third argument is an optional dtype; _softmax's is a bool (half_to_float).
  if (ctx.num_args() > 2 && ctx.arg(2).kind == Arg::Kind::Int) x = ctx.cast(x, ir::dtype_from_scalar_type(ctx.i(2)));
  return x;
}

void softmax_last_axis_only(SymbolicContext& ctx, const char* op) {
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
