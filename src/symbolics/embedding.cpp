// Embedding lookups.
#include "symbolic/helpers.h"
#include "symbolics/all.h"

namespace torch2onnx::symbolics {
namespace {

// aten::embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
// padding_idx and the rest only matter for gradients.
void embedding(SymbolicContext& ctx) {
  ctx.out(ctx.op("Gather", {ctx.in(0), ctx.in_as(1, ir::DType::Int64)}, {{"axis", int64_t{0}}}));
}

}  // namespace

void register_embedding(Registry& r) { r.add("aten::embedding", 9, embedding); }

}  // namespace torch2onnx::symbolics
