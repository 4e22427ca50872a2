// Opset 24: x * Sigmoid(x) -> Swish(x) (alpha 1), from aten::silu and from
// models that write the product themselves. Only at 24: ONNX Runtime 1.32 has
// a Swish kernel for opset 24 alone (a model at 25-28 holding Swish fails to
// load there), so at 25 and above the product stays; swish_runs_at() is the
// one place to widen once the pinned ONNX Runtime runs it.
#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

bool swish_runs_at(int64_t opset) { return opset == 24; }

namespace {

bool swish_dtype(ir::DType t) {
  return t == ir::DType::Float || t == ir::DType::Float16 || t == ir::DType::BFloat16 || t == ir::DType::Double;
}

// The x of Mul(x, Sigmoid(x)) / Mul(Sigmoid(x), x), or nullptr.
ir::Value* swish_input(ir::Node* n) {
  if (n->op_type() != "Mul" || !n->domain().empty() || n->num_inputs() != 2 || n->num_outputs() != 1) return nullptr;
  for (int k = 0; k < 2; ++k) {
    ir::Node* s = match::producer_of(n->input(k), "Sigmoid");
    ir::Value* x = n->input(1 - k);
    if (!s || s->input(0) != x) continue;
    const ir::DType t = x->dtype();
    if (!swish_dtype(t) || n->output(0)->dtype() != t) return nullptr;
    return x;
  }
  return nullptr;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    ir::Value* x = swish_input(n);
    if (!x) continue;
    ir::Value* y = n->output(0);
    g.set_insert_point(n);
    ir::Node* swish = g.create_node("Swish", {x}, 1, {{"alpha", 1.0}});
    g.set_insert_point(nullptr);
    swish->output(0)->set_type(y->type());
    replace_keeping_name(g, y, swish->output(0));
    n->destroy();  // (a Sigmoid read by nothing else goes with eliminate_dead_code)
  }
}

}  // namespace

void fuse_swish(ir::Model& model, const PassContext& ctx) {
  if (!swish_runs_at(ctx.options.opset_version)) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
