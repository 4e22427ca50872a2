// The IR: use lists, replacement, dead code and constant passes.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "onnx_passes/transposed.h"

namespace torch2onnx {
namespace {

TEST(IR, UsesTrackInputsAndOutputs) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float));
  ir::Node* a = g.create_node("Relu", {x}, 1);
  ir::Node* b = g.create_node("Add", {a->output(0), x}, 1);
  g.add_output(b->output(0));
  EXPECT_EQ(x->uses().size(), 2u);
  ir::Node* c = g.create_node("Neg", {x}, 1);
  a->output(0)->replace_all_uses_with(c->output(0));
  EXPECT_FALSE(a->output(0)->has_uses());
  EXPECT_EQ(b->input(0), c->output(0));
  a->destroy();
  EXPECT_EQ(x->uses().size(), 2u);
  b->output(0)->replace_all_uses_with(x);
  EXPECT_EQ(g.outputs()[0], x);
}

TEST(IR, NamesAreUniqueAcrossSubgraphs) {
  ir::Graph g;
  auto sub = std::make_shared<ir::Graph>(&g);
  ir::Value* a = g.add_input("v", ir::ValueType::tensor(ir::DType::Float));
  ir::Value* b = sub->add_input("v", ir::ValueType::tensor(ir::DType::Float));
  EXPECT_NE(a->name(), b->name());
}

TEST(IR, DestroyingAUsedNodeThrows) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float));
  ir::Node* a = g.create_node("Relu", {x}, 1);
  g.add_output(a->output(0));
  EXPECT_THROW(a->destroy(), std::logic_error);
}

TEST(Passes, FoldConstantsAndEliminateDeadCode) {
  ir::Model m;
  m.opset = 17;
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Int64, {3}));
  ir::Value* c1 = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({1, 2, 3})}})->output(0);
  ir::Value* c2 = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({10, 20, 30})}})->output(0);
  ir::Value* sum = g.create_node("Add", {c1, c2}, 1)->output(0);
  ir::Value* y = g.create_node("Mul", {x, sum}, 1)->output(0);
  g.create_node("Neg", {x}, 1);  // dead
  g.add_output(y);
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::fold_constants(m, ctx);
  onnx_passes::eliminate_dead_code(m, ctx);
  onnx_passes::lint(m, "test");
  ASSERT_EQ(g.num_nodes(), 2u);  // Constant(11, 22, 33) and Mul
  const ir::Tensor* folded = y->producer()->input(1)->constant();
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->to_int64s(), (std::vector<int64_t>{11, 22, 33}));
}

// Masks built by slice assignment (Swin's shifted windows) fold: ScatterElements
// and ScatterND of constants, negative indices counting from the end.
TEST(Passes, FoldScatters) {
  ir::Model m;
  m.opset = 17;
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Int64, {2, 3}));
  auto c = [&](ir::Tensor t) { return g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0); };
  ir::Value* data = c(ir::Tensor::from_int64s({0, 0, 0, 0, 0, 0}).reshaped({2, 3}));
  ir::Value* idx = c(ir::Tensor::from_int64s({2, -3}).reshaped({1, 2}));
  ir::Value* upd = c(ir::Tensor::from_int64s({7, 8}).reshaped({1, 2}));
  ir::Value* se = g.create_node("ScatterElements", {data, idx, upd}, 1, {{"axis", int64_t{1}}})->output(0);
  ir::Value* nd_idx = c(ir::Tensor::from_int64s({1, -1}).reshaped({1, 2}));
  ir::Value* nd = g.create_node("ScatterND", {se, nd_idx, c(ir::Tensor::from_int64s({5}))}, 1)->output(0);
  g.add_output(g.create_node("Add", {x, nd}, 1)->output(0));
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::fold_constants(m, ctx);
  onnx_passes::eliminate_dead_code(m, ctx);
  ir::Node* add = g.outputs()[0]->producer();
  ASSERT_NE(add->input(1)->constant(), nullptr);
  EXPECT_EQ(add->input(1)->constant()->to_int64s(), (std::vector<int64_t>{8, 0, 7, 0, 0, 5}));
}

// The main graph's Constant nodes become initializers, unless they would be
// listed as overridable inputs.
TEST(Passes, ConstantsToInitializers) {
  for (bool keep : {false, true}) {
    ir::Model m;
    m.opset = 17;
    ir::Graph& g = *m.graph;
    ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Int64, {3}));
    ir::Value* k = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({1, 2, 3})}})->output(0);
    g.add_output(g.create_node("Mul", {x, k}, 1)->output(0));
    ExportOptions o;
    o.keep_initializers_as_inputs = keep;
    onnx_passes::PassContext ctx{o};
    onnx_passes::constants_to_initializers(m, ctx);
    onnx_passes::lint(m, "test");
    EXPECT_EQ(g.num_nodes(), keep ? 2u : 1u);
    ir::Value* factor = g.outputs()[0]->producer()->input(1);
    ASSERT_NE(factor->constant(), nullptr);
    EXPECT_EQ(factor->constant()->to_int64s(), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(factor->producer() == nullptr, !keep);
  }
}

TEST(Passes, FoldingFreesInitializersItConsumed) {
  // Transpose(W) folds into W^T; W had no other use, so the pass itself
  // removes it (a model of Linear weights never holds both copies). V is
  // also used by an Add: it stays.
  ir::Model m;
  m.opset = 17;
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3}));
  ir::Value* w = g.add_initializer("w", ir::Tensor::from_doubles(ir::DType::Float, {1, 2, 3, 4, 5, 6}, {3, 2}));
  ir::Value* v = g.add_initializer("v", ir::Tensor::from_doubles(ir::DType::Float, {1, 2, 3, 4, 5, 6}, {2, 3}));
  ir::Value* wt = g.create_node("Transpose", {w}, 1, {{"perm", std::vector<int64_t>{1, 0}}})->output(0);
  ir::Value* vt = g.create_node("Transpose", {v}, 1, {{"perm", std::vector<int64_t>{1, 0}}})->output(0);
  ir::Value* y = g.create_node("Add", {x, wt}, 1)->output(0);
  ir::Value* z = g.create_node("Add", {x, v}, 1)->output(0);
  ir::Value* u = g.create_node("MatMul", {x, vt}, 1)->output(0);
  g.add_output(y);
  g.add_output(z);
  g.add_output(u);
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::fold_constants(m, ctx);
  onnx_passes::lint(m, "test");
  EXPECT_FALSE(w->is_initializer());
  EXPECT_TRUE(v->is_initializer());
  EXPECT_EQ(g.initializers().size(), 1u);  // v (w^T and v^T are small: Constant nodes)
  EXPECT_EQ(y->producer()->input(1)->constant()->to_doubles(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(Passes, DeduplicateInitializers) {
  ir::Model m;
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2}));
  ir::Value* a = g.add_initializer("a", ir::Tensor::from_doubles(ir::DType::Float, {1, 2}, {2}));
  ir::Value* b = g.add_initializer("b", ir::Tensor::from_doubles(ir::DType::Float, {1, 2}, {2}));
  ir::Value* s = g.create_node("Add", {x, a}, 1)->output(0);
  ir::Value* t = g.create_node("Add", {s, b}, 1)->output(0);
  g.add_output(t);
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::deduplicate_constants(m, ctx);
  EXPECT_EQ(g.initializers().size(), 1u);
  EXPECT_EQ(t->producer()->input(1), a);
}

// Reference: x (dims) with axes permuted, element by element.
std::vector<double> naive_transpose(const std::vector<double>& x, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1), out_dims;
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  for (int64_t p : perm) out_dims.push_back(dims[static_cast<size_t>(p)]);
  std::vector<double> out(x.size());
  std::vector<int64_t> idx(rank, 0);
  for (size_t e = 0; e < x.size(); ++e) {
    int64_t at = 0;
    for (size_t i = 0; i < rank; ++i) at += idx[i] * strides[static_cast<size_t>(perm[i])];
    out[e] = x[static_cast<size_t>(at)];
    for (size_t i = rank; i-- > 0;)
      if (++idx[i] < out_dims[i]) break; else idx[i] = 0;
  }
  return out;
}

TEST(Passes, ComputedTransposeMatchesEagerOne) {
  // Tiled 2-D path and the general path, over shapes that are not multiples
  // of the tile, read whole, in pieces that cut rows, and in pieces that cut
  // elements (the dedup pass samples 64 bytes anywhere).
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const Case cases[] = {{{70, 45}, {1, 0}}, {{1, 300}, {1, 0}}, {{3, 5, 7}, {2, 0, 1}}, {{4, 6, 5}, {0, 2, 1}},
                        {{33, 65}, {0, 1}}, {{2, 3, 4, 5}, {3, 1, 0, 2}}};
  for (ir::DType dt : {ir::DType::Float, ir::DType::Double, ir::DType::Int64, ir::DType::Float16, ir::DType::UInt8}) {
    for (const Case& c : cases) {
      int64_t numel = 1;
      for (int64_t d : c.dims) numel *= d;
      std::vector<double> values;
      for (int64_t i = 0; i < numel; ++i) values.push_back(static_cast<double>(i % 251));
      const ir::Tensor x = ir::Tensor::from_doubles(dt, values, c.dims);
      const ir::Tensor t = onnx_passes::transposed(x, c.perm);
      ASSERT_TRUE(t.is_computed());
      const std::vector<double> want = naive_transpose(values, c.dims, c.perm);
      const ir::Tensor expected = ir::Tensor::from_doubles(dt, want, t.dims());
      std::vector<uint8_t> whole(t.nbytes()), pieces(t.nbytes());
      t.read(0, t.nbytes(), whole.data());
      EXPECT_EQ(0, std::memcmp(whole.data(), expected.data(), t.nbytes())) << ir::format_dims(c.dims);
      for (size_t piece : {size_t{7}, size_t{64}, size_t{100}}) {
        for (size_t off = 0; off < t.nbytes(); off += piece) t.read(off, std::min(piece, t.nbytes() - off), pieces.data() + off);
        EXPECT_EQ(0, std::memcmp(pieces.data(), expected.data(), t.nbytes())) << ir::format_dims(c.dims) << " " << piece;
      }
      EXPECT_EQ(t.fingerprint(), expected.fingerprint());
    }
  }
}

TEST(Passes, ComputedTransposeReleasesItsSourcesPages) {
  int released = 0;
  std::vector<double> values(64 * 64, 1.0);
  const ir::Tensor src = ir::Tensor::from_doubles(ir::DType::Float, values, {64, 64});
  const ir::Tensor x = ir::Tensor::borrowed(ir::DType::Float, {64, 64}, src.data(), src.nbytes(),
                                            std::make_shared<ir::Tensor>(src), [&released] { ++released; });
  const ir::Tensor t = onnx_passes::transposed(x, {1, 0});
  t.release_pages();
  EXPECT_EQ(released, 1);
}

TEST(Passes, LargeTransposesAndReshapesFoldWithoutCopies) {
  // Transpose of a weight >= 64 KiB folds into a tensor computed when written;
  // Reshape/Flatten/Unsqueeze/Squeeze fold into views of their input's bytes,
  // which stay valid once the input initializer is gone.
  ir::Model m;
  m.opset = 17;
  ir::Graph& g = *m.graph;
  std::vector<double> values(256 * 128);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 256}));
  ir::Value* w = g.add_initializer("w", ir::Tensor::from_doubles(ir::DType::Float, values, {128, 256}));
  ir::Value* r = g.add_initializer("r", ir::Tensor::from_doubles(ir::DType::Float, values, {256, 128}));
  ir::Value* shape = g.add_initializer("shape", ir::Tensor::from_int64s({0, 2, -1}));
  ir::Value* wt = g.create_node("Transpose", {w}, 1, {{"perm", std::vector<int64_t>{1, 0}}})->output(0);
  ir::Value* y = g.create_node("MatMul", {x, wt}, 1)->output(0);
  ir::Value* rr = g.create_node("Reshape", {r, shape}, 1)->output(0);
  ir::Value* ru = g.create_node("Unsqueeze", {rr, g.add_initializer("axes", ir::Tensor::from_int64s({0}))}, 1)->output(0);
  ir::Value* rs = g.create_node("Squeeze", {ru}, 1)->output(0);
  ir::Value* rf = g.create_node("Flatten", {rs}, 1, {{"axis", int64_t{1}}})->output(0);
  g.add_output(y);
  ir::Value* z = g.add_input("z", ir::ValueType::tensor(ir::DType::Float, {256, 128}));
  g.add_output(g.create_node("Add", {rf, z}, 1)->output(0));
  const uint8_t* r_bytes = r->initializer()->data();
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::fold_constants(m, ctx);
  onnx_passes::lint(m, "test");
  const ir::Tensor* folded_t = y->producer()->input(1)->constant();
  ASSERT_NE(folded_t, nullptr);
  EXPECT_TRUE(folded_t->is_computed());
  EXPECT_EQ(folded_t->dims(), (std::vector<int64_t>{256, 128}));
  EXPECT_EQ(folded_t->double_at(1), 256.0);  // [0][1] = w[1][0]
  EXPECT_EQ(folded_t->double_at(128), 1.0);  // [1][0] = w[0][1]
  const ir::Tensor* folded_r = g.outputs()[1]->producer()->input(0)->constant();
  ASSERT_NE(folded_r, nullptr);
  EXPECT_FALSE(r->is_initializer());
  EXPECT_EQ(folded_r->dims(), (std::vector<int64_t>{256, 128}));
  EXPECT_EQ(folded_r->data(), r_bytes);
  EXPECT_EQ(folded_r->to_doubles(), values);
}

}  // namespace
}  // namespace torch2onnx
