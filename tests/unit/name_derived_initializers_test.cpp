// onnx_passes::name_derived_initializers: an initializer a pass computed (derived) that one node
// reads is renamed "<node name>.<the input's name in the ONNX schema at the model's opset>"
// ("input<k>" past the schema's inputs or in another domain), with a suffix when that name is taken.
// The tests check the names after the pass, and the initializers it must leave alone (the model's
// own, read twice, read only as a graph output).
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {1, 2, 3, 3});

struct Fixture : PassFixture {
  Fixture() : PassFixture(17) {}
  ir::Value* derived(const char* name) {
    ir::Value* v = weights(name, {1, 1}, {2});
    v->set_derived(true);
    return v;
  }
  void run() {
    onnx_passes::name_derived_initializers(m, ctx);
    onnx_passes::lint(m, "test");
  }
};

TEST(NameDerivedInitializers, NamedAfterTheReaderAndItsSchemaInput) {
  Fixture f;
  ir::Value* w = f.derived("folded_0");
  ir::Value* b = f.derived("folded_1");
  ir::Value* k = f.derived("folded_2");
  ir::Value* v0 = f.derived("folded_3");
  ir::Value* v1 = f.derived("folded_4");
  ir::Value* conv = f.op("Conv", {f.g.add_input("x", kT), w, b}, kT);
  ir::Value* custom = f.g.create_node("Scale", {conv, k}, 1, {}, "com.example")->output(0);
  ir::Value* cat = f.op("Concat", {v0, v1}, {}, {{"axis", int64_t{0}}});  // variadic "inputs"
  f.g.add_output(custom);
  f.g.add_output(cat);
  f.run();
  const std::string c = conv->producer()->name();
  EXPECT_EQ(w->name(), c + ".W");
  EXPECT_EQ(b->name(), c + ".B");
  EXPECT_EQ(k->name(), custom->producer()->name() + ".input1");
  EXPECT_EQ(v0->name(), cat->producer()->name() + ".inputs");
  EXPECT_EQ(v1->name(), cat->producer()->name() + ".input1");
  f.run();  // nothing more to do
  EXPECT_EQ(w->name(), c + ".W");
}

TEST(NameDerivedInitializers, ATakenNameGetsASuffix) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", kT);
  ir::Value* w = f.derived("folded");
  ir::Node* conv = f.g.create_node("Conv", {x, w}, 1);
  f.g.add_output(f.g.add_input(conv->name() + ".W", kT));  // an input holds the name
  f.g.add_output(conv->output(0));
  f.run();
  EXPECT_EQ(w->name(), conv->name() + ".W_1");
}

TEST(NameDerivedInitializers, InitializersThatKeepTheirNames) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", kT);
  ir::Value* own = f.weights("conv.weight", {1, 1}, {2});  // the model's: not derived
  ir::Value* twice = f.derived("twice");
  ir::Value* returned = f.derived("returned");
  ir::Value* read_and_returned = f.derived("read_and_returned");
  f.g.add_output(f.op("Conv", {x, own, twice}, kT));
  f.g.add_output(f.op("Add", {twice, read_and_returned}));
  f.g.add_output(returned);
  f.g.add_output(read_and_returned);
  f.run();
  EXPECT_EQ(own->name(), "conv.weight");
  EXPECT_EQ(twice->name(), "twice");
  EXPECT_EQ(returned->name(), "returned");
  EXPECT_EQ(read_and_returned->name(), "read_and_returned");
}

}  // namespace
}  // namespace torch2onnx
