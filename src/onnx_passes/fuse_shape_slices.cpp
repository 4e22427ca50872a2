// Opset 15+ (Shape's start / end): the sizes of a tensor taken one at a time
// and put back into a 1-D shape, as converters write x.size(i) in a view:
//
//   Unsqueeze(Gather(Shape(x), i), [0])        -> Shape(x, start=i, end=i+1)
//   Concat(Shape(x, a, b), Shape(x, b, c))     -> Shape(x, start=a, end=c)
//
// The Gather's index a constant scalar (negative: counted from x's rank, which
// must be known); the Shape may itself have start / end; such Unsqueezes are
// all that read the Gather, which goes (the new slices, one per Unsqueeze,
// are merged by eliminate_common_subexpressions). Adjacent Shape slices of one x in a Concat along axis 0
// merge. Saves a node per size, the more so in per-layer shape arithmetic.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using match::const_ints;
using match::producer_of;

// Shape(x[, start, end]) with known bounds: x and [start, end) normalized.
struct ShapeRange {
  ir::Value* x;
  int64_t start, end;
};

std::optional<ShapeRange> shape_range(ir::Value* v) {
  ir::Node* s = producer_of(v, "Shape");
  if (!s) return std::nullopt;
  ir::Value* x = s->input(0);
  const int64_t rank = x->type().rank_varies ? -1 : x->type().rank();
  if (rank < 0) return std::nullopt;
  auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(rank, k < 0 ? k + rank : k)); };
  return ShapeRange{x, clamp(s->attr_i("start", 0)), clamp(s->attr_i("end", rank))};
}

ir::Value* shape_slice(ir::Graph& g, ir::Node* before, ir::Value* x, int64_t start, int64_t end) {
  g.set_insert_point(before);
  ir::Value* s = match::shape_slice(g, x, start, end);
  g.set_insert_point(nullptr);
  return s;
}

bool is_unsqueeze_0(const ir::Node* n) {
  return n->op_type() == "Unsqueeze" && n->domain().empty() && n->num_inputs() == 2 &&
         const_ints(n->input(1)) == std::vector<int64_t>{0};
}

void run(ir::Graph& g) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if (!n->domain().empty()) continue;
    if (is_unsqueeze_0(n)) {
      ir::Node* gather = producer_of(n->input(0), "Gather");
      if (!gather || gather->attr_i("axis", 0) != 0 || is_graph_output(gather->output(0))) continue;
      bool only_unsqueezed = true;  // (else the Gather stays, and a slice saves nothing)
      for (const ir::Use& u : gather->output(0)->uses())
        only_unsqueezed = only_unsqueezed && u.user && is_unsqueeze_0(u.user);
      if (!only_unsqueezed) continue;
      const ir::Tensor* idx = gather->input(1)->constant();
      const auto r = shape_range(gather->input(0));
      if (!idx || !idx->dims().empty() || !r) continue;
      const int64_t size = r->end - r->start;
      int64_t i = idx->to_int64s()[0];
      if (i < 0) i += size;
      if (i < 0 || i >= size) continue;
      replace_value(g, n->output(0), shape_slice(g, n, r->x, r->start + i, r->start + i + 1));
    } else if (n->op_type() == "Concat" && n->attr_i("axis", 0) == 0 && n->num_inputs() >= 2) {
      // merge runs of adjacent slices of one x
      std::vector<ir::Value*> parts;
      bool merged = false;
      for (ir::Value* in : n->inputs()) {
        const auto cur = shape_range(in);
        const auto prev = parts.empty() ? std::nullopt : shape_range(parts.back());
        if (cur && prev && cur->x == prev->x && prev->end == cur->start) {
          parts.back() = shape_slice(g, n, cur->x, prev->start, cur->end);
          merged = true;
        } else {
          parts.push_back(in);
        }
      }
      if (!merged) continue;
      if (parts.size() == 1) {
        replace_value(g, n->output(0), parts[0]);
        continue;
      }
      for (size_t k = 0; k < parts.size(); ++k) n->replace_input(k, parts[k]);
      while (n->num_inputs() > parts.size()) n->remove_input(n->num_inputs() - 1);
    }
  }
}

}  // namespace

void fuse_shape_slices(ir::Model& model, const PassContext&) {
  if (model.opset < 15) return;
  run(*model.graph);
}

}  // namespace torch2onnx::onnx_passes
