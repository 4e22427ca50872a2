#include "convert/subgraph.h"

#include <vector>

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

ir::Value* optional_value(ir::Graph* g, ir::Value* value, ir::Value* present, int opset) {
  if (opset < 16)
    throw Error(Error::Kind::Conversion,
                "an output is an Optional that is None on some paths: ONNX has optional values in If "
                "from opset 16 (export with opset_version >= 16, or return a tensor on every path)");
  ir::ValueType element = value->type();
  element.kind = ir::ValueType::Kind::Tensor;
  const ir::ValueType type = ir::ValueType::optional(element);
  auto then_g = new_subgraph(g, "then_branch");
  ir::Value* some = then_g->create_node("Optional", {value}, 1)->output(0);
  some->set_type(type);
  then_g->add_output(some);
  auto else_g = new_subgraph(g, "else_branch");
  ir::ValueType none_type = element;  // its rank, dims unknown (the value may be a placeholder)
  for (ir::Dim& d : none_type.shape) d = ir::Dim{};
  ir::Value* none = else_g->create_node("Optional", {}, 1, {{"type", none_type}})->output(0);
  none->set_type(type);
  else_g->add_output(none);
  ir::Value* out = g->create_node("If", {present}, 1, {{"else_branch", else_g}, {"then_branch", then_g}})->output(0);
  out->set_type(type);
  return out;
}

}  // namespace torch2onnx::convert
