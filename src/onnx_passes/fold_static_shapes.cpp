// After shape inference: Shape and Size of a value whose shape is fully
// static become constants (axes named in dynamic_axes are never static, so
// their shape computations stay).
#include <algorithm>

#include "onnx_passes/passes.h"
#include "serialize/check.h"

namespace torch2onnx::onnx_passes {
namespace {

// Replaces `n`'s output by a constant int64 tensor.
void replace_by_constant(ir::Graph& g, ir::Node* n, ir::Tensor value) {
  g.set_insert_point(n);
  g.set_current_origin(n->origin());
  std::vector<int64_t> vdims = value.dims();
  ir::Value* c = g.create_node("Constant", {}, 1, {{"value", std::move(value)}})->output(0);
  c->set_type(ir::ValueType::tensor(ir::DType::Int64, vdims));
  g.set_insert_point(nullptr);
  g.set_current_origin(nullptr);
  n->output(0)->replace_all_uses_with(c);
  n->destroy();
}

// Gather(Shape(x), i) and Slice(Shape(x), ...) reading only static dims of x
// (a tensor with other, dynamic, dims) become constants.
bool fold_static_dims(ir::Graph& g, ir::Node* n, int64_t opset) {
  if (!n->domain().empty() || (n->op_type() != "Gather" && n->op_type() != "Slice")) return false;
  ir::Value* shape_value = n->input(0);
  ir::Node* shape = shape_value ? shape_value->producer() : nullptr;
  if (!shape || shape->op_type() != "Shape" || shape->has_attr("start") || shape->has_attr("end")) return false;
  const ir::ValueType& xt = shape->input(0)->type();
  if (!xt.has_shape || xt.kind != ir::ValueType::Kind::Tensor) return false;
  const int64_t rank = static_cast<int64_t>(xt.shape.size());
  auto static_dim = [&](int64_t i) -> std::optional<int64_t> {
    if (i < 0) i += rank;
    if (i < 0 || i >= rank || !xt.shape[static_cast<size_t>(i)].is_static()) return std::nullopt;
    return xt.shape[static_cast<size_t>(i)].value;
  };
  if (n->op_type() == "Gather") {
    const ir::Tensor* idx = n->input(1) ? n->input(1)->constant() : nullptr;
    if (!idx || n->attr_i("axis", 0) != 0) return false;
    std::vector<int64_t> out;
    for (int64_t i : idx->to_int64s()) {
      auto d = static_dim(i);
      if (!d) return false;
      out.push_back(*d);
    }
    replace_by_constant(g, n, ir::Tensor::from_int64s(out, idx->dims()));
    return true;
  }
  // Slice along axis 0 with constant bounds and step 1.
  std::vector<int64_t> starts, ends, steps{1};
  if (opset < 10) {
    starts = n->attr_ints("starts");
    ends = n->attr_ints("ends");
  } else {
    for (size_t k = 1; k < n->num_inputs(); ++k)
      if (n->input(k) && !n->input(k)->constant()) return false;
    if (n->num_inputs() < 3) return false;
    starts = n->input(1)->constant()->to_int64s();
    ends = n->input(2)->constant()->to_int64s();
    if (n->num_inputs() > 4 && n->input(4)) steps = n->input(4)->constant()->to_int64s();
  }
  if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] != 1) return false;
  int64_t s = starts[0] < 0 ? starts[0] + rank : starts[0];
  int64_t e = ends[0] < 0 ? ends[0] + rank : ends[0];
  s = std::clamp<int64_t>(s, 0, rank);
  e = std::clamp<int64_t>(e, 0, rank);
  std::vector<int64_t> out;
  for (int64_t i = s; i < e; ++i) {
    auto d = static_dim(i);
    if (!d) return false;
    out.push_back(*d);
  }
  replace_by_constant(g, n, ir::Tensor::from_int64s(out));
  return true;
}

bool run(ir::Graph& g, int64_t opset) {
  bool changed = false;
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) changed = run(*sub, opset) || changed;
    if (fold_static_dims(g, n, opset)) {
      changed = true;
      continue;
    }
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
    replace_by_constant(g, n, std::move(value));
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
    if (!run(*model.graph, model.opset)) break;
    fold_constants(model, ctx);
  }
}

}  // namespace torch2onnx::onnx_passes
