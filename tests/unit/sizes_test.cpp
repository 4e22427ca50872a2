// onnx_passes::sizes: dims proved equal through the ops the attention fusions look through.
#include <gtest/gtest.h>

#include <limits>

#include "onnx_passes/sizes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using ir::Dim;
using onnx_passes::sizes::constant_size;
using onnx_passes::sizes::dim_of;
using onnx_passes::sizes::elements;
using onnx_passes::sizes::Size;
using onnx_passes::sizes::sum;


ir::ValueType unknown_dims(size_t rank, ir::DType dt = ir::DType::Float) {
  return typed(std::vector<Dim>(rank, Dim{}), dt);
}

Size named(const char* p) { return Size{0, {std::string("p:") + p}}; }

TEST(Sizes, StaticNamedAndAtoms) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::of(4), Dim{}}));
  EXPECT_EQ(dim_of(x, 0), named("batch"));
  EXPECT_EQ(dim_of(x, 1), constant_size(4));
  EXPECT_EQ(dim_of(x, -2), constant_size(4));  // negative axes count from the end
  EXPECT_EQ(dim_of(x, 2), dim_of(x, 2));        // an unknown dim is itself ...
  EXPECT_NE(dim_of(x, 2), named("batch"));      // ... and nothing else
  EXPECT_FALSE(dim_of(x, 2).value());
}

TEST(Sizes, BroadcastingOpsAndExpand) {
  PassFixture f;
  ir::Value* a = f.g.add_input("a", typed({Dim::named("batch"), Dim::of(1), Dim::named("seq")}));
  ir::Value* b = f.g.add_input("b", typed({Dim::of(1), Dim::of(4), Dim::named("seq")}));
  ir::Value* c = f.g.add_input("c", typed({Dim::named("other")}));
  ir::Value* sum = f.op("Add", {a, b}, unknown_dims(3));
  EXPECT_EQ(dim_of(sum, 0), named("batch"));
  EXPECT_EQ(dim_of(sum, 1), constant_size(4));
  EXPECT_EQ(dim_of(sum, 2), named("seq"));
  // two different dynamic dims: either may be 1 at run time, so nothing is proved
  ir::Value* both = f.op("Mul", {a, c}, unknown_dims(3));
  EXPECT_FALSE(dim_of(both, 2) == named("seq") || dim_of(both, 2) == named("other"));
  // Expand to [Shape(a)[0], 4, 1]: the shape's elements broadcast with the input's dims
  ir::Value* batch = f.op("Shape", {a}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                          {{"start", int64_t{0}}, {"end", int64_t{1}}});
  ir::Value* to = f.op("Concat", {batch, f.ints({4, 1})}, ir::ValueType::tensor(ir::DType::Int64, {3}),
                       {{"axis", int64_t{0}}});
  ir::Value* e = f.op("Expand", {b, to}, unknown_dims(3));
  EXPECT_EQ(dim_of(e, 0), named("batch"));
  EXPECT_EQ(dim_of(e, 1), constant_size(4));
  EXPECT_EQ(dim_of(e, 2), named("seq"));
}

TEST(Sizes, UnsqueezeGatherRangeMatMulAndAttention) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::named("seq"), Dim::of(32)}));
  ir::Value* ids = f.g.add_input("ids", typed({Dim::named("batch"), Dim::named("seq")}, ir::DType::Int64));
  ir::Value* u = f.op("Unsqueeze", {x, f.ints({1})}, unknown_dims(4));
  EXPECT_EQ(dim_of(u, 0), named("batch"));
  EXPECT_EQ(dim_of(u, 1), constant_size(1));
  EXPECT_EQ(dim_of(u, 2), named("seq"));
  ir::Value* table = f.weights("table", std::vector<double>(100 * 8, 0.0), {100, 8});
  ir::Value* rows = f.op("Gather", {table, ids}, unknown_dims(3), {{"axis", int64_t{0}}});
  EXPECT_EQ(dim_of(rows, 0), named("batch"));
  EXPECT_EQ(dim_of(rows, 1), named("seq"));
  EXPECT_EQ(dim_of(rows, 2), constant_size(8));
  // Range(0, Shape(x)[1], 1) has seq elements
  ir::Value* seq = f.op("Gather", {f.op("Shape", {x}, ir::ValueType::tensor(ir::DType::Int64, {3})), f.ints({1}, true)},
                        ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{}), {{"axis", int64_t{0}}});
  ir::Value* r = f.op("Range", {f.ints({0}, true), seq, f.ints({1}, true)}, unknown_dims(1, ir::DType::Int64));
  EXPECT_EQ(dim_of(r, 0), named("seq"));
  ir::Value* r2 = f.op("Range", {f.ints({1}, true), seq, f.ints({1}, true)}, unknown_dims(1, ir::DType::Int64));
  EXPECT_NE(dim_of(r2, 0), named("seq"));  // (seq - 1 elements)
  // arange(past, past + seq): seq positions of a decoding step
  ir::Value* cache = f.g.add_input("cache", typed({Dim::named("batch"), Dim::named("past")}));
  ir::Value* past = f.op("Gather", {f.op("Shape", {cache}, ir::ValueType::tensor(ir::DType::Int64, {2})), f.ints({1}, true)},
                         ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{}), {{"axis", int64_t{0}}});
  ir::Value* end = f.op("Add", {past, seq}, ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{}));
  EXPECT_EQ(dim_of(f.op("Range", {past, end, f.ints({1}, true)}, unknown_dims(1, ir::DType::Int64)), 0), named("seq"));
  EXPECT_NE(dim_of(f.op("Range", {seq, end, f.ints({1}, true)}, unknown_dims(1, ir::DType::Int64)), 0), named("seq"));
  ir::Value* w = f.weights("w", std::vector<double>(32 * 16, 0.0), {32, 16});
  ir::Value* y = f.op("MatMul", {x, w}, unknown_dims(3));
  EXPECT_EQ(dim_of(y, 0), named("batch"));
  EXPECT_EQ(dim_of(y, 1), named("seq"));
  EXPECT_EQ(dim_of(y, 2), constant_size(16));
  ir::Value* q = f.g.add_input("q", typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::of(8)}));
  ir::Value* kv = f.g.add_input("kv", typed({Dim::named("batch"), Dim::of(4), Dim::named("total"), Dim::of(6)}));
  ir::Value* att = f.op("Attention", {q, kv, kv}, unknown_dims(4));
  EXPECT_EQ(dim_of(att, 2), named("seq"));
  EXPECT_EQ(dim_of(att, 3), constant_size(6));  // the values' head size
  EXPECT_EQ(elements(f.op("Shape", {att}, ir::ValueType::tensor(ir::DType::Int64, {4})))->at(2), named("seq"));
}

TEST(Sizes, SlicesAlongARunTimeLengthAndTheirArithmetic) {
  // a sliding window's cache: past[:, :, -7:] has min(past, 7) = past - max(0, past - 7) rows, as the length
  // torch.export computes for it (past + (-1) * max(0, past + -7))
  PassFixture f;
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  ir::Value* past = f.g.add_input("past", typed({Dim::named("batch"), Dim::of(2), Dim::named("past"), Dim::of(8)}));
  const ir::ValueType scalar = ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{});
  ir::Value* n = f.op("Gather", {f.op("Shape", {past}, ir::ValueType::tensor(ir::DType::Int64, {4})), f.ints({2}, true)},
                      scalar, {{"axis", int64_t{0}}});
  auto slice = [&](int64_t b, int64_t e) {
    return f.op("Slice", {past, f.ints({b}), f.ints({e}), f.ints({2})}, unknown_dims(4));
  };
  ir::Value* over = f.op("Max", {f.ints({0}, true), f.op("Add", {f.ints({-7}, true), n}, scalar)}, scalar);
  ir::Value* window = f.op("Add", {n, f.op("Mul", {f.ints({-1}, true), over}, scalar)}, scalar);
  EXPECT_EQ(dim_of(slice(-7, kEnd), 2), elements(window)->at(0));
  EXPECT_NE(dim_of(slice(-6, kEnd), 2), elements(window)->at(0));
  // past[:, :, :5]: past - max(past - 5, 0), written with Sub
  ir::Value* head = f.op("Sub", {n, f.op("Max", {f.op("Sub", {n, f.ints({5}, true)}, scalar), f.ints({0}, true)},
                                          scalar)}, scalar);
  EXPECT_EQ(dim_of(slice(0, 5), 2), elements(head)->at(0));
  // past[:, :, 3:]: max(0, past - 3), not past - 3 (past may be shorter)
  ir::Value* tail = f.op("Max", {f.op("Sub", {n, f.ints({3}, true)}, scalar), f.ints({0}, true)}, scalar);
  EXPECT_EQ(dim_of(slice(3, kEnd), 2), elements(tail)->at(0));
  EXPECT_NE(dim_of(slice(3, kEnd), 2), elements(f.op("Sub", {n, f.ints({3}, true)}, scalar))->at(0));
  // a static length: the number
  ir::Value* fixed = f.g.add_input("fixed", typed({Dim::of(10)}));
  EXPECT_EQ(dim_of(f.op("Slice", {fixed, f.ints({-7}), f.ints({kEnd}), f.ints({0})}, unknown_dims(1)), 0),
            constant_size(7));
  // (n * 4 - n * 4 % 4) / 4 is n: the floor division of a merged batch by its heads, as exporters write it
  ir::Value* merged = f.op("Mul", {n, f.ints({4}, true)}, scalar);
  ir::Value* floor = f.op("Div", {f.op("Sub", {merged, f.op("Mod", {merged, f.ints({4}, true)}, scalar)}, scalar),
                                  f.ints({4}, true)}, scalar);
  EXPECT_EQ(elements(floor)->at(0), elements(n)->at(0));
  EXPECT_FALSE(elements(f.op("Div", {n, f.ints({4}, true)}, scalar)).has_value());  // (n / 4: not a sum of sizes)
  // an atom and its negation cancel; 2 * n is n + n
  EXPECT_EQ(elements(f.op("Sub", {n, n}, scalar))->at(0), constant_size(0));
  EXPECT_EQ(elements(f.op("Mul", {n, f.ints({2}, true)}, scalar))->at(0),
            elements(f.op("Add", {n, n}, scalar))->at(0));
}

TEST(Sizes, SliceToARunTimeEndIsBoundedByIt) {
  // BERT's position embeddings: positions[:, :seq] ([1, 512] sliced to the ids' length) beside the ids'
  // embeddings [batch, seq]: min(512, seq) is at most seq, so their sum has seq rows
  PassFixture f;
  const ir::ValueType len1 = ir::ValueType::tensor(ir::DType::Int64, {1});
  ir::Value* ids = f.g.add_input("ids", typed({Dim::named("batch"), Dim::named("seq")}, ir::DType::Int64));
  ir::Value* positions = f.g.add_input("positions", typed({Dim::of(1), Dim::of(512)}, ir::DType::Int64));
  ir::Value* seq = f.op("Shape", {ids}, len1, {{"start", int64_t{1}}, {"end", int64_t{2}}});
  ir::Value* cut = f.op("Slice", {positions, f.ints({0}), seq, f.ints({1})}, unknown_dims(2, ir::DType::Int64));
  const Size bounded = dim_of(cut, 1);
  EXPECT_NE(bounded, named("seq"));  // (min(512, seq): not seq when seq > 512)
  EXPECT_NE(bounded, constant_size(512));
  ir::Value* sum = f.op("Add", {ids, cut}, unknown_dims(2, ir::DType::Int64));
  EXPECT_EQ(dim_of(sum, 1), named("seq"));
  EXPECT_EQ(dim_of(sum, 0), named("batch"));
  // ids[:, :ids.size(1)] is ids' own length
  ir::Value* whole = f.op("Slice", {ids, f.ints({0}), seq, f.ints({1})}, unknown_dims(2, ir::DType::Int64));
  EXPECT_EQ(dim_of(whole, 1), named("seq"));
  // beside another length it proves nothing
  ir::Value* other = f.g.add_input("other", typed({Dim::named("batch"), Dim::named("total")}, ir::DType::Int64));
  EXPECT_NE(dim_of(f.op("Add", {other, cut}, unknown_dims(2, ir::DType::Int64)), 1), named("total"));
  // a slice from 1 is not bounded this way (a start other than 0 is left to the atom)
  ir::Value* from1 = f.op("Slice", {positions, f.ints({1}), seq, f.ints({1})}, unknown_dims(2, ir::DType::Int64));
  EXPECT_NE(dim_of(f.op("Add", {ids, from1}, unknown_dims(2, ir::DType::Int64)), 1), named("seq"));
}

TEST(Sizes, AViewsMinusOneByWhatIsLeft) {
  // view(-1, seq) of [batch, seq]: batch; [b * 4, s, 8] viewed as [-1, 4, s, 8]: b; [b, s, 32] as [b, s, 4, -1]: 8
  PassFixture f;
  const ir::ValueType shape4 = ir::ValueType::tensor(ir::DType::Int64, {4});
  ir::Value* ids = f.g.add_input("ids", typed({Dim::named("batch"), Dim::named("seq")}, ir::DType::Int64));
  ir::Value* seq = f.op("Shape", {ids}, ir::ValueType::tensor(ir::DType::Int64, {1}), {{"start", int64_t{1}}});
  ir::Value* flat = f.op("Reshape", {ids, f.op("Concat", {f.ints({-1}), seq}, ir::ValueType::tensor(ir::DType::Int64, {2}),
                                               {{"axis", int64_t{0}}})},
                         unknown_dims(2, ir::DType::Int64));
  EXPECT_EQ(dim_of(flat, 0), named("batch"));
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::named("seq"), Dim::of(32)}));
  ir::Value* heads = f.op("Reshape", {x, f.op("Concat", {f.op("Shape", {x}, ir::ValueType::tensor(ir::DType::Int64, {2}),
                                                                {{"start", int64_t{0}}, {"end", int64_t{2}}}),
                                                         f.ints({4, -1})},
                                                shape4, {{"axis", int64_t{0}}})},
                          unknown_dims(4));
  EXPECT_EQ(dim_of(heads, 3), constant_size(8));
  // merged into the batch: [-1, s, 8], then back: [-1, 4, s, 8]
  ir::Value* merged = f.op("Reshape", {heads, f.op("Concat", {f.ints({-1}), seq, f.ints({8})},
                                                   ir::ValueType::tensor(ir::DType::Int64, {3}), {{"axis", int64_t{0}}})},
                           unknown_dims(3));
  const Size four_b = dim_of(merged, 0);
  EXPECT_EQ(four_b, (Size{0, {"p:batch", "p:batch", "p:batch", "p:batch"}}));
  ir::Value* back = f.op("Reshape", {merged, f.op("Concat", {f.ints({-1, 4}), seq, f.ints({8})}, shape4,
                                                  {{"axis", int64_t{0}}})},
                         unknown_dims(4));
  EXPECT_EQ(dim_of(back, 0), named("batch"));
  // [-1, 3, s, 8] of 4b rows: not a whole number of b, nothing known
  ir::Value* odd = f.op("Reshape", {merged, f.op("Concat", {f.ints({-1, 3}), seq, f.ints({8})}, shape4,
                                                 {{"axis", int64_t{0}}})},
                        unknown_dims(4));
  EXPECT_NE(dim_of(odd, 0), named("batch"));
  EXPECT_FALSE(dim_of(odd, 0).atoms.empty());
}

TEST(Sizes, ReductionsKeepingDims) {
  // GPT-2's "may this row attend at all": ReduceMax(scores, [-1], keepdims) beside the scores broadcasts to them
  PassFixture f;
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::named("total")}));
  ir::Value* m = f.op("ReduceMax", {x, f.ints({-1})}, unknown_dims(4));
  EXPECT_EQ(dim_of(m, 3), constant_size(1));
  EXPECT_EQ(dim_of(m, 2), named("seq"));
  EXPECT_EQ(dim_of(f.op("Equal", {m, x}, unknown_dims(4, ir::DType::Bool)), 3), named("total"));
  ir::Value* all = f.op("ReduceSum", {x}, unknown_dims(4));  // (no axes: all of them)
  EXPECT_EQ(dim_of(all, 0), constant_size(1));
  ir::Value* old = f.op("ReduceMean", {x}, unknown_dims(4), {{"axes", std::vector<int64_t>{1}}});  // (axes attribute)
  EXPECT_EQ(dim_of(old, 1), constant_size(1));
  EXPECT_EQ(dim_of(old, 0), named("batch"));
  ir::Value* dropped = f.op("ReduceMax", {x, f.ints({-1})}, unknown_dims(3), {{"keepdims", int64_t{0}}});
  EXPECT_FALSE(dim_of(dropped, 2).atoms.empty());  // (keepdims 0: not followed)
}

TEST(Sizes, ConcatOffItsAxisAsksEveryInput) {
  // GPT-J's partial rotary: cat(rope(q[..., :r]), q[..., r:], -1): the rotated part's seq is a dim of its own
  // (cos's rows), the pass-through part's is the named seq; they agree, so the result's is seq
  PassFixture f;
  ir::Value* q = f.g.add_input("q", typed({Dim::named("batch"), Dim::named("seq"), Dim::of(4), Dim::of(4)}));
  ir::Value* rotated = f.op("NonZero", {q}, unknown_dims(4));  // (any value of unknown sizes)
  ir::Value* cat = f.op("Concat", {rotated, q}, unknown_dims(4), {{"axis", int64_t{3}}});
  EXPECT_EQ(dim_of(cat, 1), named("seq"));
  EXPECT_EQ(dim_of(cat, 3), sum(dim_of(rotated, 3), constant_size(4)));
  ir::Value* opaque = f.op("Concat", {rotated, rotated}, unknown_dims(4), {{"axis", int64_t{3}}});
  EXPECT_EQ(dim_of(opaque, 1), dim_of(rotated, 1));
}

TEST(Sizes, EveryQuestionIsBounded) {
  // x_{i+1} = x_i + x_i: each dim question asks both operands, 2^n looks for n levels without a bound
  PassFixture f;
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::of(4)}));
  ir::Value* y = x;
  for (int i = 0; i < 5; ++i) y = f.op("Add", {y, y}, unknown_dims(2));
  EXPECT_EQ(dim_of(y, 0), named("batch"));  // a shallow one is answered
  for (int i = 0; i < 40; ++i) y = f.op("Add", {y, y}, unknown_dims(2));
  EXPECT_EQ(dim_of(y, 0), named("batch"));  // each value is asked once per question: 2^45 reads are 45
  for (int i = 0; i < 60; ++i) y = f.op("Add", {y, y}, unknown_dims(2));
  EXPECT_FALSE(dim_of(y, 0).value());       // a deeper one than the bound: nothing known (and it returns)
  EXPECT_EQ(dim_of(y, 1), dim_of(y, 1));    // (the next question starts afresh)
}

TEST(Sizes, ConstantOfShapeAndElementWiseOps) {
  // full_like(x.abs().floor(), 3): [batch, seq]
  PassFixture f;
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::named("seq")}));
  ir::Value* floor = f.op("Floor", {f.op("Abs", {x}, unknown_dims(2))}, unknown_dims(2));
  ir::Value* shape = f.op("Shape", {floor}, ir::ValueType::tensor(ir::DType::Int64, {2}));
  ir::Value* filled = f.op("ConstantOfShape", {shape}, unknown_dims(2));
  EXPECT_EQ(dim_of(filled, 0), named("batch"));
  EXPECT_EQ(dim_of(filled, 1), named("seq"));
  EXPECT_EQ(dim_of(f.op("Min", {floor, filled}, unknown_dims(2)), 1), named("seq"));
}

}  // namespace
}  // namespace torch2onnx
