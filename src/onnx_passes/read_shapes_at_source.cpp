// Shape (and Size) of an element-wise unary result is read from its input
// instead: Shape(Cast(mask)) is Shape(mask), which the graph usually reads
// already, so common-subexpression elimination merges the two reads and what
// was computed from them (a mask's length taken once, not once per cast).
// Only operators whose output has their input's shape whatever the values
// (sizes::keeps_shape: the size analysis looks through the same ones).
#include <string>

#include "onnx_passes/passes.h"
#include "onnx_passes/sizes.h"

namespace torch2onnx::onnx_passes {
namespace {

// The value whose shape v has, looking through the ops that keep their
// first input's shape (the size analysis' list: sizes::keeps_shape; output 0
// only, as LayerNormalization's statistics have the reduced axes 1).
ir::Value* shape_source(ir::Value* v) {
  for (ir::Node* p = v->producer(); p && sizes::keeps_shape(p) && v == p->output(0) && p->num_inputs() >= 1 &&
                                    p->input(0) && p->input(0)->type().kind == ir::ValueType::Kind::Tensor &&
                                    v->type().kind == ir::ValueType::Kind::Tensor;
       p = v->producer())
    v = p->input(0);
  return v;
}

void run(ir::Graph& g) {
  for (const auto& n : g.nodes()) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub);
    if ((n->op_type() != "Shape" && n->op_type() != "Size") || !n->domain().empty() || !n->input(0)) continue;
    ir::Value* src = shape_source(n->input(0));
    if (src != n->input(0)) n->replace_input(0, src);
  }
}

}  // namespace

void read_shapes_at_source(ir::Model& model, const PassContext&) { run(*model.graph); }

}  // namespace torch2onnx::onnx_passes
