// Transpose of a Transpose is one Transpose (x.permute(0, 2, 1, 3) then
// .transpose(-1, -2), as attention code writes keys), and a Transpose whose
// permutation is the identity is no node at all. The inner one's result must
// be in the same graph; both need their perm attribute (without it
// a Transpose reverses the dims, which needs the rank). Where the inner one
// has other readers too (a graph output, a Shape a later pass reads elsewhere)
// the outer one still reads x directly: no node more, and the inner one goes
// once its last other reader does.
#include <vector>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool is_transpose(const ir::Node* n) {
  return n && n->op_type() == "Transpose" && n->domain().empty() && n->has_attr("perm");
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (!is_transpose(n)) continue;
    ir::Value* mid = n->input(0);
    ir::Node* p = mid ? mid->producer() : nullptr;
    if (is_transpose(p) && p->graph() == &g) {
      const std::vector<int64_t> inner = p->attr_ints("perm"), outer = n->attr_ints("perm");
      if (inner.size() != outer.size()) continue;
      // out[i] = mid[outer[i]] = x[inner[outer[i]]]
      std::vector<int64_t> perm(outer.size());
      bool valid = true;
      for (size_t i = 0; i < outer.size() && valid; ++i) {
        valid = outer[i] >= 0 && outer[i] < static_cast<int64_t>(inner.size());
        if (valid) perm[i] = inner[static_cast<size_t>(outer[i])];
      }
      if (!valid) continue;
      n->set_attr(ir::Attribute("perm", perm));
      n->replace_input(0, p->input(0));
      if (mid->uses().empty() && !is_graph_output(mid)) p->destroy();
    }
    if (is_identity(n->attr_ints("perm")) && !is_graph_output(n->output(0))) {
      n->output(0)->replace_all_uses_with(n->input(0));
      n->destroy();
    }
  }
}

}  // namespace

void fuse_transposes(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
