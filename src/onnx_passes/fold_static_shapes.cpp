// After shape inference: Shape and Size of a value whose shape is fully
// static become constants (axes named in dynamic_axes are never static, so
// their shape computations stay).
#include <algorithm>

#include "onnx_passes/passes.h"
#include "serialize/check.h"

namespace torch2onnx::onnx_passes {
namespace {

bool run(ir::Graph& g) {
  bool changed = false;
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) changed = run(*sub) || changed;
    if (!n->domain().empty() || (n->op_type() != "Shape" && n->op_type() != "Size")) continue;
    ir::Value* in = n->input(0);
    if (!in || !in->type().fully_static() || in->type().kind != ir::ValueType::Kind::Tensor) continue;
    std::vector<int64_t> dims = in->type().static_dims();
    ir::Tensor value;
    if (n->op_type() == "Size") {
      int64_t numel = 1;
      for (int64_t d : dims) numel *= d;
      value = ir::Tensor::from_int64s({numel}, {});
    } else {
      const int64_t r = static_cast<int64_t>(dims.size());
      auto norm = [r](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
      int64_t s = norm(n->attr_i("start", 0));
      int64_t e = n->has_attr("end") ? norm(n->attr_i("end", r)) : r;
      value = ir::Tensor::from_int64s(std::vector<int64_t>(dims.begin() + s, dims.begin() + std::max(s, e)));
    }
    g.set_insert_point(n);
    g.set_current_origin(n->origin());
    std::vector<int64_t> vdims = value.dims();
    ir::Value* c = g.create_node("Constant", {}, 1, {{"value", std::move(value)}})->output(0);
    c->set_type(ir::ValueType::tensor(ir::DType::Int64, vdims));
    g.set_insert_point(nullptr);
    g.set_current_origin(nullptr);
    n->output(0)->replace_all_uses_with(c);
    n->destroy();
    changed = true;
  }
  return changed;
}

bool has_shape_ops(const ir::Graph& g) {
  for (const auto& n : g.nodes()) {
    if (n->op_type() == "Shape" || n->op_type() == "Size") return true;
    for (ir::Graph* sub : n->subgraphs())
      if (has_shape_ops(*sub)) return true;
  }
  return false;
}

}  // namespace

void fold_static_shapes(ir::Model& model, const PassContext& ctx) {
  if (!ctx.options.do_constant_folding || !has_shape_ops(*model.graph)) return;
  // Folding one Shape can make others static: iterate to a fixed point.
  for (int round = 0; round < 8; ++round) {
    serialize::infer_types(model);
    if (!run(*model.graph)) break;
    fold_constants(model, ctx);
  }
}

}  // namespace torch2onnx::onnx_passes
