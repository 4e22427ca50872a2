// onnx_passes::drop_unused_inputs: graph inputs nothing reads go (reported to
// options.unused_input with their index), unless a PyTorch operator that read them (noted by
// note_input_readers before folding) still has non-Constant nodes, the input is 0-d and was read,
// it is in PassContext::kept_inputs, or the program keeps every input. The tests note the readers,
// fold some of them to Constants as folding would, and check the inputs left and those reported.
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  const ir::ValueType t = ir::ValueType::tensor(ir::DType::Float, {2, 3});
  std::vector<std::pair<size_t, std::string>> reported;
  Fixture() {
    o.unused_input = [this](size_t i, const std::string& name) { reported.emplace_back(i, name); };
  }
  // What folding does to a node: its output becomes a Constant of its origin.
  void fold(ir::Node* n) {
    g.set_insert_point(n);
    g.set_current_origin(n->origin());
    ir::Value* c = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_int64s({2, 3})}})->output(0);
    g.set_insert_point(nullptr);
    g.set_current_origin(nullptr);
    n->output(0)->replace_all_uses_with(c);
    n->destroy();
  }
  // The names of the graph inputs after the pass.
  std::vector<std::string> inputs_after() {
    onnx_passes::drop_unused_inputs(m, ctx);
    onnx_passes::lint(m, "test");
    std::vector<std::string> names;
    for (const ir::Value* v : g.inputs()) names.push_back(v->name());
    return names;
  }
  using Names = std::vector<std::string>;
  using Reported = std::vector<std::pair<size_t, std::string>>;
};

TEST(DropUnusedInputs, InputsNothingReadsGo) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", f.t);
  f.g.add_input("u", f.t);
  f.g.add_input("v", f.t);
  f.from("aten::relu");
  f.g.add_output(f.op("Relu", {x}, f.t));
  onnx_passes::note_input_readers(f.m, f.ctx);
  EXPECT_EQ(f.inputs_after(), Fixture::Names{"x"});
  EXPECT_EQ(f.reported, (Fixture::Reported{{1, "u"}, {2, "v"}}));
}

TEST(DropUnusedInputs, AnInputWhoseReadersAllFoldedGoes) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", f.t);
  ir::Value* y = f.g.add_input("y", f.t);
  f.from("aten::size");  // x.size(): folded as a whole
  ir::Node* size = f.g.create_node("Shape", {x}, 1);
  f.from("aten::view");
  f.g.add_output(f.op("Reshape", {y, size->output(0)}, f.t));
  onnx_passes::note_input_readers(f.m, f.ctx);
  f.fold(size);
  EXPECT_EQ(f.inputs_after(), Fixture::Names{"y"});
  EXPECT_EQ(f.reported, (Fixture::Reported{{0, "x"}}));
}

TEST(DropUnusedInputs, AnInputReadByAnOperatorStillInTheGraphStays) {
  Fixture f;
  ir::Value* x = f.g.add_input("x", f.t);
  ir::Value* y = f.g.add_input("y", f.t);
  ir::Value* s = f.g.add_input("s", ir::ValueType::tensor(ir::DType::Float, std::vector<int64_t>{}));
  f.from("aten::view_as");  // x.view_as(y): Reshape(x, Shape(y)), its Shape folded
  ir::Node* shape = f.g.create_node("Shape", {y}, 1);
  f.g.add_output(f.op("Reshape", {x, shape->output(0)}, f.t));
  f.from("aten::size");  // a 0-d input that was read stays, its reader folded or not
  ir::Node* size = f.g.create_node("Shape", {s}, 1);
  f.from("aten::neg");
  f.g.add_output(f.op("Neg", {size->output(0)}));
  onnx_passes::note_input_readers(f.m, f.ctx);
  f.fold(shape);
  f.fold(size);
  EXPECT_EQ(f.inputs_after(), (Fixture::Names{"x", "y", "s"}));
  EXPECT_TRUE(f.reported.empty());
}

TEST(DropUnusedInputs, KeptInputsAndProgramInputsStay) {
  Fixture f;
  ir::Value* kept = f.g.add_input("kept", f.t);
  f.g.add_input("u", f.t);
  f.g.add_output(f.op("Relu", {f.g.add_input("x", f.t)}, f.t));
  f.ctx.kept_inputs.insert(kept);
  EXPECT_EQ(f.inputs_after(), (Fixture::Names{"kept", "x"}));
  EXPECT_EQ(f.reported, (Fixture::Reported{{1, "u"}}));

  Fixture program;
  program.ctx.keep_unused_inputs = true;
  program.g.add_input("u", program.t);
  program.g.add_output(program.op("Relu", {program.g.add_input("x", program.t)}, program.t));
  EXPECT_EQ(program.inputs_after(), (Fixture::Names{"u", "x"}));
  EXPECT_TRUE(program.reported.empty());
}

}  // namespace
}  // namespace torch2onnx
