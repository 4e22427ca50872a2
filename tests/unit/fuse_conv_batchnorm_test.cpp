// onnx_passes::fuse_conv_batchnorm: in eval mode with constant folding, BatchNormalization(Conv(x,
// W, B)) becomes Conv(x, W * s, (B - mean) * s + beta), s = gamma / sqrt(var + eps) per output
// channel (for ConvTranspose, W is [Cin, Cout / group, k...]). The tests check the folded weights'
// values and names, the bias a Conv without one gains, and the cases that must stay unfused.
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {1, 2, 3, 3});

struct Fixture : PassFixture {
  // BatchNormalization(y) over 2 channels, epsilon 0: s = {2 / 2, 3 / 4}.
  ir::Value* bn(ir::Value* y, ir::Attributes attrs = {}) {
    attrs.push_back({"epsilon", 0.0});
    return op("BatchNormalization",
              {y, weights("gamma", {2, 3}, {2}), weights("beta", {0.1, 0.2}, {2}), weights("mean", {0.5, 1}, {2}),
               weights("var", {4, 16}, {2})},
              kT, std::move(attrs));
  }
  // The producer of the graph output y, after the pass.
  ir::Node* run(ir::Value* y) {
    g.rename(y, "y");
    g.add_output(y);
    onnx_passes::fuse_conv_batchnorm(m, ctx);
    onnx_passes::lint(m, "test");
    return g.outputs().back()->producer();
  }
};

TEST(FuseConvBatchnorm, ConvWeightsAndBiasAreScaledPerOutputChannel) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {1, 1, 4, 4}));
  ir::Value* w = f.weights("w", {1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2});
  ir::Node* conv = f.run(f.bn(f.op("Conv", {x, w, f.weights("b", {0.5, -1}, {2})}, kT)));
  EXPECT_EQ(f.count("BatchNormalization"), 0u);
  ASSERT_EQ(conv->op_type(), "Conv");
  EXPECT_EQ(conv->input(0), x);
  const ir::Value* w2 = conv->input(1);
  const ir::Value* b2 = conv->input(2);
  EXPECT_EQ(w2->initializer()->to_doubles(), (std::vector<double>{1, 2, 3, 4, 3.75, 4.5, 5.25, 6}));
  EXPECT_EQ(w2->initializer()->dims(), (std::vector<int64_t>{2, 1, 2, 2}));
  EXPECT_FLOAT_EQ(b2->initializer()->to_doubles()[0], 0.1f);   // (0.5 - 0.5) * 1 + 0.1
  EXPECT_FLOAT_EQ(b2->initializer()->to_doubles()[1], -1.3f);  // (-1 - 1) * 0.75 + 0.2
  EXPECT_TRUE(w2->is_derived() && b2->is_derived());
  EXPECT_EQ(w2->name(), conv->name() + ".W");
  EXPECT_EQ(b2->name(), conv->name() + ".B");
  for (const ir::Value* v : f.g.initializers()) EXPECT_NE(v, w);  // the old weight left the graph
}

TEST(FuseConvBatchnorm, AConvWithoutBiasGainsOne) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {1, 1, 3, 3}));
  ir::Node* conv = f.run(f.bn(f.op("Conv", {x, f.weights("w", {1, 1}, {2, 1, 1, 1})}, kT)));
  ASSERT_EQ(conv->op_type(), "Conv");
  ASSERT_EQ(conv->num_inputs(), 3u);
  EXPECT_EQ(conv->input(1)->initializer()->to_doubles(), (std::vector<double>{1, 0.75}));
  EXPECT_FLOAT_EQ(conv->input(2)->initializer()->to_doubles()[0], -0.4f);   // -0.5 * 1 + 0.1
  EXPECT_FLOAT_EQ(conv->input(2)->initializer()->to_doubles()[1], -0.55f);  // -1 * 0.75 + 0.2
}

TEST(FuseConvBatchnorm, ConvTransposeScalesItsSecondAxis) {
  // W [Cin 2, Cout 2, 1, 1]: output channel = index along axis 1
  Fixture f;
  ir::Value* x = f.g.add_input("x", kT);
  ir::Node* conv = f.run(f.bn(f.op("ConvTranspose", {x, f.weights("w", {1, 2, 3, 4}, {2, 2, 1, 1})}, kT)));
  ASSERT_EQ(conv->op_type(), "ConvTranspose");
  EXPECT_EQ(conv->input(1)->initializer()->to_doubles(), (std::vector<double>{1, 1.5, 3, 3}));
  // group 2, W [Cin 4, Cout / group 1, 1, 1]: input channels 0, 1 feed output channel 0, 2, 3 feed 1
  Fixture g2;
  ir::Value* x4 = g2.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {1, 4, 3, 3}));
  ir::Value* w4 = g2.weights("w", {1, 2, 3, 4}, {4, 1, 1, 1});
  conv = g2.run(g2.bn(g2.op("ConvTranspose", {x4, w4}, kT, {{"group", int64_t{2}}})));
  ASSERT_EQ(conv->op_type(), "ConvTranspose");
  EXPECT_EQ(conv->input(1)->initializer()->to_doubles(), (std::vector<double>{1, 2, 2.25, 3}));
}

enum class Case { ConvReadElsewhere, TrainingModeNode, TrainingExport, NoFolding, WeightIsInput, BiasIsInput,
                  ThreeScales, HalfWeights };

// Conv then BatchNormalization, as `c` alters them: whether the BatchNormalization is still there.
bool stays(Case c) {
  Fixture f;
  if (c == Case::TrainingExport) f.o.training = TrainingMode::Training;
  if (c == Case::NoFolding) f.o.do_constant_folding = false;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {1, 1, 3, 3}));
  const ir::DType wt = c == Case::HalfWeights ? ir::DType::Float16 : ir::DType::Float;
  ir::Value* w = c == Case::WeightIsInput ? f.g.add_input("w", ir::ValueType::tensor(ir::DType::Float, {2, 1, 1, 1}))
                                          : f.weights("w", {1, 1}, {2, 1, 1, 1}, wt);
  ir::Value* b = c == Case::BiasIsInput ? f.g.add_input("b", ir::ValueType::tensor(ir::DType::Float, {2}))
                                        : f.weights("b", {0, 0}, {2});
  ir::Value* y = f.op("Conv", {x, w, b}, kT);
  if (c == Case::ConvReadElsewhere) f.g.add_output(f.op("Neg", {y}, kT));
  ir::Attributes attrs;
  if (c == Case::TrainingModeNode) attrs.push_back({"training_mode", int64_t{1}});
  ir::Value* out = f.bn(y, attrs);
  if (c == Case::ThreeScales) out->producer()->replace_input(1, f.weights("gamma3", {1, 1, 1}, {3}));
  ir::Node* after = f.run(out);
  const bool kept = after->op_type() == "BatchNormalization";
  if (kept) {
    EXPECT_EQ(after->input(0)->producer()->input(1), w);
  }
  return kept;
}

TEST(FuseConvBatchnorm, WhatStays) {
  EXPECT_TRUE(stays(Case::ConvReadElsewhere));
  EXPECT_TRUE(stays(Case::TrainingModeNode));
  EXPECT_TRUE(stays(Case::TrainingExport));
  EXPECT_TRUE(stays(Case::NoFolding));
  EXPECT_TRUE(stays(Case::WeightIsInput));
  EXPECT_TRUE(stays(Case::BiasIsInput));
  EXPECT_TRUE(stays(Case::ThreeScales));  // not one per output channel
  EXPECT_TRUE(stays(Case::HalfWeights));  // float and double only
}

// The fused Conv's value does not take the BatchNormalization's name: the pipeline puts graph output
// names back after every pass (keep_output_names.cpp), as here.
TEST(FuseConvBatchnorm, AGraphOutputKeepsItsNameThroughThePipeline) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {1, 1, 3, 3}));
  ir::Value* y = f.bn(f.op("Conv", {x, f.weights("w", {1, 1}, {2, 1, 1, 1})}, kT));
  f.g.rename(y, "y");
  f.g.add_output(y);
  const auto names = onnx_passes::output_names(f.m);
  onnx_passes::fuse_conv_batchnorm(f.m, f.ctx);
  ASSERT_NE(f.g.outputs().back()->name(), "y");  // (what the pass alone leaves)
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::restore_output_names(f.m, names);
  onnx_passes::lint(f.m, "test");
  EXPECT_EQ(f.g.outputs().back()->name(), "y");
  EXPECT_EQ(f.g.outputs().back()->producer()->op_type(), "Conv");
  EXPECT_EQ(f.count("Identity"), 0u);
}

}  // namespace
}  // namespace torch2onnx
