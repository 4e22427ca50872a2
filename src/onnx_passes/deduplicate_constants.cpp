// Initializers with the same dtype, dims and bytes are merged into the first
// one (tied or repeated weights); so are Constant nodes of the same graph.
// Weights read for the comparison let their pages go again (release_pages):
// the writer is their next reader.
#include <unordered_map>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

void dedup_constant_nodes(ir::Graph& g) {
  std::unordered_map<uint64_t, std::vector<ir::Value*>> seen;
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) dedup_constant_nodes(*sub);
    if (n->op_type() != "Constant" || !n->domain().empty()) continue;
    const ir::Tensor* t = n->output(0)->constant();
    if (!t) continue;
    auto& bucket = seen[t->fingerprint()];
    ir::Value* same = nullptr;
    for (ir::Value* v : bucket)
      if (v->constant()->same_content(*t)) same = v;
    if (!same) {
      bucket.push_back(n->output(0));
      continue;
    }
    bool is_output = false;
    for (const ir::Use& u : n->output(0)->uses()) is_output = is_output || !u.user;
    if (is_output) continue;
    n->output(0)->replace_all_uses_with(same);
    n->destroy();
  }
}

}  // namespace

void deduplicate_constants(ir::Model& model, const PassContext&) {
  ir::Graph& g = *model.graph;
  std::unordered_map<uint64_t, std::vector<ir::Value*>> seen;
  std::vector<ir::Value*> inits = g.initializers();
  for (ir::Value* v : inits) {
    if (v->is_graph_input()) continue;
    const ir::Tensor& t = *v->initializer();
    auto& bucket = seen[t.fingerprint()];
    ir::Value* same = nullptr;
    for (ir::Value* u : bucket) {
      if (u->initializer()->same_content(t)) same = u;
      u->initializer()->release_pages();
    }
    t.release_pages();
    if (!same) {
      bucket.push_back(v);
      continue;
    }
    bool is_output = false;
    for (const ir::Use& u : v->uses()) is_output = is_output || !u.user;
    if (is_output) continue;
    v->replace_all_uses_with(same);
    g.remove_initializer(v);
  }
  dedup_constant_nodes(g);
}

}  // namespace torch2onnx::onnx_passes
