// onnx_passes::fuse_transposes
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"

namespace torch2onnx {
namespace {

// x [2, 3, 4, 5] transposed by `first` then `second`: the perms of the Transposes left.
std::vector<std::vector<int64_t>> left_after(std::vector<int64_t> first, std::vector<int64_t> second,
                                             bool middle_returned = false) {
  ir::Model m;
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3, 4, 5}));
  ir::Value* mid = g.create_node("Transpose", {x}, 1, {{"perm", first}})->output(0);
  ir::Value* t = g.create_node("Transpose", {mid}, 1, {{"perm", second}})->output(0);
  ir::Value* out = g.create_node("Relu", {t}, 1)->output(0);
  g.add_output(out);
  if (middle_returned) g.add_output(mid);
  onnx_passes::fuse_transposes(m, ctx);
  onnx_passes::eliminate_dead_code(m, ctx);
  onnx_passes::lint(m, "test");
  std::vector<std::vector<int64_t>> perms;
  for (const auto& n : g.nodes())
    if (n->op_type() == "Transpose") perms.push_back(n->attr_ints("perm"));
  if (perms.empty()) {
    EXPECT_EQ(out->producer()->input(0), x);
  }
  return perms;
}

TEST(FuseTransposes, ATransposeOfATransposeIsOne) {
  // permute(0, 2, 1, 3) then transpose(-1, -2): x dims (0, 2, 3, 1)
  EXPECT_EQ(left_after({0, 2, 1, 3}, {0, 1, 3, 2}), (std::vector<std::vector<int64_t>>{{0, 2, 3, 1}}));
  // one undoing the other: nothing left
  EXPECT_TRUE(left_after({0, 2, 3, 1}, {0, 3, 1, 2}).empty());
  // the middle value also returned: it stays, and the outer one reads x directly
  EXPECT_EQ(left_after({0, 2, 1, 3}, {0, 1, 3, 2}, true),
            (std::vector<std::vector<int64_t>>{{0, 2, 1, 3}, {0, 2, 3, 1}}));
}

TEST(FuseTransposes, TheInnerOneGoesWithItsLastOtherReader) {
  // k.permute(0, 2, 1, 3) read by a Shape and by .transpose(-1, -2): the outer
  // one reads k; once the Shape's read moves elsewhere the inner one is dead.
  ir::Model m;
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3, 4, 5}));
  ir::Value* mid = g.create_node("Transpose", {x}, 1, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}})->output(0);
  ir::Node* shape = g.create_node("Shape", {mid}, 1);
  ir::Value* t = g.create_node("Transpose", {mid}, 1, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})->output(0);
  g.add_output(g.create_node("Relu", {t}, 1)->output(0));
  g.add_output(shape->output(0));
  onnx_passes::fuse_transposes(m, ctx);
  EXPECT_EQ(t->producer()->input(0), x);
  EXPECT_EQ(t->producer()->attr_ints("perm"), (std::vector<int64_t>{0, 2, 3, 1}));
  shape->replace_input(0, x);
  onnx_passes::eliminate_dead_code(m, ctx);
  onnx_passes::lint(m, "test");
  int transposes = 0;
  for (const auto& n : g.nodes()) transposes += n->op_type() == "Transpose";
  EXPECT_EQ(transposes, 1);
}

}  // namespace
}  // namespace torch2onnx
