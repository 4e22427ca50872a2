// onnx_passes::outline_module_functions (export_modules_as_functions): the nodes of each call of a
// selected submodule (origins in its module path or below) become one node `<module>::<Class>`
// calling a model-local function; values read from outside are its inputs, values read after it its
// outputs (keeping their names); calls with the same body share a function, others get `Class_1`;
// innermost modules go first, so functions nest. The tests check the call nodes, their wiring, the
// functions and their bodies, and calls left inline (not selected, not contiguous in data flow).
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

const ir::ValueType kT = ir::ValueType::tensor(ir::DType::Float, {2, 3});

struct Fixture : PassFixture {
  explicit Fixture(std::vector<std::string> selected = {"Block"}) {
    o.export_modules_as_functions = std::move(selected);
  }
  ir::Value* x = g.add_input("x", kT);
  void run() {
    onnx_passes::outline_module_functions(m, ctx);
    onnx_passes::lint(m, "test");
  }
  std::vector<std::string> node_types() const {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->op_type());
    return out;
  }
  using Types = std::vector<std::string>;
};

TEST(OutlineModuleFunctions, ACallBecomesAFunctionNode) {
  Fixture f;
  f.ctx.module_classes = {{"", "__torch__.Net"}, {"block", "__torch__.pkg.___torch_mangle_3.Block"}};
  ir::Value* w = f.weights("block.weight", {1, 2, 3}, {3});
  f.from("aten::relu", "block");
  ir::Value* r = f.op("Relu", {f.x}, kT);
  f.from("aten::mul", "block");
  ir::Value* m = f.op("Mul", {r, w}, kT);
  const std::string m_name = m->name();
  f.from("aten::neg");
  ir::Value* y = f.op("Neg", {m}, kT);
  f.g.add_output(y);
  f.run();
  EXPECT_EQ(f.node_types(), (Fixture::Types{"Block", "Neg"}));
  ir::Node* call = y->producer()->input(0)->producer();
  EXPECT_EQ(call->domain(), "pkg");
  EXPECT_EQ(call->inputs(), (std::vector<ir::Value*>{f.x, w}));
  ASSERT_EQ(call->num_outputs(), 1u);
  EXPECT_EQ(call->output(0)->name(), m_name);
  EXPECT_EQ(call->origin()->module_path, "block");
  EXPECT_EQ(f.m.custom_opsets.at("pkg"), 1);
  ASSERT_EQ(f.m.functions.size(), 1u);
  const ir::Function& fn = f.m.functions[0];
  EXPECT_EQ(fn.domain, "pkg");
  EXPECT_EQ(fn.name, "Block");
  EXPECT_EQ(fn.body->inputs().size(), 2u);
  ASSERT_EQ(fn.body->outputs().size(), 1u);
  EXPECT_EQ(fn.body->outputs()[0]->producer()->op_type(), "Mul");
  EXPECT_EQ(fn.body->outputs()[0]->producer()->input(0)->producer()->op_type(), "Relu");
}

TEST(OutlineModuleFunctions, SameBodiesShareAFunctionOthersGetTheirOwn) {
  Fixture f;
  f.ctx.module_classes = {{"a", "m.Block"}, {"b", "m.Block"}, {"c", "m.Block"}, {"d", "m.Other"}};
  f.from("aten::relu", "a");
  ir::Value* a = f.op("Relu", {f.x}, kT);
  f.from("aten::relu", "b");
  ir::Value* b = f.op("Relu", {a}, kT);
  f.from("aten::leaky_relu", "c");
  ir::Value* c = f.op("LeakyRelu", {b}, kT, {{"alpha", 0.1}});
  f.from("aten::neg", "d");  // not selected: stays inline
  f.g.add_output(f.op("Neg", {c}, kT));
  f.run();
  EXPECT_EQ(f.node_types(), (Fixture::Types{"Block", "Block", "Block_1", "Neg"}));
  ASSERT_EQ(f.m.functions.size(), 2u);
  EXPECT_EQ(f.m.functions[1].name, "Block_1");
  EXPECT_EQ(f.m.functions[1].body->nodes().front()->op_type(), "LeakyRelu");
}

TEST(OutlineModuleFunctions, InnerModulesFirstSoFunctionsNest) {
  Fixture f({"*"});
  f.ctx.module_classes = {{"outer", "__torch__.Outer"}, {"outer.inner", "__torch__.Inner"}};
  f.from("aten::relu", "outer.inner");
  ir::Value* r = f.op("Relu", {f.x}, kT);
  f.from("aten::neg", "outer");
  f.g.add_output(f.op("Neg", {r}, kT));
  f.run();
  EXPECT_EQ(f.node_types(), (Fixture::Types{"Outer"}));
  EXPECT_EQ(f.g.nodes().front()->domain(), "torch2onnx.modules");  // a class without a module
  ASSERT_EQ(f.m.functions.size(), 2u);
  EXPECT_EQ(f.m.functions[0].name, "Inner");
  const ir::Graph& outer = *f.m.functions[1].body;
  ASSERT_EQ(outer.num_nodes(), 2u);
  EXPECT_EQ(outer.nodes().front()->op_type(), "Inner");
  EXPECT_EQ(outer.nodes().back()->op_type(), "Neg");
}

TEST(OutlineModuleFunctions, CallsLeftInline) {
  Fixture f;
  f.ctx.module_classes = {{"block", "m.Block"}};
  f.from("aten::relu", "block");
  ir::Value* r = f.op("Relu", {f.x}, kT);
  f.from("aten::neg");
  ir::Value* n = f.op("Neg", {r}, kT);  // reads the call and feeds it
  f.from("aten::add", "block");
  f.g.add_output(f.op("Add", {r, n}, kT));
  f.run();
  EXPECT_EQ(f.node_types(), (Fixture::Types{"Relu", "Neg", "Add"}));
  EXPECT_TRUE(f.m.functions.empty());

  Fixture none(std::vector<std::string>{});  // nothing selected
  none.ctx.module_classes = {{"block", "m.Block"}};
  none.from("aten::relu", "block");
  none.g.add_output(none.op("Relu", {none.x}, kT));
  none.run();
  EXPECT_EQ(none.node_types(), (Fixture::Types{"Relu"}));
  EXPECT_TRUE(none.m.functions.empty() && none.m.custom_opsets.empty());
}

// An If in the call whose branches read a value of the same call: the value is no output of the
// call (only reads from outside are), and the body's If has its own copies of the branches, reading
// the body's copy of the value (not the main graph's).
TEST(OutlineModuleFunctions, ASubgraphReadingItsOwnCallsValue) {
  Fixture f;
  f.ctx.module_classes = {{"block", "m.Block"}};
  ir::Value* c = f.g.add_input("c", ir::ValueType::tensor(ir::DType::Bool, std::vector<int64_t>{}));
  f.from("aten::relu", "block");
  ir::Value* r = f.op("Relu", {f.x}, kT);
  auto then_g = std::make_shared<ir::Graph>(&f.g);
  then_g->add_output(then_g->create_node("Neg", {r}, 1)->output(0));
  auto else_g = std::make_shared<ir::Graph>(&f.g);
  else_g->add_output(else_g->create_node("Abs", {r}, 1)->output(0));
  f.from("prim::If", "block");
  // (the branches held by the If alone, as the converter leaves them)
  f.g.add_output(f.op("If", {c}, kT, {{"then_branch", std::move(then_g)}, {"else_branch", std::move(else_g)}}));
  f.run();
  ASSERT_EQ(f.node_types(), (Fixture::Types{"Block"}));
  EXPECT_EQ(f.g.nodes().front()->num_outputs(), 1u);  // r is read inside the call only
  ASSERT_EQ(f.m.functions.size(), 1u);
  const ir::Graph& body = *f.m.functions[0].body;
  ASSERT_EQ(body.num_nodes(), 2u);
  const ir::Node* branch = body.nodes().back().get();
  ASSERT_EQ(branch->op_type(), "If");
  for (const ir::Graph* sub : branch->subgraphs())  // the branches read the body's Relu
    EXPECT_EQ(sub->nodes().front()->input(0), body.nodes().front()->output(0));
}

// A function is reused for a call of the same class with the same body only: class Block, with the
// body of an earlier class Block_Head, gets its own function.
TEST(OutlineModuleFunctions, AClassWhoseNameStartsAnothersKeepsItsName) {
  Fixture f({"*"});
  f.ctx.module_classes = {{"a", "m.Block_Head"}, {"b", "m.Block"}};
  f.from("aten::relu", "a");
  ir::Value* a = f.op("Relu", {f.x}, kT);
  f.from("aten::relu", "b");
  f.g.add_output(f.op("Relu", {a}, kT));
  f.run();
  EXPECT_EQ(f.node_types(), (Fixture::Types{"Block_Head", "Block"}));
}

}  // namespace
}  // namespace torch2onnx
