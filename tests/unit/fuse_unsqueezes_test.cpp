// onnx_passes::fuse_unsqueezes
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"

namespace torch2onnx {
namespace {

// x [n] unsqueezed at `first` then at `second` (each a list of axes), at `opset`;
// returns the single Unsqueeze's axes left, or {} if the chain stayed two nodes.
std::vector<int64_t> fused_axes(int64_t opset, std::vector<int64_t> first, std::vector<int64_t> second,
                                int64_t x_rank = 1) {
  ir::Model m;
  m.opset = opset;
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, std::vector<int64_t>(x_rank, 5)));
  auto unsqueeze = [&](ir::Value* in, const std::vector<int64_t>& axes, int64_t rank) {
    ir::Node* n = opset >= 13
                      ? g.create_node("Unsqueeze", {in, g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s(axes)}})->output(0)}, 1)
                      : g.create_node("Unsqueeze", {in}, 1, {{"axes", axes}});
    n->output(0)->set_type(ir::ValueType::tensor(ir::DType::Float, std::vector<int64_t>(rank, 1)));
    return n->output(0);
  };
  ir::Value* mid = unsqueeze(x, first, x_rank + static_cast<int64_t>(first.size()));
  ir::Value* out = unsqueeze(mid, second, x_rank + static_cast<int64_t>(first.size() + second.size()));
  g.add_output(out);
  ExportOptions o;
  onnx_passes::PassContext ctx{o};
  onnx_passes::fuse_unsqueezes(m, ctx);
  onnx_passes::eliminate_dead_code(m, ctx);
  onnx_passes::lint(m, "test");
  size_t unsqueezes = 0;
  for (const auto& n : g.nodes()) unsqueezes += n->op_type() == "Unsqueeze";
  if (unsqueezes != 1) return {};
  ir::Node* n = out->producer();
  EXPECT_EQ(n->input(0), x);
  return opset >= 13 ? n->input(1)->constant()->to_int64s() : n->attr_ints("axes");
}

TEST(FuseUnsqueezes, ChainsBecomeOneWithTheAxesOfBoth) {
  // [n] -> [1, n] -> [1, 1, n] -> as one: axes 0, 1
  EXPECT_EQ(fused_axes(17, {0}, {1}), (std::vector<int64_t>{0, 1}));
  // [n] -> [n, 1] (axis 1) -> [1, n, 1] (axis 0): the inner axis moves to 2
  EXPECT_EQ(fused_axes(17, {1}, {0}), (std::vector<int64_t>{0, 2}));
  // negative axes with known ranks; the attribute form before opset 13
  EXPECT_EQ(fused_axes(11, {-1}, {0, -1}), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(fused_axes(17, {0, 2}, {1}, 2), (std::vector<int64_t>{0, 1, 3}));
}

}  // namespace
}  // namespace torch2onnx
