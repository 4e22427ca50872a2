#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (n->op_type() != "Identity" || !n->domain().empty()) continue;
    ir::Value* in = n->input(0);
    ir::Value* out = n->output(0);
    if (is_graph_output(out)) {
      // Keep the output's name: bypass only when the input is a plain
      // intermediate value that can take the name over.
      if (!in->producer() || is_graph_output(in) || in->graph() != &g) continue;
      const std::string name = out->name();
      out->replace_all_uses_with(in);
      n->destroy();
      g.names().release(name);  // the Identity's output is gone; its name passes on
      g.rename(in, name);
      continue;
    }
    out->replace_all_uses_with(in);
    n->destroy();
  }
}

}  // namespace

void remove_identities(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
