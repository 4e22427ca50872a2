// Unsqueeze of an Unsqueeze is one Unsqueeze (a 1-D mask or position range
// brought to [1, 1, n, 1] one dim at a time): the inner one's input with the
// axes of both, when nothing else reads the inner result. The axes must be
// known (constants, or the attribute before opset 13) and the rank known
// where an axis is negative.
#include <algorithm>
#include <optional>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool is_unsqueeze(const ir::Node* n) { return n && n->op_type() == "Unsqueeze" && n->domain().empty(); }

std::optional<std::vector<int64_t>> axes_of(const ir::Node* n, int64_t opset) {
  if (opset < 13) {
    const ir::Attribute* a = n->attr("axes");
    if (!a || a->kind != ir::AttrKind::Ints) return std::nullopt;
    return a->ints;
  }
  if (n->num_inputs() < 2 || !n->input(1)) return std::nullopt;
  const ir::Tensor* t = n->input(1)->constant();
  if (!t || t->dims().size() > 1) return std::nullopt;
  return t->to_int64s();
}

// Axes normalized against `rank` (the result's), sorted; none if one is
// negative and the rank unknown, or out of range, or repeated.
std::optional<std::vector<int64_t>> normalized(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < 0) {
      if (rank < 0) return std::nullopt;
      a += rank;
    }
    if (a < 0 || (rank >= 0 && a >= rank)) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// The axes of the result of unsqueezing at `inner` (axes of the middle
// value), then at `outer` (axes of the result): the outer ones, and the inner
// ones where they land once the outer dims are in place.
std::vector<int64_t> combined(const std::vector<int64_t>& inner, const std::vector<int64_t>& outer) {
  std::vector<int64_t> out = outer;
  for (int64_t a : inner) {
    // the a-th dim of the middle value is the a-th final position not taken by an outer axis
    int64_t pos = -1;
    for (int64_t seen = -1; seen < a;) {
      ++pos;
      if (!std::binary_search(outer.begin(), outer.end(), pos)) ++seen;
    }
    out.push_back(pos);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void run(ir::Graph& g, int64_t opset) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub, opset);
    if (!is_unsqueeze(n)) continue;
    ir::Value* mid = n->input(0);
    ir::Node* p = mid ? mid->producer() : nullptr;
    if (!is_unsqueeze(p) || p->graph() != &g || mid->uses().size() != 1 || is_graph_output(mid)) continue;
    auto outer_axes = axes_of(n, opset), inner_axes = axes_of(p, opset);
    if (!outer_axes || !inner_axes) continue;
    auto outer = normalized(*outer_axes, n->output(0)->type().rank());
    auto inner = normalized(*inner_axes, mid->type().rank());
    if (!outer || !inner) continue;
    const std::vector<int64_t> axes = combined(*inner, *outer);
    ir::Value* x = p->input(0);
    if (opset < 13) {
      n->set_attr(ir::Attribute("axes", axes));
      n->replace_input(0, x);
    } else {
      g.set_insert_point(n);
      ir::Value* c = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s(axes)}})->output(0);
      g.set_insert_point(nullptr);
      c->set_type(ir::ValueType::tensor(ir::DType::Int64, {static_cast<int64_t>(axes.size())}));
      n->replace_input(0, x);
      n->replace_input(1, c);
    }
    p->destroy();
  }
}

}  // namespace

void fuse_unsqueezes(ir::Model& model, const PassContext&) { run(*model.graph, model.opset); }

}  // namespace torch2onnx::onnx_passes
