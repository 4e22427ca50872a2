// Copies: aten::copy_ (x[...] = y, tensor.copy_(src)) in its out-of-place
// form: src broadcast to self's shape, in self's dtype. Writes into views are
// turned into rebuilt bases by torch_passes/functionalize.cpp.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::copy(self, src, non_blocking=False)
void copy(SymbolicContext& ctx) {
  ir::Value* src = ctx.in_as(1, ctx.dtype(0));
  ctx.out(ctx.op("Expand", {src, ctx.op("Shape", {ctx.in(0)})}));
}

}  // namespace

void register_copy(Registry& r) { r.add("aten::copy", 9, copy); }

}  // namespace torch2onnx::symbolics
