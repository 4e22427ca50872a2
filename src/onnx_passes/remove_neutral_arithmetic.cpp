// Arithmetic that changes nothing is no node: x + 0, 0 + x, x - 0 on
// integers (on floats x + 0 turns -0.0 into +0.0, so they stay), x * 1,
// 1 * x and x / 1 on any dtype. Such nodes come from sizes folded to
// constants (`arange(n) + past_length` without a cache: + 0) and scales of 1.
// The constant has one element and at most x's rank, and the result x's dtype,
// so the result is x itself: same values, shape and type.
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

// Whether c is a one-element constant equal to `neutral` that broadcasting
// against x cannot change x's shape.
bool is_neutral(ir::Value* c, ir::Value* x, double neutral) {
  const ir::Tensor* t = c ? c->constant() : nullptr;
  if (!t || t->numel() != 1 || t->dtype() != x->dtype()) return false;
  if (!t->dims().empty() && static_cast<int64_t>(t->dims().size()) > x->type().rank()) return false;
  return t->to_doubles()[0] == neutral;
}

// The operand the node passes on unchanged, or nullptr.
ir::Value* passed_on(ir::Node* n) {
  if (!n->domain().empty() || n->num_inputs() != 2 || n->num_outputs() != 1) return nullptr;
  ir::Value* a = n->input(0);
  ir::Value* b = n->input(1);
  const std::string& op = n->op_type();
  const bool add = op == "Add", sub = op == "Sub", mul = op == "Mul", div = op == "Div";
  if (!a || !b || !(add || sub || mul || div)) return nullptr;
  auto keeps = [&](ir::Value* x, ir::Value* c) {
    const ir::DType dt = x->dtype();
    if (dt == ir::DType::Undefined || dt != n->output(0)->dtype() || x->type().kind != ir::ValueType::Kind::Tensor)
      return false;
    if (add || sub) return ir::is_integral(dt) && is_neutral(c, x, 0);
    return is_neutral(c, x, 1);
  };
  if (keeps(a, b)) return a;
  if ((add || mul) && keeps(b, a)) return b;
  return nullptr;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    ir::Value* x = passed_on(n);
    if (!x || is_graph_output(n->output(0))) continue;
    n->output(0)->replace_all_uses_with(x);
    n->destroy();
  }
}

}  // namespace

void remove_neutral_arithmetic(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
