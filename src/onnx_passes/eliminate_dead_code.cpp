#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

void run(ir::Graph& g) {
  // Reverse order, so a chain of dead nodes goes in one sweep.
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    ir::Node* n = *it;
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    bool used = false;
    for (ir::Value* o : n->outputs()) used = used || o->has_uses();
    if (!used) n->destroy();
  }
  std::vector<ir::Value*> inits = g.initializers();
  for (ir::Value* v : inits)
    if (!v->has_uses() && !v->is_graph_input()) g.remove_initializer(v);
}

}  // namespace

void eliminate_dead_code(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
