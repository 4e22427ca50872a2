// onnx_passes::fuse_interleaved_rotary
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  // a float node of shape `dims`
  ir::Value* op(const char* type, std::vector<ir::Value*> in, std::vector<int64_t> dims, ir::Attributes a = {}) {
    return PassFixture::op(type, std::move(in), ir::ValueType::tensor(ir::DType::Float, dims), std::move(a));
  }
  // x[..., start::2] of x [2, 5, 3, 4]
  ir::Value* every_other(ir::Value* x, int64_t start) {
    return op("Slice", {x, ints({start}), ints({INT64_MAX}), ints({3}), ints({2})}, {2, 5, 3, 2});
  }
  // repeat_interleave(c[:, :, None, :], 2, 3) of c [2, 5, 2]
  ir::Value* interleave(ir::Value* c) {
    ir::Value* u = op("Unsqueeze", {c, ints({2, 4})}, {2, 5, 1, 2, 1});
    ir::Value* t = op("Tile", {u, ints({1, 1, 1, 1, 2})}, {2, 5, 1, 2, 2});
    return op("Reshape", {t, ints({0, 0, 0, -1})}, {2, 5, 1, 4});
  }
};

TEST(FuseInterleavedRotary, GptJsRotationIsOneNodeOnTheHeadsAfterSequenceView) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 5, 3, 4}));
  ir::Value* cos = f.g.add_input("cos", ir::ValueType::tensor(ir::DType::Float, {2, 5, 2}));
  ir::Value* sin = f.g.add_input("sin", ir::ValueType::tensor(ir::DType::Float, {2, 5, 2}));
  ir::Value* neg = f.op("Neg", {f.every_other(x, 1)}, {2, 5, 3, 2});
  ir::Value* a = f.op("Unsqueeze", {neg, f.ints({4})}, {2, 5, 3, 2, 1});
  ir::Value* b = f.op("Unsqueeze", {f.every_other(x, 0), f.ints({4})}, {2, 5, 3, 2, 1});
  ir::Value* stacked = f.op("Concat", {a, b}, {2, 5, 3, 2, 2}, {{"axis", int64_t{-1}}});
  ir::Value* rotated = f.op("Reshape", {stacked, f.ints({0, 0, 0, -1})}, {2, 5, 3, 4});
  ir::Value* y = f.op("Add", {f.op("Mul", {x, f.interleave(cos)}, {2, 5, 3, 4}),
                              f.op("Mul", {rotated, f.interleave(sin)}, {2, 5, 3, 4})}, {2, 5, 3, 4});
  f.g.add_output(y);
  onnx_passes::fuse_interleaved_rotary(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  ir::Node* back = f.g.outputs()[0]->producer();
  ASSERT_EQ(back->op_type(), "Reshape");
  ir::Node* rope = back->input(0)->producer();
  ASSERT_EQ(rope->op_type(), "RotaryEmbedding");
  EXPECT_EQ(rope->attr_i("interleaved", 0), 1);
  EXPECT_EQ(rope->attr_i("num_heads", 0), 3);
  EXPECT_FALSE(rope->has_attr("rotary_embedding_dim"));
  EXPECT_EQ(rope->input(0)->producer()->input(0), x);  // the [B, S, H*D] view of x
  EXPECT_EQ(f.count("Neg") + f.count("Tile"), 0u);
}

}  // namespace
}  // namespace torch2onnx
