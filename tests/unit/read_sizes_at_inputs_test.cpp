// onnx_passes::read_sizes_at_inputs: shape computations proved to be the graph
// inputs' sizes read from the inputs, so that the copies merge.
#include <gtest/gtest.h>

#include <limits>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "onnx_passes/match.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using ir::Dim;
const ir::ValueType kScalar = ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{});

struct Fixture : PassFixture {
  ir::Value *ids, *hidden;
  explicit Fixture(int opset = 20) : PassFixture(opset) {
    ids = g.add_input("ids", typed({Dim::named("batch"), Dim::named("seq")}, ir::DType::Int64));
    ir::Value* table = weights("table", std::vector<double>(10 * 8, 0.5), {10, 8});
    hidden = op("Gather", {table, ids}, typed({Dim{}, Dim{}, Dim::of(8)}), {{"axis", int64_t{0}}});
  }
  ir::Value* projected() {
    ir::Value* w = weights(g.unique_name("w"), std::vector<double>(8 * 8, 0.25), {8, 8});
    return op("MatMul", {hidden, w}, typed({Dim{}, Dim{}, Dim::of(8)}));
  }
  // x.view(x.size()[:2] + (2, -1)) as a trace writes it: Concat(Shape(x, 0, 2), [2, -1])
  ir::Value* split_heads(ir::Value* x) {
    ir::Value* lead = op("Shape", {x}, ir::ValueType::tensor(ir::DType::Int64, {2}),
                         {{"start", int64_t{0}}, {"end", int64_t{2}}});
    ir::Value* to = op("Concat", {lead, ints({2, -1})}, ir::ValueType::tensor(ir::DType::Int64, {4}),
                       {{"axis", int64_t{0}}});
    return op("Reshape", {x, to}, typed({Dim{}, Dim{}, Dim::of(2), Dim::of(4)}));
  }
  ir::Value* size(ir::Value* x, int64_t axis, int64_t rank) {
    ir::Value* s = op("Shape", {x}, ir::ValueType::tensor(ir::DType::Int64, {rank}));
    return op("Gather", {s, ints({axis}, true)}, kScalar, {{"axis", int64_t{0}}});
  }
  void run() {
    onnx_passes::read_sizes_at_inputs(m, ctx);
    onnx_passes::deduplicate_constants(m, ctx);
    onnx_passes::eliminate_common_subexpressions(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
  // Every Shape node reads a graph input.
  bool shapes_read_inputs() const {
    for (const auto& n : g.nodes())
      if (n->op_type() == "Shape" && !n->input(0)->is_graph_input()) return false;
    return true;
  }
};

TEST(ReadSizesAtInputs, PerLayerReshapeTargetsBecomeOne) {
  Fixture f;
  for (int layer = 0; layer < 3; ++layer) f.g.add_output(f.split_heads(f.projected()));
  EXPECT_EQ(f.count("Shape"), 3u);
  EXPECT_EQ(f.count("Concat"), 3u);
  f.run();
  EXPECT_EQ(f.count("Shape"), 1u);
  EXPECT_EQ(f.count("Concat"), 1u);
  EXPECT_TRUE(f.shapes_read_inputs());
  ir::Node* shape = nullptr;
  for (const auto& n : f.g.nodes())
    if (n->op_type() == "Shape") shape = n.get();
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->input(0), f.ids);
  EXPECT_EQ(shape->attr_i("start", -9), 0);
  EXPECT_EQ(shape->attr_i("end", -9), 2);
}

TEST(ReadSizesAtInputs, ADifferenceOfEqualSizesIsAConstant) {
  // GPT-Neo's causal mask: bias[:, :, k_len - q_len : k_len], both lengths the ids' seq
  Fixture f;
  ir::Value* q = f.split_heads(f.projected());
  ir::Value* k = f.split_heads(f.projected());
  ir::Value* diff = f.op("Sub", {f.size(k, 1, 4), f.size(q, 1, 4)}, kScalar);
  ir::Value* y = f.op("Add", {f.hidden, f.op("Cast", {diff}, ir::ValueType::tensor(ir::DType::Float), {{"to", int64_t{1}}})},
                      typed({Dim{}, Dim{}, Dim::of(8)}));
  f.g.add_output(y);
  f.run();
  ir::Node* cast = y->producer()->input(1)->producer();
  ASSERT_EQ(cast->op_type(), "Cast");
  const ir::Tensor* zero = cast->input(0)->constant();
  ASSERT_NE(zero, nullptr);
  EXPECT_TRUE(zero->dims().empty());
  EXPECT_EQ(zero->to_int64s(), std::vector<int64_t>{0});
}

TEST(ReadSizesAtInputs, ScalarSizesReadTheInput) {
  Fixture f;
  ir::Value* a = f.size(f.projected(), 1, 3);
  ir::Value* b = f.size(f.split_heads(f.projected()), 1, 4);
  ir::Value* sum = f.op("Add", {a, b}, kScalar);
  f.g.add_output(sum);
  f.run();
  EXPECT_TRUE(f.shapes_read_inputs());
  EXPECT_EQ(sum->producer()->input(0), sum->producer()->input(1));  // (the two reads are one)
  EXPECT_EQ(f.count("Shape"), 1u);
}

TEST(ReadSizesAtInputs, PiecesAreSplicedIntoConcatsOnly) {
  // [seq, 4, batch] read off a value: three pieces (seq, a constant, batch), taken into the Concat that
  // reads them; the same computation read by a Reshape's shape directly stays as it is
  Fixture f;
  ir::Value* x = f.projected();
  ir::Value* t = f.op("Transpose", {x}, typed({Dim{}, Dim{}, Dim{}}), {{"perm", std::vector<int64_t>{1, 2, 0}}});
  ir::Value* s = f.op("Shape", {t}, ir::ValueType::tensor(ir::DType::Int64, {3}));  // [seq, 8, batch]
  ir::Value* to = f.op("Concat", {s, f.ints({1})}, ir::ValueType::tensor(ir::DType::Int64, {4}), {{"axis", int64_t{0}}});
  f.g.add_output(f.op("Reshape", {t, to}, typed({Dim{}, Dim{}, Dim{}, Dim::of(1)})));
  ir::Value* s2 = f.op("Shape", {f.op("Relu", {t}, typed({Dim{}, Dim{}, Dim{}}))},
                       ir::ValueType::tensor(ir::DType::Int64, {3}));
  f.g.add_output(f.op("Expand", {t, s2}, typed({Dim{}, Dim{}, Dim{}})));
  f.run();
  ir::Node* cat = to->producer();
  ASSERT_EQ(cat->op_type(), "Concat");
  ASSERT_EQ(cat->num_inputs(), 4u);  // Shape(ids, 1, 2), [8], Shape(ids, 0, 1), [1]
  EXPECT_EQ(cat->input(0)->producer()->input(0), f.ids);
  EXPECT_EQ(cat->input(2)->producer()->input(0), f.ids);
  EXPECT_EQ(cat->input(1)->constant()->to_int64s(), std::vector<int64_t>{8});
  // the Expand's shape: still read off a value (three pieces and no Concat to take them)
  ir::Node* expand = nullptr;
  for (const auto& n : f.g.nodes())
    if (n->op_type() == "Expand") expand = n.get();
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(expand->input(1)->producer()->op_type(), "Shape");
  EXPECT_FALSE(expand->input(1)->producer()->input(0)->is_graph_input());
}

TEST(ReadSizesAtInputs, ASumOfSizesIsReadWhereFirstRead) {
  // each layer's cache Concat(past, k) has past + seq rows: every layer's read of it reads the first layer's
  Fixture f;
  ir::Value* past = f.g.add_input("past", typed({Dim::named("batch"), Dim::named("past"), Dim::of(8)}));
  std::vector<ir::Value*> reads;
  for (int layer = 0; layer < 3; ++layer) {
    ir::Value* cache = f.op("Concat", {past, f.projected()}, typed({Dim{}, Dim{}, Dim::of(8)}), {{"axis", int64_t{1}}});
    f.g.add_output(cache);
    ir::Value* len = f.op("Shape", {cache}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                          {{"start", int64_t{1}}, {"end", int64_t{2}}});
    ir::Value* to = f.op("Concat", {f.ints({1}), len}, ir::ValueType::tensor(ir::DType::Int64, {2}), {{"axis", int64_t{0}}});
    f.g.add_output(f.op("Expand", {f.weights(f.g.unique_name("m"), {1.0}, {1, 1}), to}, typed({Dim::of(1), Dim{}})));
    reads.push_back(to);
  }
  f.run();
  EXPECT_EQ(f.count("Shape"), 1u);
  EXPECT_EQ(f.count("Concat"), 3u + 1u);  // (the caches, and one shape)
}

TEST(ReadSizesAtInputs, AbsOfSizesGoes) {
  // x.expand(b, 1, s) as the lowering writes it: Abs(Concat(...)) for a -1 PyTorch allows; of sizes and
  // non-negative constants it is the Concat itself
  Fixture f;
  ir::Value* sizes = f.op("Concat", {f.op("Shape", {f.ids}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                                          {{"start", int64_t{0}}, {"end", int64_t{1}}}),
                                     f.ints({1, 4})},
                          ir::ValueType::tensor(ir::DType::Int64, {3}), {{"axis", int64_t{0}}});
  ir::Value* minus_one = f.op("Concat", {f.op("Shape", {f.ids}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                                         {{"start", int64_t{0}}, {"end", int64_t{1}}}),
                                    f.ints({-1, 4})},
                         ir::ValueType::tensor(ir::DType::Int64, {3}), {{"axis", int64_t{0}}});
  ir::Value* w = f.weights("w", {1, 2, 3, 4}, {1, 1, 4});
  f.g.add_output(f.op("Expand", {w, f.op("Abs", {sizes}, ir::ValueType::tensor(ir::DType::Int64, {3}))},
                      typed({Dim{}, Dim::of(1), Dim::of(4)})));
  f.g.add_output(f.op("Expand", {w, f.op("Abs", {minus_one}, ir::ValueType::tensor(ir::DType::Int64, {3}))},
                      typed({Dim{}, Dim::of(1), Dim::of(4)})));
  // the same read twice (an Abs and a graph output): |-1| stays
  ir::Value* shared = f.op("Concat", {f.op("Shape", {f.ids}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                                           {{"start", int64_t{0}}, {"end", int64_t{1}}}),
                                      f.ints({-1, 3})},
                           ir::ValueType::tensor(ir::DType::Int64, {3}), {{"axis", int64_t{0}}});
  f.g.add_output(shared);
  f.g.add_output(f.op("Expand", {w, f.op("Abs", {shared}, ir::ValueType::tensor(ir::DType::Int64, {3}))},
                      typed({Dim{}, Dim::of(1), Dim::of(4)})));
  f.run();
  // of a Concat read by the Abs alone, the constants take their absolute values: [b, 1, 4]
  EXPECT_EQ(f.count("Abs"), 1u);
  // (then the same as the first: one computation after common subexpressions)
  ir::Node* cat = f.g.outputs()[1]->producer()->input(1)->producer();
  ASSERT_TRUE(cat && cat->op_type() == "Concat");
  EXPECT_EQ(onnx_passes::match::const_ints(cat->input(cat->num_inputs() - 1)), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(f.g.outputs()[0]->producer()->input(1), f.g.outputs()[1]->producer()->input(1));
}

TEST(ReadSizesAtInputs, UnprovedSizesAndOldOpsetsAreLeft) {
  {
    Fixture f;
    ir::Value* nz = f.op("NonZero", {f.ids}, typed({Dim::of(2), Dim{}}, ir::DType::Int64));
    ir::Value* n = f.size(nz, 1, 2);
    f.g.add_output(f.op("Range", {f.ints({0}, true), n, f.ints({1}, true)}, ir::ValueType::tensor(ir::DType::Int64, {-1})));
    f.run();
    EXPECT_EQ(n->producer()->op_type(), "Gather");
    EXPECT_EQ(n->producer()->input(0)->producer()->input(0), nz);
  }
  {
    Fixture f(14);  // (no Shape start / end before 15)
    f.g.add_output(f.split_heads(f.projected()));
    f.run();
    EXPECT_FALSE(f.shapes_read_inputs());
  }
}

}  // namespace
}  // namespace torch2onnx
