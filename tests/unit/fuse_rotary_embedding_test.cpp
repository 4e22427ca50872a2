// onnx_passes::fuse_rotary_embedding: at opset 23, x * cos + rotate_half(x) * sin with x [B, H, S, D]
// and rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2], -1) becomes one RotaryEmbedding node: with
// constant cos / sin [..., S, D] whose halves are equal, it reads their first halves as [S, D/2]
// caches and positions 0..S-1; with cos / sin computed at run time as transformers does
// (unsqueeze(cos(cat(f, f, -1)), 1)), it reads cos(f) / sin(f) expanded to x's batch. The tests check
// the node and its inputs, and patterns that must stay (unequal halves, opset 22).
#include <gtest/gtest.h>

#include <cstdint>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

ir::ValueType f32(std::vector<int64_t> dims) { return ir::ValueType::tensor(ir::DType::Float, dims); }

struct Fixture : PassFixture {
  explicit Fixture(int opset = 23) : PassFixture(opset) {}
  ir::Value* x = g.add_input("x", f32({1, 2, 3, 4}));  // [B, H, S, D]
  // x * cos + cat(-x[..., 2:], x[..., :2], -1) * sin, named y and returned
  ir::Value* rope(ir::Value* cos, ir::Value* sin) {
    ir::Value* hi = op("Slice", {x, ints({2}), ints({INT64_MAX}), ints({-1})}, f32({1, 2, 3, 2}));
    ir::Value* lo = op("Slice", {x, ints({0}), ints({2}), ints({-1})}, f32({1, 2, 3, 2}));
    ir::Value* rotated = op("Concat", {op("Neg", {hi}, f32({1, 2, 3, 2})), lo}, f32({1, 2, 3, 4}),
                            {{"axis", int64_t{-1}}});
    ir::Value* y = op("Add", {op("Mul", {x, cos}, f32({1, 2, 3, 4})), op("Mul", {rotated, sin}, f32({1, 2, 3, 4}))},
                      f32({1, 2, 3, 4}));
    g.rename(y, "y");
    g.add_output(y);
    onnx_passes::fuse_rotary_embedding(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
    return g.outputs()[0];
  }
  // a constant [1, 1, 3, 4] cache: rows {a + i, b + i} twice (the second half `second` for row 0)
  ir::Value* cache(const char* name, double a, double b, double second = 0) {
    std::vector<double> v;
    for (int i = 0; i < 3; ++i)
      for (double e : {a + i, b + i, (i == 0 && second != 0 ? second : a + i), b + i}) v.push_back(e);
    return weights(name, v, {1, 1, 3, 4});
  }
};

TEST(FuseRotaryEmbedding, ConstantCachesWithEqualHalves) {
  Fixture f;
  ir::Value* y = f.rope(f.cache("cos", 0.5, 0.25), f.cache("sin", -1, 2));
  ir::Node* rope = y->producer();
  ASSERT_EQ(rope->op_type(), "RotaryEmbedding");
  EXPECT_EQ(y->name(), "y");
  ASSERT_EQ(rope->num_inputs(), 4u);
  EXPECT_EQ(rope->input(0), f.x);
  const ir::Tensor* cos = rope->input(1)->constant();
  const ir::Tensor* sin = rope->input(2)->constant();
  ASSERT_TRUE(cos && sin);
  EXPECT_EQ(cos->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(cos->to_doubles(), (std::vector<double>{0.5, 0.25, 1.5, 1.25, 2.5, 2.25}));
  EXPECT_EQ(sin->to_doubles(), (std::vector<double>{-1, 2, 0, 3, 1, 4}));
  ir::Node* ids = rope->input(3)->producer();  // position ids [B, S]: 0..S-1 expanded to x's batch
  ASSERT_TRUE(ids && ids->op_type() == "Expand");
  EXPECT_EQ(ids->input(0)->constant()->to_int64s(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ids->input(0)->constant()->dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(f.count("Neg") + f.count("Mul") + f.count("Slice") + f.count("Add"), 0u);
}

TEST(FuseRotaryEmbedding, RunTimeCachesFromTheFrequencies) {
  Fixture f;
  ir::Value* freqs = f.g.add_input("freqs", f32({1, 3, 2}));  // [B, S, D/2]
  ir::Value* emb = f.op("Concat", {freqs, freqs}, f32({1, 3, 4}), {{"axis", int64_t{-1}}});
  ir::Value* cos = f.op("Unsqueeze", {f.op("Cos", {emb}, f32({1, 3, 4})), f.ints({1})}, f32({1, 1, 3, 4}));
  ir::Value* sin = f.op("Unsqueeze", {f.op("Sin", {emb}, f32({1, 3, 4})), f.ints({1})}, f32({1, 1, 3, 4}));
  ir::Node* rope = f.rope(cos, sin)->producer();
  ASSERT_EQ(rope->op_type(), "RotaryEmbedding");
  ASSERT_EQ(rope->num_inputs(), 3u);  // per-token caches, no position ids
  EXPECT_EQ(rope->input(0), f.x);
  const char* trig[] = {"Cos", "Sin"};
  for (size_t i = 1; i <= 2; ++i) {
    ir::Node* expand = rope->input(i)->producer();
    ASSERT_TRUE(expand && expand->op_type() == "Expand");
    ir::Node* half = expand->input(0)->producer();
    ASSERT_TRUE(half != nullptr);
    EXPECT_EQ(half->op_type(), trig[i - 1]);
    EXPECT_EQ(half->input(0), freqs);  // of f, not of cat(f, f)
  }
  EXPECT_EQ(f.count("Unsqueeze") + f.count("Neg"), 0u);
}

TEST(FuseRotaryEmbedding, WhatStays) {
  Fixture unequal;  // cos's halves differ in row 0: not cos(cat(freqs, freqs))
  EXPECT_EQ(unequal.rope(unequal.cache("cos", 0.5, 0.25, 7), unequal.cache("sin", -1, 2))->producer()->op_type(),
            "Add");
  EXPECT_EQ(unequal.count("RotaryEmbedding"), 0u);
  Fixture before(22);  // no RotaryEmbedding before opset 23
  EXPECT_EQ(before.rope(before.cache("cos", 0.5, 0.25), before.cache("sin", -1, 2))->producer()->op_type(), "Add");
  EXPECT_EQ(before.count("RotaryEmbedding"), 0u);
}

}  // namespace
}  // namespace torch2onnx
