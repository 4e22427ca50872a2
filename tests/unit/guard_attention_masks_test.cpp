// onnx_passes::guard_attention_masks
#include <gtest/gtest.h>

#include <limits>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using ir::Dim;
const ir::DType F = ir::DType::Float;
const double kLowest = std::numeric_limits<float>::lowest();


struct Fixture : PassFixture {
  ir::Value *q, *k, *v;
  explicit Fixture(int opset = 23) : PassFixture(opset) {
    q = g.add_input("q", typed({Dim::of(2), Dim::of(4), Dim::of(5), Dim::of(8)}));
    k = g.add_input("k", typed({Dim::of(2), Dim::of(4), Dim::of(7), Dim::of(8)}));
    v = g.add_input("v", typed({Dim::of(2), Dim::of(4), Dim::of(7), Dim::of(8)}));
  }
  ir::Node* attention(ir::Value* mask) {
    ir::Value* y = op("Attention", {q, k, v, mask}, typed({Dim::of(2), Dim::of(4), Dim::of(5), Dim::of(8)}));
    g.add_output(y);
    return y->producer();
  }
  void run() {
    onnx_passes::guard_attention_masks(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
};

TEST(GuardAttentionMasks, AComputedMaskMapsLowestToHalfOfIt) {
  Fixture f;
  ir::Value* mask = f.g.add_input("mask", typed({Dim::of(2), Dim::of(1), Dim::of(5), Dim::of(7)}));
  ir::Node* a = f.attention(mask);
  ir::Node* b = f.attention(mask);
  f.run();
  ir::Node* where = a->input(3)->producer();
  ASSERT_NE(where, nullptr);
  ASSERT_EQ(where->op_type(), "Where");
  EXPECT_EQ(b->input(3), a->input(3));  // one guard for a mask read twice
  EXPECT_EQ(where->input(2), mask);
  EXPECT_DOUBLE_EQ(where->input(1)->constant()->to_doubles()[0], kLowest / 2);
  ir::Node* eq = where->input(0)->producer();
  ASSERT_EQ(eq->op_type(), "Equal");
  EXPECT_DOUBLE_EQ(eq->input(1)->constant()->to_doubles()[0], kLowest);
  EXPECT_EQ(a->input(3)->dtype(), F);
}

TEST(GuardAttentionMasks, AChoiceBetweenConstantsHasItsConstantsReplaced) {
  Fixture f;
  ir::Value* allowed = f.g.add_input("allowed", typed({Dim::of(5), Dim::of(7)}, ir::DType::Bool));
  ir::Value* mask = f.op("Where", {allowed, f.weights("zero", {0.0}, {}), f.weights("low", {kLowest}, {})},
                         typed({Dim::of(5), Dim::of(7)}));
  ir::Node* a = f.attention(mask);
  f.run();
  ir::Node* where = a->input(3)->producer();
  ASSERT_EQ(where->op_type(), "Where");
  EXPECT_EQ(where->input(0), allowed);
  EXPECT_EQ(where->input(1)->constant()->to_doubles()[0], 0.0);
  EXPECT_DOUBLE_EQ(where->input(2)->constant()->to_doubles()[0], kLowest / 2);
  EXPECT_EQ(f.count("Where"), 1u);  // the old one is gone
  EXPECT_EQ(f.count("Equal"), 0u);
}

TEST(GuardAttentionMasks, ConstantsBoolMasksAndBiasesWithoutLowest) {
  {  // a constant mask: its values
    Fixture f;
    ir::Node* a = f.attention(f.weights("m", {0.0, kLowest, -1.5, kLowest}, {2, 2}));
    f.run();
    const std::vector<double> got = a->input(3)->constant()->to_doubles();
    EXPECT_EQ(got, (std::vector<double>{0.0, kLowest / 2, -1.5, kLowest / 2}));
  }
  {  // a bias gathered from a table without lowest: left as it is
    Fixture f;
    ir::Value* idx = f.g.add_input("idx", typed({Dim::of(5), Dim::of(7)}, ir::DType::Int64));
    ir::Value* bias = f.op("Gather", {f.weights("table", {0.5, -2.0, 1.0}, {3}), idx}, typed({Dim::of(5), Dim::of(7)}),
                           {{"axis", int64_t{0}}});
    ir::Node* a = f.attention(bias);
    f.run();
    EXPECT_EQ(a->input(3), bias);
  }
  {  // a bool mask: nothing to map
    Fixture f;
    ir::Value* allowed = f.g.add_input("allowed", typed({Dim::of(5), Dim::of(7)}, ir::DType::Bool));
    ir::Node* a = f.attention(allowed);
    f.run();
    EXPECT_EQ(a->input(3), allowed);
  }
  {  // below opset 23 there is no Attention of ONNX's to guard
    Fixture f(22);
    ir::Value* mask = f.g.add_input("mask", typed({Dim::of(5), Dim::of(7)}));
    ir::Node* a = f.attention(mask);
    f.run();
    EXPECT_EQ(a->input(3), mask);
  }
}

}  // namespace
}  // namespace torch2onnx
