// A Concat of a Concat along the same axis is one Concat (Inception's blocks
// concatenate branches that are concatenations themselves): the inner one's
// inputs take its place when nothing else reads its result.
#include <optional>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool is_concat(const ir::Node* n) { return n && n->op_type() == "Concat" && n->domain().empty(); }

// The axis, normalized when the rank is known (Concat's axis may be negative).
std::optional<int64_t> axis_of(const ir::Node* n) {
  int64_t axis = n->attr_i("axis", 0);
  if (axis >= 0) return axis;
  const int64_t rank = n->output(0)->type().rank();
  if (rank < 0) return std::nullopt;
  return axis + rank;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (!is_concat(n)) continue;
    const auto axis = axis_of(n);
    if (!axis) continue;
    for (size_t i = 0; i < n->num_inputs();) {
      ir::Value* in = n->input(i);
      ir::Node* p = in ? in->producer() : nullptr;
      if (!is_concat(p) || p->graph() != &g || in->uses().size() != 1 || is_graph_output(in) || axis_of(p) != axis) {
        ++i;
        continue;
      }
      std::vector<ir::Value*> inner = p->inputs();
      std::vector<ir::Value*> ins = n->inputs();
      ins.erase(ins.begin() + static_cast<std::ptrdiff_t>(i));
      ins.insert(ins.begin() + static_cast<std::ptrdiff_t>(i), inner.begin(), inner.end());
      n->remove_all_inputs();
      for (ir::Value* v : ins) n->add_input(v);
      p->destroy();
      i += inner.size();
    }
  }
}

}  // namespace

void fuse_concats(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
