// onnx_passes::fuse_swish
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

// Mul(x, Sigmoid(s)) (or Mul(Sigmoid(s), x) with `sigmoid_first`) at `opset`, x of `dt`,
// s = x unless `other_input`; the product is a graph output, the sigmoid read by a Neg too when
// `sigmoid_read_elsewhere`. Returns the Swish count after the pass (and checks the graph).
size_t swishes(int opset, ir::DType dt = ir::DType::Float, bool sigmoid_first = false, bool other_input = false,
               bool sigmoid_read_elsewhere = false) {
  PassFixture f(opset);
  const ir::ValueType t = ir::ValueType::tensor(dt, {2, 3});
  ir::Value* x = f.g.add_input("x", t);
  ir::Value* z = f.g.add_input("z", t);
  ir::Value* s = f.op("Sigmoid", {other_input ? z : x}, t);
  ir::Value* y = sigmoid_first ? f.op("Mul", {s, x}, t) : f.op("Mul", {x, s}, t);
  f.g.rename(y, "y");
  f.g.add_output(y);
  if (sigmoid_read_elsewhere) f.g.add_output(f.op("Neg", {s}, t));
  onnx_passes::fuse_swish(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  const size_t n = f.count("Swish");
  if (n) {
    // the graph output keeps its name and is the Swish of x
    EXPECT_EQ(f.g.outputs()[0]->name(), "y");
    EXPECT_EQ(f.g.outputs()[0]->producer()->op_type(), "Swish");
    EXPECT_EQ(f.g.outputs()[0]->producer()->input(0), x);
    EXPECT_EQ(f.count("Mul"), 0u);
    EXPECT_EQ(f.count("Sigmoid"), sigmoid_read_elsewhere ? 1u : 0u);
  }
  return n;
}

TEST(FuseSwish, ProductOfXAndItsSigmoidAtOpset24) {
  EXPECT_EQ(swishes(24), 1u);
  EXPECT_EQ(swishes(24, ir::DType::Float, true), 1u);
  EXPECT_EQ(swishes(24, ir::DType::Double), 1u);
  EXPECT_EQ(swishes(24, ir::DType::Float16), 1u);
  EXPECT_EQ(swishes(24, ir::DType::Float, false, false, true), 1u);  // the Sigmoid stays for its other reader
}

TEST(FuseSwish, OnlyWhereOnnxRuntimeRunsSwish) {
  EXPECT_EQ(swishes(23), 0u);  // no Swish before 24
  EXPECT_EQ(swishes(25), 0u);  // ONNX Runtime 1.32: a Swish kernel for opset 24 only
  EXPECT_EQ(swishes(28), 0u);
}

TEST(FuseSwish, OtherProductsStay) {
  EXPECT_EQ(swishes(24, ir::DType::Float, false, true), 0u);  // x * sigmoid(z)
  EXPECT_EQ(swishes(24, ir::DType::Int64), 0u);               // not a Swish dtype
}

}  // namespace
}  // namespace torch2onnx
