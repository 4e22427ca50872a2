// Dropout: the identity at inference (train=False, what eval mode records);
// ONNX Dropout in training mode otherwise.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::dropout(input, p, train) and its feature/alpha variants.
void dropout_9(SymbolicContext& ctx) {
  if (!ctx.b(2)) {
    ctx.out(ctx.in(0));
    return;
  }
  ctx.fail("dropout in training mode needs opset 12 or later");
}

void dropout_12(SymbolicContext& ctx) {
  if (!ctx.b(2)) {
    ctx.out(ctx.in(0));
    return;
  }
  if (ctx.kind() != "aten::dropout") ctx.fail("only plain dropout can be exported in training mode");
  ir::Value* ratio = ctx.const_scalar(ir::is_floating(ctx.dtype(0)) ? ctx.dtype(0) : ir::DType::Float, ctx.f(1));
  ir::Value* training = ctx.constant(ir::Tensor::scalar_int(ir::DType::Bool, 1));
  ctx.out(ctx.op_n("Dropout", {ctx.in(0), ratio, training}, 1)[0]);
}

}  // namespace

void register_dropout(Registry& r) {
  for (const char* op : {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"}) {
    r.add(op, 9, dropout_9);
    r.add(op, 12, dropout_12);
  }
}

}  // namespace torch2onnx::symbolics
