// The IR: use lists, replacement, dead code and constant passes.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"

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

}  // namespace
}  // namespace torch2onnx
