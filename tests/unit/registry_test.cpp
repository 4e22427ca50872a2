// Opset dispatch: the highest declaration not above the target wins.
#include <gtest/gtest.h>

#include "symbolic/registry.h"

namespace torch2onnx {
namespace {

int called = 0;
void v9(SymbolicContext&) { called = 9; }
void v11(SymbolicContext&) { called = 11; }
void v13(SymbolicContext&) { called = 13; }

TEST(Registry, PicksHighestDeclarationNotAboveTarget) {
  Registry r;
  r.add("aten::foo", 9, v9);
  r.add("aten::foo", 11, v11);
  r.add("aten::foo", 13, v13);
  EXPECT_EQ(r.resolved_since("aten::foo", 9), 9);
  EXPECT_EQ(r.resolved_since("aten::foo", 10), 9);
  EXPECT_EQ(r.resolved_since("aten::foo", 11), 11);
  EXPECT_EQ(r.resolved_since("aten::foo", 12), 11);
  EXPECT_EQ(r.resolved_since("aten::foo", 13), 13);
  EXPECT_EQ(r.resolved_since("aten::foo", 17), 13);
  ir::Graph g;
  SymbolicContext ctx("aten::foo", {}, {}, &g, 12);
  called = 0;  // (no test's leftover)
  (*r.find("aten::foo", 12))(ctx);
  EXPECT_EQ(called, 11);
}

TEST(Registry, NothingBelowTheFirstDeclaration) {
  Registry r;
  r.add("aten::bar", 11, v11);
  EXPECT_EQ(r.find("aten::bar", 9), nullptr);
  EXPECT_EQ(r.find("aten::bar", 10), nullptr);
  EXPECT_NE(r.find("aten::bar", 11), nullptr);
  EXPECT_EQ(r.first_opset("aten::bar"), 11);
  EXPECT_EQ(r.find("aten::unknown", 17), nullptr);
}

TEST(Registry, AddReplacesAndRemoveRestoresLowerDeclaration) {
  Registry r;
  r.add("aten::foo", 9, v9);
  r.add("aten::foo", 13, v13);
  r.add("aten::foo", 13, v11);  // replaces the opset-13 declaration
  ir::Graph g;
  SymbolicContext ctx("aten::foo", {}, {}, &g, 17);
  called = 0;
  (*r.find("aten::foo", 17))(ctx);
  EXPECT_EQ(called, 11);
  EXPECT_TRUE(r.remove("aten::foo", 13));
  EXPECT_FALSE(r.remove("aten::foo", 13));
  EXPECT_EQ(r.resolved_since("aten::foo", 17), 9);
}

TEST(Registry, BuiltinsCoverTheDocumentedModelsOperators) {
  const Registry& r = builtin_registry();
  for (const char* op : {"aten::_convolution", "aten::batch_norm", "aten::relu", "aten::max_pool2d",
                         "aten::adaptive_avg_pool2d", "aten::linear", "aten::lstm", "aten::gru", "aten::rnn_tanh",
                         "aten::embedding", "aten::log_softmax", "aten::layer_norm", "aten::pixel_shuffle"})
    EXPECT_NE(r.find(op, 17), nullptr) << op;
  // Lowerings that change with the opset.
  EXPECT_EQ(r.resolved_since("aten::layer_norm", 16), 9);
  EXPECT_EQ(r.resolved_since("aten::layer_norm", 17), 17);
  EXPECT_EQ(r.resolved_since("aten::softmax", 12), 9);
  EXPECT_EQ(r.resolved_since("aten::softmax", 13), 13);
  EXPECT_EQ(r.resolved_since("aten::pixel_shuffle", 10), 9);
  EXPECT_EQ(r.resolved_since("aten::pixel_shuffle", 11), 11);
}

}  // namespace
}  // namespace torch2onnx
