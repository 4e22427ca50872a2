#include "convert/subgraph.h"

#include <vector>

#include "serialize/infer_node.h"
#include "torch2onnx/options.h"

namespace torch2onnx::convert {

std::shared_ptr<ir::Graph> new_subgraph(ir::Graph* parent, const char* name) {
  auto g = std::make_shared<ir::Graph>(parent);
  g->set_name(parent->unique_name(name));
  return g;
}

ir::Value* local(ir::Value* v, ir::Graph* g, int opset) {
  if (v->producer() && v->graph() == g) return v;
  if (v->type().kind == ir::ValueType::Kind::Sequence && opset < 14) {
    ir::DType dt = v->type().dtype == ir::DType::Undefined ? ir::DType::Float : v->type().dtype;
    ir::Value* dummy = g->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(dt, 0)}})->output(0);
    ir::Value* zero = g->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Int64, 0)}})->output(0);
    ir::Value* with = g->create_node("SequenceInsert", {v, dummy, zero}, 1)->output(0);
    ir::Value* back = g->create_node("SequenceErase", {with, zero}, 1)->output(0);
    back->set_type(v->type());
    return back;
  }
  ir::Value* id = g->create_node("Identity", {v}, 1)->output(0);
  id->set_type(v->type());
  return id;
}

void with_rank(ir::Value* v, int64_t rank) {
  if (rank < 0 || v->type().has_shape) return;
  v->type().has_shape = true;
  v->type().shape.assign(static_cast<size_t>(rank), ir::Dim{});
}

ir::Value* const_bool(ir::Graph* g, bool b) {
  ir::Value* v = g->create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Bool, b ? 1 : 0)}})->output(0);
  v->set_type(ir::ValueType::tensor(ir::DType::Bool, {}));
  return v;
}

ir::Value* placeholder(ir::Graph* g, ir::DType dtype, int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank < 0 ? 1 : rank), 0);
  std::vector<double> values(dims.empty() ? 1 : 0, 0.0);
  ir::Value* p =
      g->create_node("Constant", {}, 1, {{"value", ir::Tensor::from_doubles(dtype, values, dims)}})->output(0);
  p->type().dtype = dtype;
  return p;
}

namespace {

// v's tensor type, looking through the If and Loop nodes that carry an
// optional value (their branches and iterations: the dims they agree on,
// names included), which ONNX's per-node inference here does not enter.
ir::ValueType carried_type(ir::Value* v, int opset, int depth = 0) {
  auto merged = [](ir::ValueType a, const ir::ValueType& b) {
    if (!a.has_shape || !b.has_shape || a.rank() != b.rank()) {
      a.has_shape = false;
      a.shape.clear();
      return a;
    }
    for (size_t i = 0; i < a.shape.size(); ++i)
      if (!(a.shape[i] == b.shape[i])) a.shape[i] = ir::Dim{};
    return a;
  };
  ir::Node* p = v->producer();
  if (depth < 8 && p && p->op_type() == "Identity") return carried_type(p->input(0), opset, depth + 1);
  if (depth < 8 && p && p->op_type() == "If") {
    const ir::Attribute* t = p->attr("then_branch");
    const ir::Attribute* e = p->attr("else_branch");
    const size_t i = v->output_index();
    if (t && e && t->g && e->g && i < t->g->outputs().size() && i < e->g->outputs().size())
      return merged(carried_type(t->g->outputs()[i], opset, depth + 1),
                    carried_type(e->g->outputs()[i], opset, depth + 1));
  }
  if (depth < 8 && p && p->op_type() == "Loop") {
    const ir::Attribute* b = p->attr("body");
    const size_t i = v->output_index();
    if (b && b->g && 2 + i < p->num_inputs() && 1 + i < b->g->outputs().size() && 2 + i < b->g->inputs().size()) {
      ir::Value* init = p->input(2 + i);
      ir::Value* out = b->g->outputs()[1 + i];
      while (out->producer() && out->producer()->op_type() == "Identity") out = out->producer()->input(0);
      const ir::ValueType first = carried_type(init, opset, depth + 1);
      // (a value the body passes on unchanged keeps the initial value's type)
      return out == b->g->inputs()[2 + i] ? first : merged(first, carried_type(out, opset, depth + 1));
    }
  }
  serialize::infer_value_type(v, opset);
  return v->type();
}

}  // namespace

ir::Value* optional_value(ir::Graph* g, ir::Value* value, ir::Value* present, int opset) {
  if (opset < 16)
    throw Error(Error::Kind::Conversion,
                "an output is an Optional that is None on some paths: ONNX has optional values in If "
                "from opset 16 (export with opset_version >= 16, or return a tensor on every path)");
  // (its dims as inference finds them, dynamic axes' names included: the
  // None branch declares the same, so the names reach the output)
  ir::ValueType element = carried_type(value, opset);
  element.dtype = value->type().dtype;
  element.kind = ir::ValueType::Kind::Tensor;
  const ir::ValueType type = ir::ValueType::optional(element);
  auto then_g = new_subgraph(g, "then_branch");
  ir::Value* some = then_g->create_node("Optional", {value}, 1)->output(0);
  some->set_type(type);
  then_g->add_output(some);
  auto else_g = new_subgraph(g, "else_branch");
  ir::ValueType none_type = element;
  ir::Value* none = else_g->create_node("Optional", {}, 1, {{"type", none_type}})->output(0);
  none->set_type(type);
  else_g->add_output(none);
  ir::Value* out = g->create_node("If", {present}, 1, {{"else_branch", else_g}, {"then_branch", then_g}})->output(0);
  out->set_type(type);
  return out;
}

}  // namespace torch2onnx::convert
