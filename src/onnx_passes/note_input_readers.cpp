// Which PyTorch operators read each graph input, noted before any folding:
// torch.onnx drops an input only when no node of its final graph reads it,
// and it folds a PyTorch operator to a constant only as a whole (x.size(),
// zeros_like(x) with x's shape static), never a Shape inside an operator
// whose result still varies (x.view_as(y): Reshape(x, Shape(y)) keeps y an
// input). drop_unused_inputs keeps an input one of whose readers still has
// nodes in the graph after the folding passes.
#include <algorithm>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

void note_input_readers(ir::Model& model, const PassContext& ctx) {
  ctx.input_readers.clear();
  if (ctx.keep_unused_inputs) return;
  for (const ir::Value* v : model.graph->inputs()) {
    if (v->is_initializer()) continue;
    auto& readers = ctx.input_readers[v];
    for (const ir::Use& u : v->uses()) {
      if (!u.user || !u.user->origin()) continue;
      const ir::Origin* o = u.user->origin().get();
      if (std::find(readers.begin(), readers.end(), o) == readers.end()) readers.push_back(o);
    }
  }
}

}  // namespace torch2onnx::onnx_passes
