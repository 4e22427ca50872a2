// onnx_passes::note_input_readers: for each graph input, the distinct PyTorch operators (origins)
// whose nodes read it, in the order of its uses, subgraph readers included, into
// PassContext::input_readers (what drop_unused_inputs consults after folding). The tests check the
// map: one entry per input (empty for an unread one), nodes without an origin and graph-output uses
// not noted, an earlier map cleared, and nothing noted for a program that keeps every input.
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using Readers = std::vector<const ir::Origin*>;
const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {2, 3});

TEST(NoteInputReaders, EachInputsDistinctOperators) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", kT);
  ir::Value* y = f.g.add_input("y", kT);
  ir::Value* c = f.g.add_input("c", ir::ValueType::tensor(ir::DType::Bool, std::vector<int64_t>{}));
  ir::Value* u = f.g.add_input("u", kT);
  auto mul = f.from("aten::mul");
  ir::Value* sq = f.op("Mul", {x, x}, kT);  // x twice, one operator
  auto add = f.from("aten::add");
  ir::Value* sum = f.op("Add", {sq, y}, kT);
  f.op("Neg", {x}, kT);  // another node of the same aten::add
  f.from("");
  ir::Value* r = f.op("Relu", {y}, kT);  // no origin: not noted
  auto sub = std::make_shared<ir::Graph>(&f.g);
  ir::Node* inner = sub->create_node("Abs", {x}, 1);  // x read inside a subgraph
  auto cond = std::make_shared<ir::Origin>();
  cond->torch_kind = "prim::If";
  inner->set_origin(cond);
  sub->add_output(inner->output(0));
  auto other = std::make_shared<ir::Graph>(&f.g);
  other->add_output(other->create_node("Neg", {y}, 1)->output(0));
  ir::Node* branch = f.g.create_node("If", {c}, 1, {{"then_branch", sub}, {"else_branch", other}});
  for (ir::Value* v : {sum, r, branch->output(0), x}) f.g.add_output(v);  // x an output too: not a reader
  onnx_passes::note_input_readers(f.m, f.ctx);
  ASSERT_EQ(f.ctx.input_readers.size(), 4u);
  EXPECT_EQ(f.ctx.input_readers.at(x), (Readers{mul.get(), add.get(), cond.get()}));
  EXPECT_EQ(f.ctx.input_readers.at(y), (Readers{add.get()}));
  EXPECT_TRUE(f.ctx.input_readers.at(c).empty());  // If has no origin
  EXPECT_TRUE(f.ctx.input_readers.at(u).empty());
}

TEST(NoteInputReaders, StartsAfreshAndNotesNothingForPrograms) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", kT);
  auto relu = f.from("aten::relu");
  ir::Value* r = f.op("Relu", {x}, kT);
  f.g.add_output(r);
  f.ctx.input_readers[r] = {relu.get()};  // left from an earlier run
  onnx_passes::note_input_readers(f.m, f.ctx);
  ASSERT_EQ(f.ctx.input_readers.size(), 1u);
  EXPECT_EQ(f.ctx.input_readers.at(x), (Readers{relu.get()}));

  f.ctx.keep_unused_inputs = true;
  onnx_passes::note_input_readers(f.m, f.ctx);
  EXPECT_TRUE(f.ctx.input_readers.empty());
}

}  // namespace
}  // namespace torch2onnx
