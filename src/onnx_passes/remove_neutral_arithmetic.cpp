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
//
// An operand filled to a size (ConstantOfShape) of an element-wise op is its
// one element, where the size analysis proves the other operands alone give
// the result its shape: `torch.min(x, torch.full_like(x, n - 1))` (MPNet's and
// T5's relative-position buckets) is Min(x, n - 1), without the Shape and the
// filled [seq, seq] tensor.
#include <algorithm>
#include <cstdint>
#include <vector>

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

// Replaces each filled operand of n that the others alone broadcast over by its one element.
void unfill_operands(ir::Graph& g, ir::Node* n) {
  if (!sizes::broadcasts(n) || n->num_outputs() != 1) return;
  ir::Value* out = n->output(0);
  const int64_t rank = out->type().rank_varies || !out->type().has_shape ? -1 : out->type().rank();
  if (rank < 0) return;
  for (size_t i = 0; i < n->num_inputs(); ++i) {
    ir::Value* filled = n->input(i);
    ir::Node* f = filled ? filled->producer() : nullptr;
    if (!f || f->op_type() != "ConstantOfShape" || !f->domain().empty()) continue;
    // the others: of known rank, the highest being the result's, and each result dim one of theirs
    std::vector<ir::Value*> others;
    int64_t top = -1;
    for (size_t k = 0; k < n->num_inputs(); ++k) {
      ir::Value* o = n->input(k);
      if (k == i) continue;
      if (!o || o->type().rank_varies || !o->type().has_shape) return;
      others.push_back(o);
      top = std::max(top, o->type().rank());
    }
    if (others.empty() || top != rank) continue;
    bool covered = true;
    for (int64_t a = 0; a < rank && covered; ++a) {
      const sizes::Size d = sizes::dim_of(out, a);
      if (d == sizes::constant_size(1)) continue;
      covered = false;
      for (ir::Value* o : others) {
        const int64_t k = a - (rank - o->type().rank());
        if (k >= 0 && sizes::dim_of(o, k) == d) covered = true;
      }
    }
    if (!covered) continue;
    const ir::Attribute* v = f->attr("value");
    ir::Tensor one = ir::Tensor::scalar(ir::DType::Float, 0.0);  // (ConstantOfShape's default)
    if (v && v->t)
      one = ir::Tensor::owned(v->t->dtype(), {}, std::vector<uint8_t>(v->t->data(), v->t->data() + v->t->nbytes()));
    if (one.numel() != 1) continue;
    const ir::DType dt = one.dtype();
    g.set_insert_point(n);
    ir::Value* c = g.create_node("Constant", {}, 1, {{"value", std::move(one)}})->output(0);
    g.set_insert_point(nullptr);
    c->set_type(ir::ValueType::tensor(dt, std::vector<int64_t>{}));
    n->replace_input(i, c);
  }
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (!g.parent()) unfill_operands(g, n);  // (main graph: as read_sizes_at_inputs)
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
