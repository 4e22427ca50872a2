// The main graph's Constant nodes become initializers, as torch.onnx's
// dynamo exporter writes them: the graph then holds only the nodes that
// compute. Constants inside subgraphs (If/Loop bodies) stay nodes, and so do
// constants that are graph outputs. With keep_initializers_as_inputs every
// initializer is also a graph input that a caller may override: constants
// then stay nodes, as in torch.onnx's TorchScript exporter.
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

void constants_to_initializers(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.keep_initializers_as_inputs) return;
  ir::Graph& g = *model.graph;
  std::vector<ir::Node*> constants;
  for (const auto& n : g.nodes())
    if (n->op_type() == "Constant" && n->domain().empty() && n->attributes().size() == 1 && n->has_attr("value") &&
        n->attr("value")->t && !is_graph_output(n->output(0)))
      constants.push_back(n.get());
  for (ir::Node* n : constants) {
    ir::Value* old = n->output(0);
    ir::Value* init = g.add_initializer(old->name(), *n->attr("value")->t);
    init->set_derived(true);
    old->replace_all_uses_with(init);
    n->destroy();
  }
}

}  // namespace torch2onnx::onnx_passes
