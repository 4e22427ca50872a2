// Arithmetic that changes nothing is no node: x + 0, 0 + x, x - 0 on
// integers (on floats x + 0 turns -0.0 into +0.0, so they stay), x * 1,
// 1 * x and x / 1 on any dtype. Such nodes come from sizes folded to
// constants (`arange(n) + past_length` without a cache: + 0) and scales of 1.
// The constant has one element and at most x's rank, and the result x's dtype,
// so the result is x itself: same values, shape and type.
//
// Where(c, x, y) with c true everywhere is x, where the size analysis proves
// that broadcasting against c and y leaves x's shape as it is: the mask
// transformers builds under torch.export for an encoder called without one
// (ViT, DINOv2: an all-true constant expanded to [batch, 1, seq, seq]).
#include "onnx_passes/passes.h"
#include "onnx_passes/sizes.h"

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

// Whether v is true everywhere: a bool constant of trues, or one viewed,
// expanded or cast to bool (from nonzero numbers) without changing a value.
bool all_true(ir::Value* v, int depth = 0) {
  if (!v || depth > 8) return false;
  if (const ir::Tensor* t = v->constant()) {
    if (t->numel() == 0 || (t->dtype() != ir::DType::Bool && !ir::is_integral(t->dtype()) && !ir::is_floating(t->dtype())))
      return false;
    for (double e : t->to_doubles())
      if (e == 0) return false;
    return t->dtype() == ir::DType::Bool || depth > 0;  // (a number is true only through a Cast to bool)
  }
  ir::Node* p = v->producer();
  if (!p || !p->domain().empty() || !p->input(0)) return false;
  const std::string& op = p->op_type();
  if (op == "Expand" || op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
      op == "Flatten" || op == "Transpose")
    return all_true(p->input(0), depth);
  if (op == "Cast" && p->attr_i("to", 0) == static_cast<int64_t>(ir::DType::Bool)) return all_true(p->input(0), depth + 1);
  return false;
}

// Where(c, x, y) -> x when c is true everywhere and the result has x's shape.
ir::Value* where_taken(ir::Node* n) {
  if (n->op_type() != "Where" || !n->domain().empty() || n->num_inputs() != 3 || !all_true(n->input(0))) return nullptr;
  ir::Value* x = n->input(1);
  ir::Value* out = n->output(0);
  const int64_t rank = x->type().rank_varies ? -1 : x->type().rank();
  if (rank < 0 || x->dtype() != out->dtype() || out->type().rank_varies || out->type().rank() != rank) return nullptr;
  for (ir::Value* other : {n->input(0), n->input(2)})
    if (other->type().rank_varies || other->type().rank() < 0 || other->type().rank() > rank) return nullptr;
  for (int64_t k = 0; k < rank; ++k)
    if (sizes::dim_of(out, k) != sizes::dim_of(x, k)) return nullptr;
  return x;
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    ir::Value* x = passed_on(n);
    if (!x) x = where_taken(n);
    if (!x || is_graph_output(n->output(0))) continue;
    n->output(0)->replace_all_uses_with(x);
    n->destroy();
  }
}

}  // namespace

void remove_neutral_arithmetic(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
