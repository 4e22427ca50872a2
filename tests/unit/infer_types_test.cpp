// onnx_passes::infer_types_for_fusions
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"

namespace torch2onnx {
namespace {

// -x[..., :4] of a static x [2, 4, 6, 8], the Slice's result without a type (no Shape node for
// fold_static_shapes to infer types for): its rank and sizes after the pass, at opset 23 only.
ir::ValueType slice_type_after(int opset) {
  ir::Model m;
  m.opset = opset;
  ExportOptions o;
  o.opset_version = opset;
  onnx_passes::PassContext ctx{o};
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 4, 6, 8}));
  auto ints = [&](int64_t v) {
    ir::Value* c = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({v})}})->output(0);
    c->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
    return c;
  };
  ir::Value* part = g.create_node("Slice", {x, ints(0), ints(4), ints(3)}, 1)->output(0);
  part->set_type(ir::ValueType::tensor(ir::DType::Float));
  ir::Value* y = g.create_node("Neg", {part}, 1)->output(0);
  y->set_type(ir::ValueType::tensor(ir::DType::Float));
  g.add_output(y);
  onnx_passes::infer_types_for_fusions(m, ctx);
  return part->type();
}

TEST(InferTypesForFusions, StaticValuesGetTheirShapesAtOpset23) {
  EXPECT_EQ(slice_type_after(23).static_dims(), (std::vector<int64_t>{2, 4, 6, 4}));
  EXPECT_EQ(slice_type_after(22).rank(), -1);
}

}  // namespace
}  // namespace torch2onnx
