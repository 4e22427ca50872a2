// Graph inputs the model does not read go, as torch.onnx drops them: an
// argument the forward ignores, or one read only for a shape that is static
// (folded to a constant). An input named in dynamic_axes keeps a run-time
// shape, so it stays when its shape is read. Initializers listed as inputs
// (keep_initializers_as_inputs) are not user inputs: they stay. A .pt2
// program's inputs all stay (PassContext::keep_unused_inputs).
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

void drop_unused_inputs(ir::Model& model, const PassContext& ctx) {
  if (ctx.keep_unused_inputs) return;
  ir::Graph& g = *model.graph;
  std::vector<ir::Value*> unused;
  size_t index = 0;
  for (ir::Value* v : g.inputs()) {
    if (v->is_initializer()) continue;
    if (!v->has_uses()) {
      unused.push_back(v);
      if (ctx.options.unused_input) ctx.options.unused_input(index, v->name());
    }
    ++index;
  }
  for (ir::Value* v : unused) g.remove_input(v);
}

}  // namespace torch2onnx::onnx_passes
