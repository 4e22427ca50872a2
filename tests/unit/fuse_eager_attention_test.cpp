// onnx_passes::fuse_eager_attention
#include <gtest/gtest.h>

#include <limits>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using ir::Dim;
const ir::DType F = ir::DType::Float;

ir::ValueType rank4(ir::DType dt = F) { return typed({Dim{}, Dim{}, Dim{}, Dim{}}, dt); }

struct Options {
  int opset = 23;
  int64_t kv_heads = 4;
  bool q_scaled = false;       // q * 0.5 before the product (with the scores * 0.25: scale 0.125)
  bool weights_read = false;   // the probabilities are a graph output too
  bool where_mask = false;     // mask = Where(allowed, 0, lowest)
  bool no_mask = false;
  bool cache = false;          // k and v are Concat(past, new) along the sequence (a decoding step)
  std::vector<Dim> mask_dims = {Dim::named("batch"), Dim::of(1), Dim::named("seq"), Dim::named("total")};
};

struct Built {
  PassFixture f;
  ir::Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  explicit Built(const Options& o) : f(o.opset) {
    q = f.g.add_input("q", typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::of(8)}));
    k = f.g.add_input("k", typed({Dim::named("batch"), Dim::of(o.kv_heads), Dim::named("total"), Dim::of(8)}));
    v = f.g.add_input("v", typed({Dim::named("batch"), Dim::of(o.kv_heads), Dim::named("total"), Dim::of(6)}));
    if (o.cache) {
      ir::Value* pk = f.g.add_input("past_k", typed({Dim::named("batch"), Dim::of(o.kv_heads), Dim::named("past"), Dim::of(8)}));
      ir::Value* pv = f.g.add_input("past_v", typed({Dim::named("batch"), Dim::of(o.kv_heads), Dim::named("past"), Dim::of(6)}));
      k = f.op("Concat", {pk, k}, rank4(), {{"axis", int64_t{2}}});
      v = f.op("Concat", {pv, v}, rank4(), {{"axis", int64_t{2}}});
    }
    ir::Value* qs = q;
    if (o.q_scaled) qs = f.op("Mul", {q, f.weights("half", {0.5}, {})}, rank4());
    ir::Value* kt = f.op("Transpose", {k}, rank4(), {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
    ir::Value* s = f.op("MatMul", {qs, kt}, rank4());
    s = o.q_scaled ? f.op("Mul", {f.weights("quarter", {0.25}, {}), s}, rank4())
                   : f.op("Div", {s, f.weights("root", {2.0}, {})}, rank4());
    if (!o.no_mask) {
      if (o.where_mask) {
        ir::Value* allowed = f.g.add_input("allowed", typed(o.mask_dims, ir::DType::Bool));
        mask = f.op("Where", {allowed, f.weights("zero", {0.0}, {}),
                              f.weights("lowest", {std::numeric_limits<float>::lowest()}, {})},
                    typed(o.mask_dims));
      } else {
        mask = f.g.add_input("mask", typed(o.mask_dims));
      }
      s = f.op("Add", {s, mask}, rank4());
    }
    ir::Value* p = f.op("Softmax", {s}, rank4(), {{"axis", int64_t{-1}}});
    ir::Value* y = f.op("MatMul", {p, v}, rank4());
    f.g.rename(y, "y");
    f.g.add_output(y);
    if (o.weights_read) f.g.add_output(p);
    onnx_passes::fuse_eager_attention(f.m, f.ctx);
    onnx_passes::eliminate_dead_code(f.m, f.ctx);
    onnx_passes::lint(f.m, "test");
  }
  ir::Node* attention() {
    for (const auto& n : f.g.nodes())
      if (n->op_type() == "Attention") return n.get();
    return nullptr;
  }
};

TEST(FuseEagerAttention, TheChainBecomesOneNode) {
  Built b(Options{});
  ir::Node* n = b.attention();
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(b.f.count("Softmax") + b.f.count("MatMul") + b.f.count("Transpose") + b.f.count("Div"), 0u);
  ASSERT_EQ(n->num_inputs(), 4u);
  EXPECT_EQ(n->input(0), b.q);
  EXPECT_EQ(n->input(1), b.k);
  EXPECT_EQ(n->input(2), b.v);
  EXPECT_EQ(n->input(3), b.mask);  // its last dims are proved to be the lengths: no Expand
  EXPECT_EQ(b.f.count("Expand"), 0u);
  EXPECT_FLOAT_EQ(static_cast<float>(n->attr_f("scale", 0)), 0.5f);
  EXPECT_EQ(n->attr_i("is_causal", 1), 0);
  // a mask input may hold -inf rows: NaN is put back there (y + 0 * max(row))
  EXPECT_EQ(b.f.count("ReduceMax"), 1u);
  EXPECT_EQ(b.f.g.outputs()[0]->name(), "y");
}

TEST(FuseEagerAttention, ScalesMultiplyAndFiniteMasksNeedNoNaN) {
  Options o;
  o.q_scaled = true;
  o.where_mask = true;
  Built b(o);
  ir::Node* n = b.attention();
  ASSERT_NE(n, nullptr);
  EXPECT_FLOAT_EQ(static_cast<float>(n->attr_f("scale", 0)), 0.125f);
  EXPECT_EQ(n->input(0), b.q);
  EXPECT_EQ(b.f.count("ReduceMax"), 0u);  // a choice between 0 and lowest holds no -inf
  EXPECT_EQ(b.f.g.outputs()[0]->producer(), n);
}

TEST(FuseEagerAttention, AMaskBroadcastAlongTheQueriesIsExpanded) {
  Options o;
  o.mask_dims = {Dim::named("batch"), Dim::of(1), Dim::of(1), Dim{}};
  o.cache = true;
  Built b(o);
  ir::Node* n = b.attention();
  ASSERT_NE(n, nullptr);
  ASSERT_NE(n->input(3), b.mask);
  EXPECT_EQ(n->input(3)->producer()->op_type(), "Expand");
  // and without a mask: three inputs
  Options none;
  none.no_mask = true;
  Built c(none);
  ASSERT_NE(c.attention(), nullptr);
  EXPECT_EQ(c.attention()->num_inputs(), 3u);
  EXPECT_EQ(c.f.count("ReduceMax"), 0u);
}

TEST(FuseEagerAttention, WithoutACacheOnlyWhereTheGraphDoesNotGrow) {
  // the expansion (3 nodes), the guard of lowest (2) and the NaN of -inf rows (3) would make 9 nodes of 6
  Options o;
  o.mask_dims = {Dim::named("batch"), Dim::of(1), Dim::of(1), Dim::named("total")};
  Built b(o);
  EXPECT_EQ(b.attention(), nullptr);
  EXPECT_EQ(b.f.count("Softmax"), 1u);
  EXPECT_EQ(b.f.count("Expand") + b.f.count("Where") + b.f.count("Add"), 1u);  // nothing left behind but its Add
}

TEST(FuseEagerAttention, OneKeyValueHeadIsShared) {
  Options o;
  o.kv_heads = 1;
  Built b(o);
  EXPECT_NE(b.attention(), nullptr);
}

TEST(FuseEagerAttention, WhatAttentionCannotSayStays) {
  {  // the probabilities are wanted
    Options o;
    o.weights_read = true;
    Built b(o);
    EXPECT_EQ(b.attention(), nullptr);
    EXPECT_EQ(b.f.count("Softmax"), 1u);
  }
  {  // a mask whose batch dim is not the scores' (it could broadcast them)
    Options o;
    o.mask_dims = {Dim::named("other"), Dim::of(1), Dim::named("seq"), Dim::named("total")};
    EXPECT_EQ(Built(o).attention(), nullptr);
  }
  {  // a mask with more heads than the scores
    Options o;
    o.mask_dims = {Dim::named("batch"), Dim::of(8), Dim::named("seq"), Dim::named("total")};
    EXPECT_EQ(Built(o).attention(), nullptr);
  }
  {  // below opset 23
    Options o;
    o.opset = 22;
    EXPECT_EQ(Built(o).attention(), nullptr);
  }
}

}  // namespace
}  // namespace torch2onnx
