// onnx_passes::output_names / restore_output_names: whatever the passes did to the values behind the
// graph outputs, each output has its recorded name after restore: the value takes it back when it is
// a node's result that no other output names, else the output is an Identity of it under the name
// (an input, a weight, one value behind two outputs). A dead value still holding the name gives it up.
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {2});

struct Fixture : PassFixture {
  ir::Value* x = g.add_input("x", kT);
  std::vector<std::string> names;
  // outputs named as given, recorded
  void outputs(std::vector<std::pair<ir::Value*, std::string>> outs) {
    for (auto& [v, name] : outs) {
      g.rename(v, name);
      g.add_output(v);
    }
    names = onnx_passes::output_names(m);
  }
  void restore() {
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::restore_output_names(m, names);
    onnx_passes::lint(m, "test");
    for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(g.outputs()[i]->name(), names[i]);
  }
};

TEST(KeepOutputNames, AReplacementNodeTakesTheNameBack) {
  Fixture f;
  ir::Value* y = f.op("Relu", {f.x}, kT);
  f.outputs({{y, "out"}});
  ir::Value* c = f.op("Neg", {f.x}, kT);  // (a pass's replacement)
  y->replace_all_uses_with(c);
  f.restore();
  EXPECT_EQ(f.g.outputs()[0], c);
  EXPECT_EQ(f.count("Identity"), 0u);
}

TEST(KeepOutputNames, AnInputOrAWeightIsReturnedThroughAnIdentity) {
  Fixture f;
  ir::Value* y = f.op("Relu", {f.x}, kT);
  ir::Value* z = f.op("Abs", {f.x}, kT);
  f.outputs({{y, "a"}, {z, "b"}});
  y->replace_all_uses_with(f.x);
  ir::Value* w = f.weights("w", {1, 2}, {2});
  z->replace_all_uses_with(w);
  f.restore();
  EXPECT_EQ(f.count("Identity"), 2u);
  EXPECT_EQ(f.g.outputs()[0]->producer()->input(0), f.x);
  EXPECT_EQ(f.g.outputs()[1]->producer()->input(0), w);
  EXPECT_EQ(f.x->name(), "x");  // the input keeps its own name
  EXPECT_EQ(w->name(), "w");
}

TEST(KeepOutputNames, TwoOutputsMergedIntoOneValue) {
  Fixture f;
  ir::Value* a = f.op("Relu", {f.x}, kT);
  ir::Value* b = f.op("Relu", {f.x}, kT);
  f.outputs({{a, "a"}, {b, "b"}});
  b->replace_all_uses_with(a);  // (as common-subexpression elimination does)
  f.restore();
  EXPECT_EQ(f.g.outputs()[0], a);
  EXPECT_EQ(f.g.outputs()[1]->producer()->op_type(), "Identity");
  EXPECT_EQ(f.g.outputs()[1]->producer()->input(0), a);
}

TEST(KeepOutputNames, NamesAlreadyRightChangeNothing) {
  Fixture f;
  ir::Value* a = f.op("Relu", {f.x}, kT);
  f.outputs({{a, "a"}, {f.op("Abs", {a}, kT), "b"}});
  const size_t nodes = f.g.num_nodes();
  f.restore();
  EXPECT_EQ(f.g.num_nodes(), nodes);
}

TEST(KeepOutputNames, ALiveValueHoldingTheNameIsRenamed) {
  Fixture f;
  ir::Value* y = f.op("Relu", {f.x}, kT);
  f.outputs({{y, "out"}});
  // a pass renamed the old value away and gave another, non-output value the name
  f.g.rename_unique(y, "out_unfused");
  ir::Value* other = f.op("Abs", {f.x}, kT);
  f.g.rename(other, "out");
  ir::Value* c = f.op("Neg", {other}, kT);
  y->replace_all_uses_with(c);
  f.restore();
  EXPECT_EQ(f.g.outputs()[0], c);
  EXPECT_NE(other->name(), "out");
}

}  // namespace
}  // namespace torch2onnx
