// convert::convert_call, the conversion step both frontends share: the symbolic at the opset, the
// operator_export_type fallbacks (an ATen node where nothing converts, or for every aten operator;
// a passthrough node of the operator's own namespace), the dtype check of each result, and the one
// table of aliases (canonical_kind) with the unsupported-operator rule (kept_by_mode).
#include <gtest/gtest.h>

#include "convert/core.h"
#include "ir/graph.h"

namespace torch2onnx {
namespace {

using convert::Call;

Arg tensor(ir::Value* v, const std::string& name) {
  Arg a;
  a.kind = Arg::Kind::Tensor;
  a.name = name;
  a.value = v;
  a.dtype = ir::DType::Float;
  a.has_sizes = true;
  a.sizes = {2};
  return a;
}

Arg integer(int64_t i, const std::string& name) {
  Arg a;
  a.kind = Arg::Kind::Int;
  a.name = name;
  a.constant = true;
  a.i = i;
  a.dtype = ir::DType::Int64;
  return a;
}

OutputInfo float_out() {
  OutputInfo o;
  o.dtype = ir::DType::Float;
  o.has_sizes = true;
  o.sizes = {2};
  return o;
}

struct Fixture {
  ir::Graph g;
  Registry r;
  ExportOptions o;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2}));
  Fixture() {
    o.opset_version = 17;
    r.add("aten::neg", 9, [](SymbolicContext& ctx) { ctx.out(ctx.op("Neg", {ctx.in(0)})); });
    r.add("aten::to_int", 9, [](SymbolicContext& ctx) {  // (a symbolic that gets its dtype wrong)
      ctx.out(ctx.op("Cast", {ctx.in(0)}, {{"to", int64_t{7}}}));
    });
  }
  Call call(const std::string& kind, std::vector<Arg> args = {}) {
    Call c;
    c.kind = kind;
    c.overload = "Tensor";
    c.args = args.empty() ? std::vector<Arg>{tensor(x, "self")} : std::move(args);
    c.outs = {float_out()};
    c.where = "block (model.py:3)";
    return c;
  }
  std::vector<OutputSlot> run(Call c) { return convert::convert_call(std::move(c), r, o, &g, nullptr, {}); }
};

TEST(ConversionCore, RunsTheSymbolicAndTypesTheResult) {
  Fixture f;
  bool set_up = false;
  auto results = convert::convert_call(f.call("aten::neg"), f.r, f.o, &f.g, nullptr,
                                       [&](SymbolicContext& ctx) { set_up = ctx.kind() == "aten::neg"; });
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results[0].set);
  EXPECT_EQ(results[0].value->producer()->op_type(), "Neg");
  EXPECT_EQ(results[0].value->dtype(), ir::DType::Float);  // (filled in from PyTorch's output)
  EXPECT_TRUE(set_up);  // the frontend's set-up ran on the context
}

TEST(ConversionCore, AWrongResultDtypeIsAnInternalError) {
  Fixture f;
  try {
    f.run(f.call("aten::to_int"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::Internal);
    EXPECT_NE(std::string(e.what()).find("block (model.py:3)"), std::string::npos) << e.what();
  }
}

TEST(ConversionCore, AtenFallbackOnlyWhereNothingConverts) {
  Fixture f;
  f.o.operator_export_type = OperatorExportType::OnnxAtenFallback;
  auto kept = f.run(f.call("aten::poisson", {tensor(f.x, "self"), integer(3, "k")}));
  const ir::Node* n = kept[0].value->producer();
  ASSERT_EQ(n->op_type(), "ATen");
  EXPECT_EQ(n->domain(), "org.pytorch.aten");
  EXPECT_EQ(n->attr("operator")->s, "poisson");
  EXPECT_EQ(n->attr("overload_name")->s, "Tensor");
  EXPECT_EQ(n->attr("k")->i, 3);  // a constant argument as an attribute named by the schema
  EXPECT_EQ(n->input(0), f.x);
  EXPECT_EQ(f.run(f.call("aten::neg"))[0].value->producer()->op_type(), "Neg");  // converts as usual
}

TEST(ConversionCore, AtenModeKeepsEveryAtenOperatorAndFallthroughItsNamespace) {
  Fixture f;
  f.o.operator_export_type = OperatorExportType::OnnxAten;
  EXPECT_EQ(f.run(f.call("aten::neg"))[0].value->producer()->op_type(), "ATen");
  f.o.operator_export_type = OperatorExportType::OnnxFallthrough;
  const ir::Node* n = f.run(f.call("mylib::op"))[0].value->producer();
  EXPECT_EQ(n->op_type(), "op");
  EXPECT_EQ(n->domain(), "mylib");
  EXPECT_EQ(f.run(f.call("aten::neg"))[0].value->producer()->op_type(), "Neg");
  f.o.operator_export_type = OperatorExportType::Onnx;
  EXPECT_THROW(f.run(f.call("mylib::op")), Error);  // (the frontends report it before converting)
}

TEST(ConversionCore, UnsupportedRuleFollowsTheMode) {
  using convert::kept_by_mode;
  EXPECT_FALSE(kept_by_mode("aten::poisson", OperatorExportType::Onnx));
  EXPECT_TRUE(kept_by_mode("aten::poisson", OperatorExportType::OnnxAtenFallback));
  EXPECT_TRUE(kept_by_mode("aten::poisson", OperatorExportType::OnnxAten));
  EXPECT_FALSE(kept_by_mode("mylib::op", OperatorExportType::OnnxAtenFallback));
  EXPECT_TRUE(kept_by_mode("mylib::op", OperatorExportType::OnnxFallthrough));
}

TEST(ConversionCore, OneTableOfAliases) {
  using convert::canonical_kind;
  EXPECT_EQ(canonical_kind("aten::swapaxes"), "aten::transpose");
  EXPECT_EQ(canonical_kind("aten::special_expit"), "aten::sigmoid");
  EXPECT_EQ(canonical_kind("aten::absolute_"), "aten::abs_");  // in-place forms too
  EXPECT_EQ(canonical_kind("aten::relu"), "aten::relu");
  EXPECT_EQ(canonical_kind("aten::__and__"), "aten::__and__");
  for (const auto& [alias, op] : convert::operator_aliases())
    EXPECT_EQ(convert::operator_aliases().count(op), 0u) << alias << " names another alias";
}

}  // namespace
}  // namespace torch2onnx
