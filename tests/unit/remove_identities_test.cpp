// onnx_passes::remove_identities: Identity nodes are bypassed (their readers read the input); one
// whose output is a graph output goes only when its input is a plain intermediate value of the same
// graph, which then takes over the output's name. The tests check the wiring and names after the
// pass, inside subgraphs too, and the Identities that must stay (of a graph input, of a value that
// is already an output, of another domain, of an outer value in a subgraph).
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {2, 3});

void run(PassFixture& f) {
  onnx_passes::remove_identities(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
}

TEST(RemoveIdentities, AChainOfIdentitiesIsBypassed) {
  PassFixture f;
  ir::Value* r = f.op("Relu", {f.g.add_input("x", kT)}, kT);
  ir::Value* y = f.op("Neg", {f.op("Identity", {f.op("Identity", {r}, kT)}, kT)}, kT);
  f.g.add_output(y);
  run(f);
  EXPECT_EQ(f.count("Identity"), 0u);
  EXPECT_EQ(f.g.num_nodes(), 2u);
  EXPECT_EQ(y->producer()->input(0), r);
}

TEST(RemoveIdentities, AGraphOutputNamesTheValueBeforeIt) {
  PassFixture f;
  ir::Value* r = f.op("Relu", {f.g.add_input("x", kT)}, kT);
  ir::Value* n = f.op("Neg", {r}, kT);  // r has another reader
  ir::Value* y1 = f.op("Identity", {r}, kT);
  ir::Value* y2 = f.op("Identity", {r}, kT);  // r is y1 by then: this one stays
  f.g.rename(y1, "y1");
  f.g.rename(y2, "y2");
  for (ir::Value* v : {y1, y2, n}) f.g.add_output(v);
  run(f);
  EXPECT_EQ(f.count("Identity"), 1u);
  ASSERT_EQ(f.g.outputs()[0], r);
  EXPECT_EQ(r->name(), "y1");
  EXPECT_EQ(n->producer()->input(0), r);
  EXPECT_EQ(f.g.outputs()[1]->name(), "y2");
  EXPECT_EQ(f.g.outputs()[1]->producer()->op_type(), "Identity");
  EXPECT_EQ(f.g.outputs()[1]->producer()->input(0), r);
}

TEST(RemoveIdentities, IdentitiesThatMustStay) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", kT);
  ir::Value* of_input = f.op("Identity", {x}, kT);  // an input returned as an output needs a node
  ir::Value* custom = f.g.create_node("Identity", {x}, 1, {}, "com.example")->output(0);
  ir::Value* y = f.op("Neg", {custom}, kT);
  f.g.add_output(of_input);
  f.g.add_output(y);
  run(f);
  EXPECT_EQ(f.count("Identity"), 2u);
  EXPECT_EQ(f.g.outputs()[0], of_input);
  EXPECT_EQ(of_input->producer()->input(0), x);
  EXPECT_EQ(y->producer()->input(0), custom);
}

TEST(RemoveIdentities, InsideSubgraphs) {
  PassFixture f;
  ir::Value* c = f.g.add_input("c", ir::ValueType::tensor(ir::DType::Bool, std::vector<int64_t>{}));
  ir::Value* r = f.op("Relu", {f.g.add_input("x", kT)}, kT);
  auto then_g = std::make_shared<ir::Graph>(&f.g);
  then_g->add_output(then_g->create_node("Identity", {r}, 1)->output(0));  // of an outer value: stays
  auto else_g = std::make_shared<ir::Graph>(&f.g);
  ir::Value* neg = else_g->create_node("Neg", {r}, 1)->output(0);
  ir::Value* id = else_g->create_node("Identity", {neg}, 1)->output(0);
  ir::Value* abs = else_g->create_node("Abs", {id}, 1)->output(0);
  else_g->add_output(abs);
  ir::Node* branch = f.g.create_node("If", {c}, 1, {{"then_branch", then_g}, {"else_branch", else_g}});
  f.g.add_output(branch->output(0));
  run(f);
  ASSERT_EQ(then_g->num_nodes(), 1u);
  EXPECT_EQ(then_g->nodes().front()->op_type(), "Identity");
  EXPECT_EQ(else_g->num_nodes(), 2u);
  EXPECT_EQ(abs->producer()->input(0), neg);
}

}  // namespace
}  // namespace torch2onnx
