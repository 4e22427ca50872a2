// onnx_passes::remove_neutral_arithmetic
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

// `op`(x, c) (or (c, x) with `constant_first`), x of `dt` and `shape`, c one element of `c_dims`:
// whether the node was removed (its reader then reads x).
bool removed(const char* op, ir::DType dt, double c, std::vector<int64_t> c_dims = {}, bool constant_first = false,
             std::vector<int64_t> shape = {2, 3}) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(dt, shape));
  ir::Tensor t = ir::Tensor::from_doubles(dt, {c}, c_dims);
  ir::Value* k = f.g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
  k->set_type(ir::ValueType::tensor(dt, c_dims));
  ir::Value* y = constant_first ? f.op(op, {k, x}, ir::ValueType::tensor(dt, shape))
                                : f.op(op, {x, k}, ir::ValueType::tensor(dt, shape));
  ir::Value* out = f.op("Neg", {y}, ir::ValueType::tensor(dt, shape));
  f.g.add_output(out);
  onnx_passes::remove_neutral_arithmetic(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  const bool gone = f.count(op) == 0;
  EXPECT_EQ(gone, out->producer()->input(0) == x);
  return gone;
}

TEST(RemoveNeutralArithmetic, IntegerZeroAddedOrSubtracted) {
  EXPECT_TRUE(removed("Add", ir::DType::Int64, 0));
  EXPECT_TRUE(removed("Add", ir::DType::Int64, 0, {}, true));
  EXPECT_TRUE(removed("Sub", ir::DType::Int32, 0, {1}));
  EXPECT_FALSE(removed("Sub", ir::DType::Int64, 0, {}, true));  // 0 - x is -x
  EXPECT_FALSE(removed("Add", ir::DType::Int64, 1));
  // on floats x + 0 is not x for x = -0.0
  EXPECT_FALSE(removed("Add", ir::DType::Float, 0));
}

TEST(RemoveNeutralArithmetic, OneMultipliedOrDividedBy) {
  EXPECT_TRUE(removed("Mul", ir::DType::Float, 1));
  EXPECT_TRUE(removed("Mul", ir::DType::Float, 1, {1, 1}, true));
  EXPECT_TRUE(removed("Div", ir::DType::Int64, 1));
  EXPECT_FALSE(removed("Div", ir::DType::Float, 1, {}, true));  // 1 / x
  EXPECT_FALSE(removed("Mul", ir::DType::Float, 2));
}

TEST(RemoveNeutralArithmetic, BroadcastingThatGrowsTheResultStays) {
  // a [1, 1, 1] one times a [2, 3] x is [1, 2, 3]: not x
  EXPECT_FALSE(removed("Mul", ir::DType::Float, 1, {1, 1, 1}));
}

}  // namespace
}  // namespace torch2onnx
