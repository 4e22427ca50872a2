// Graph inputs the model does not read go, as torch.onnx drops them: an
// argument the forward ignores, or one read only by PyTorch operators that
// folded to constants as a whole (x.size(), zeros_like(x) where x's shape is
// static). One read by an operator whose nodes are still in the graph stays
// (x.view_as(y) with y's shape folded: torch.onnx keeps y; see
// note_input_readers), and so does a 0-d input that was read (torch.onnx
// never folds its shape), and a scripted forward()'s Optional[Tensor]
// parameter given a tensor (PassContext::kept_inputs). An input named in dynamic_axes keeps a run-time
// shape, so it stays when its shape is read. Initializers listed as inputs
// (keep_initializers_as_inputs) are not user inputs: they stay. A .pt2
// program's inputs all stay (PassContext::keep_unused_inputs).
#include <unordered_set>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

namespace {

// The PyTorch operators that still have nodes other than constants.
void live_origins(const ir::Graph& g, std::unordered_set<const ir::Origin*>& out) {
  for (const auto& n : g.nodes()) {
    for (const ir::Graph* sub : n->subgraphs()) live_origins(*sub, out);
    if (n->op_type() != "Constant" && n->origin()) out.insert(n->origin().get());
  }
}

}  // namespace

void drop_unused_inputs(ir::Model& model, const PassContext& ctx) {
  if (ctx.keep_unused_inputs) return;
  ir::Graph& g = *model.graph;
  std::unordered_set<const ir::Origin*> live;
  live_origins(g, live);
  // Read by an operator that is still there, or a 0-d input that was read.
  auto still_read = [&](const ir::Value* v) {
    auto it = ctx.input_readers.find(v);
    if (it == ctx.input_readers.end() || it->second.empty()) return false;
    if (v->type().has_shape && v->type().shape.empty()) return true;
    for (const ir::Origin* o : it->second)
      if (live.count(o)) return true;
    return false;
  };
  std::vector<ir::Value*> unused;
  size_t index = 0;
  for (ir::Value* v : g.inputs()) {
    if (v->is_initializer()) continue;
    if (!v->has_uses() && !still_read(v) && !ctx.kept_inputs.count(v)) {
      unused.push_back(v);
      if (ctx.options.unused_input) ctx.options.unused_input(index, v->name());
    }
    ++index;
  }
  for (ir::Value* v : unused) g.remove_input(v);
}

}  // namespace torch2onnx::onnx_passes
