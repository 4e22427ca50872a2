// onnx_passes::eliminate_common_subexpressions
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  void run() {
    onnx_passes::eliminate_common_subexpressions(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
};

TEST(EliminateCommonSubexpressions, TheSameShapeArithmeticIsComputedOnce) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float));
  ir::Value* idx = f.g.create_node("Constant", {}, 1, {{"value", ir::Tensor::scalar_int(ir::DType::Int64, 0)}})->output(0);
  std::vector<ir::Value*> dims;
  for (int layer = 0; layer < 3; ++layer) {  // each "layer" computes x.size(0) again
    ir::Value* shape = f.g.create_node("Shape", {x}, 1)->output(0);
    ir::Value* d = f.g.create_node("Gather", {shape, idx}, 1, {{"axis", int64_t{0}}})->output(0);
    dims.push_back(d);
  }
  ir::Value* sum = f.g.create_node("Add", {dims[0], dims[1]}, 1)->output(0);
  ir::Value* total = f.g.create_node("Add", {sum, dims[2]}, 1)->output(0);
  f.g.add_output(total);
  f.run();
  EXPECT_EQ(f.count("Shape"), 1u);
  EXPECT_EQ(f.count("Gather"), 1u);
  EXPECT_EQ(total->producer()->input(1), sum->producer()->input(0));
}

TEST(EliminateCommonSubexpressions, AttributesInputOrderAndRandomOpsKeepNodesApart) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float));
  ir::Value* y = f.g.add_input("y", ir::ValueType::tensor(ir::DType::Float));
  ir::Value* a = f.g.create_node("Sub", {x, y}, 1)->output(0);
  ir::Value* b = f.g.create_node("Sub", {y, x}, 1)->output(0);  // other order: another value
  ir::Value* c = f.g.create_node("LeakyRelu", {x}, 1, {{"alpha", 0.1}})->output(0);
  ir::Value* d = f.g.create_node("LeakyRelu", {x}, 1, {{"alpha", 0.2}})->output(0);
  ir::Value* r1 = f.g.create_node("RandomNormalLike", {x}, 1)->output(0);
  ir::Value* r2 = f.g.create_node("RandomNormalLike", {x}, 1)->output(0);
  for (ir::Value* v : {a, b, c, d, r1, r2}) f.g.add_output(v);
  f.run();
  EXPECT_EQ(f.g.num_nodes(), 6u);
}

TEST(EliminateCommonSubexpressions, AGraphOutputKeepsItsNodeAndSubgraphsAreTheirOwn) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float));
  ir::Value* a = f.g.create_node("Relu", {x}, 1)->output(0);
  ir::Value* b = f.g.create_node("Relu", {x}, 1)->output(0);
  ir::Value* c = f.g.create_node("Relu", {x}, 1)->output(0);
  ir::Value* sum = f.g.create_node("Add", {a, b}, 1)->output(0);
  f.g.add_output(sum);
  f.g.add_output(c);  // the caller's output: stays its own node
  f.run();
  EXPECT_EQ(f.count("Relu"), 2u);
  EXPECT_EQ(sum->producer()->input(0), sum->producer()->input(1));
  EXPECT_EQ(f.g.outputs()[1], c);
}

}  // namespace
}  // namespace torch2onnx
