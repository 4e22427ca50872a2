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
  // the middle value also returned: both stay
  EXPECT_EQ(left_after({0, 2, 1, 3}, {0, 1, 3, 2}, true).size(), 2u);
}

}  // namespace
}  // namespace torch2onnx
