// onnx_passes::fuse_attention_cache
#include <gtest/gtest.h>

#include <limits>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using ir::Dim;


struct Fixture : PassFixture {
  // x.size(axis) as a [1] tensor, as the converters compute it
  ir::Value* size(ir::Value* x, int64_t axis) {
    ir::Value* s = op("Shape", {x}, ir::ValueType::tensor(ir::DType::Int64, {4}));
    ir::Value* d = op("Gather", {s, ints({axis})}, ir::ValueType::tensor(ir::DType::Int64, {1}), {{"axis", int64_t{0}}});
    return d;
  }
  // x[:, :, None].expand(b, h, n, t, d).reshape(b, h * n, t, d), b and t read from `sizes_of`
  ir::Value* repeat_kv(ir::Value* x, int64_t n, ir::Value* sizes_of) {
    ir::Value* u = op("Unsqueeze", {x, ints({2})}, ir::ValueType::tensor(ir::DType::Float));
    ir::Value* to5 = op("Concat", {size(sizes_of, 0), ints({2}), ints({n}), size(x, 2), ints({8})}, {},
                        {{"axis", int64_t{0}}});
    ir::Value* e = op("Expand", {u, to5}, ir::ValueType::tensor(ir::DType::Float));
    ir::Value* to4 = op("Concat", {size(sizes_of, 0), ints({2 * n}), size(x, 2), ints({8})}, {}, {{"axis", int64_t{0}}});
    return op("Reshape", {e, to4}, ir::ValueType::tensor(ir::DType::Float));
  }
  void run() {
    onnx_passes::fuse_attention_cache(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
};

// One decoding step: y = Attention(q, repeat_kv(cat(past_k, k)), repeat_kv(cat(past_v, v))), returning y and
// both concatenations. `cache_batch`: the cache's batch dim; `expand_from_q`: the repeat reads its batch size
// from q (the same size only when the cache's batch is q's).
struct Step {
  ir::Value *q, *k, *v, *past_k, *past_v, *att;
};

Step build(Fixture& f, Dim cache_batch, bool expand_from_q = false, int64_t is_causal = 0) {
  const ir::DType F = ir::DType::Float;
  Step s{};
  s.q = f.g.add_input("q", typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::of(8)}, F));
  s.k = f.g.add_input("k", typed({cache_batch, Dim::of(2), Dim::named("seq"), Dim::of(8)}, F));
  s.v = f.g.add_input("v", typed({cache_batch, Dim::of(2), Dim::named("seq"), Dim::of(8)}, F));
  s.past_k = f.g.add_input("past_k", typed({cache_batch, Dim::of(2), Dim::named("past"), Dim::of(8)}, F));
  s.past_v = f.g.add_input("past_v", typed({cache_batch, Dim::of(2), Dim::named("past"), Dim::of(8)}, F));
  const ir::ValueType cat_type = typed({cache_batch, Dim::of(2), Dim{}, Dim::of(8)}, F);
  ir::Value* kc = f.op("Concat", {s.past_k, s.k}, cat_type, {{"axis", int64_t{2}}});
  ir::Value* vc = f.op("Concat", {s.past_v, s.v}, cat_type, {{"axis", int64_t{2}}});
  ir::Value* kr = f.repeat_kv(kc, 2, expand_from_q ? s.q : kc);
  ir::Value* vr = f.repeat_kv(vc, 2, expand_from_q ? s.q : vc);
  s.att = f.op("Attention", {s.q, kr, vr}, typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::of(8)}, F),
               {{"is_causal", is_causal}, {"scale", 0.25}});
  f.g.add_output(s.att);
  f.g.add_output(kc);
  f.g.add_output(vc);
  return s;
}

TEST(FuseAttentionCache, TheCacheAndTheRepeatGoIntoTheNode) {
  Fixture f;
  Step s = build(f, Dim::named("batch"));
  f.run();
  ASSERT_EQ(f.count("Attention"), 1u);
  EXPECT_EQ(f.count("Concat"), 0u);  // the caches' and the repeats' size Concats are gone with them
  EXPECT_EQ(f.count("Expand") + f.count("Reshape") + f.count("Unsqueeze"), 0u);
  ir::Node* n = f.g.outputs()[0]->producer();
  ASSERT_EQ(n->num_inputs(), 6u);
  EXPECT_EQ(n->input(0), s.q);
  EXPECT_EQ(n->input(1), s.k);
  EXPECT_EQ(n->input(2), s.v);
  EXPECT_EQ(n->input(3), nullptr);  // no mask
  EXPECT_EQ(n->input(4), s.past_k);
  EXPECT_EQ(n->input(5), s.past_v);
  EXPECT_EQ(f.g.outputs()[1], n->output(1));  // present_key returned in place of the Concat
  EXPECT_EQ(f.g.outputs()[2], n->output(2));
  EXPECT_FLOAT_EQ(static_cast<float>(n->attr_f("scale", 0)), 0.25f);
}

TEST(FuseAttentionCache, ABroadcastThatIsNotARepeatOrACausalMaskStays) {
  {  // a batch-1 cache expanded to q's batch: the expand broadcasts, it does not only repeat heads
    Fixture f;
    build(f, Dim::of(1), /*expand_from_q=*/true);
    f.run();
    EXPECT_EQ(f.count("Concat"), 6u);
    EXPECT_EQ(f.g.outputs()[0]->producer()->num_inputs(), 3u);
  }
  {  // with a past, the causal mask's alignment would be the runtime's choice
    Fixture f;
    build(f, Dim::named("batch"), false, /*is_causal=*/1);
    f.run();
    EXPECT_EQ(f.g.outputs()[0]->producer()->num_inputs(), 3u);
  }
}

TEST(FuseAttentionCache, ASlidingWindowsReturnedCacheReadsThePresentOutput) {
  // the returned cache is cat(past, new)[:, :, -3:], written right after the concatenation (before the node):
  // it is computed again from present_key / present_value, and the Concats go
  Fixture f;
  const ir::DType F = ir::DType::Float;
  ir::Value* q = f.g.add_input("q", typed({Dim::named("batch"), Dim::of(2), Dim::named("seq"), Dim::of(8)}, F));
  ir::Value* k = f.g.add_input("k", typed({Dim::named("batch"), Dim::of(2), Dim::named("seq"), Dim::of(8)}, F));
  ir::Value* v = f.g.add_input("v", typed({Dim::named("batch"), Dim::of(2), Dim::named("seq"), Dim::of(8)}, F));
  ir::Value* pk = f.g.add_input("past_k", typed({Dim::named("batch"), Dim::of(2), Dim::named("past"), Dim::of(8)}, F));
  ir::Value* pv = f.g.add_input("past_v", typed({Dim::named("batch"), Dim::of(2), Dim::named("past"), Dim::of(8)}, F));
  const ir::ValueType cat_type = typed({Dim::named("batch"), Dim::of(2), Dim{}, Dim::of(8)}, F);
  ir::Value* kc = f.op("Concat", {pk, k}, cat_type, {{"axis", int64_t{2}}});
  ir::Value* vc = f.op("Concat", {pv, v}, cat_type, {{"axis", int64_t{2}}});
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  ir::Value* wk = f.op("Slice", {kc, f.ints({-3}), f.ints({kEnd}), f.ints({2})}, cat_type);
  ir::Value* wv = f.op("Slice", {vc, f.ints({-3}), f.ints({kEnd}), f.ints({2})}, cat_type);
  f.g.rename(wk, "window_k");
  ir::Value* y = f.op("Attention", {q, kc, vc}, typed({Dim::named("batch"), Dim::of(2), Dim::named("seq"), Dim::of(8)}, F),
                      {{"is_causal", int64_t{0}}, {"scale", 0.25}});
  f.g.add_output(y);
  f.g.add_output(wk);
  f.g.add_output(wv);
  f.run();
  EXPECT_EQ(f.count("Concat"), 0u);
  ir::Node* att = f.g.outputs()[0]->producer();
  ASSERT_EQ(att->num_inputs(), 6u);
  EXPECT_EQ(f.g.outputs()[1]->producer()->input(0), att->output(1));
  EXPECT_EQ(f.g.outputs()[2]->producer()->input(0), att->output(2));
  EXPECT_EQ(f.g.outputs()[1]->name(), "window_k");
}

}  // namespace
}  // namespace torch2onnx
