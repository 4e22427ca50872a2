// onnx_passes::remove_neutral_arithmetic
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

// `op`(x, c) (or (c, x) with `constant_first`), x of `dt` and `shape`, c one element of `c_dims`:
// whether the node was removed (its reader then reads x).
bool removed(const char* op, ir::DType dt, double c, std::vector<int64_t> c_dims = {}, bool constant_first = false,
             std::vector<int64_t> shape = {2, 3}) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(dt, shape));
  ir::Tensor t = ir::Tensor::from_doubles(dt, {c}, c_dims);
  ir::Value* k = f.g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
  k->set_type(ir::ValueType::tensor(dt, c_dims));
  ir::Value* y = constant_first ? f.op(op, {k, x}, ir::ValueType::tensor(dt, shape))
                                : f.op(op, {x, k}, ir::ValueType::tensor(dt, shape));
  ir::Value* out = f.op("Neg", {y}, ir::ValueType::tensor(dt, shape));
  f.g.add_output(out);
  onnx_passes::remove_neutral_arithmetic(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  const bool gone = f.count(op) == 0;
  EXPECT_EQ(gone, out->producer()->input(0) == x);
  return gone;
}

TEST(RemoveNeutralArithmetic, IntegerZeroAddedOrSubtracted) {
  EXPECT_TRUE(removed("Add", ir::DType::Int64, 0));
  EXPECT_TRUE(removed("Add", ir::DType::Int64, 0, {}, true));
  EXPECT_TRUE(removed("Sub", ir::DType::Int32, 0, {1}));
  EXPECT_FALSE(removed("Sub", ir::DType::Int64, 0, {}, true));  // 0 - x is -x
  EXPECT_FALSE(removed("Add", ir::DType::Int64, 1));
  // on floats x + 0 is not x for x = -0.0
  EXPECT_FALSE(removed("Add", ir::DType::Float, 0));
}

TEST(RemoveNeutralArithmetic, OneMultipliedOrDividedBy) {
  EXPECT_TRUE(removed("Mul", ir::DType::Float, 1));
  EXPECT_TRUE(removed("Mul", ir::DType::Float, 1, {1, 1}, true));
  EXPECT_TRUE(removed("Div", ir::DType::Int64, 1));
  EXPECT_FALSE(removed("Div", ir::DType::Float, 1, {}, true));  // 1 / x
  EXPECT_FALSE(removed("Mul", ir::DType::Float, 2));
}

TEST(RemoveNeutralArithmetic, BroadcastingThatGrowsTheResultStays) {
  // a [1, 1, 1] one times a [2, 3] x is [1, 2, 3]: not x
  EXPECT_FALSE(removed("Mul", ir::DType::Float, 1, {1, 1, 1}));
}

// Where(Expand(trues, [batch, 1, seq, seq]), scores, lowest) on scores [batch, 4, seq, seq]: whether it went.
bool where_removed(std::vector<bool> mask, std::vector<int64_t> mask_dims, std::vector<ir::Dim> expanded) {
  using ir::Dim;
  PassFixture f(20);
  ir::Value* scores = f.g.add_input("scores", typed({Dim::named("batch"), Dim::of(4), Dim::named("seq"), Dim::named("seq")}));
  std::vector<double> values(mask.begin(), mask.end());
  ir::Value* m = f.weights("mask", values, mask_dims, ir::DType::Bool);
  ir::Value* batch = f.op("Shape", {scores}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                          {{"start", int64_t{0}}, {"end", int64_t{1}}});
  ir::Value* seq = f.op("Shape", {scores}, ir::ValueType::tensor(ir::DType::Int64, {1}),
                        {{"start", int64_t{2}}, {"end", int64_t{3}}});
  ir::Value* to = f.op("Concat", {batch, f.ints({1}), seq, seq}, ir::ValueType::tensor(ir::DType::Int64, {4}),
                       {{"axis", int64_t{0}}});
  ir::Value* e = f.op("Expand", {m, to}, typed(expanded, ir::DType::Bool));
  ir::Value* low = f.weights("low", {-3.4e38}, {});
  ir::Value* w = f.op("Where", {e, scores, low}, typed({Dim{}, Dim{}, Dim{}, Dim{}}));
  ir::Value* out = f.op("Softmax", {w}, typed({Dim{}, Dim{}, Dim{}, Dim{}}), {{"axis", int64_t{-1}}});
  f.g.add_output(out);
  onnx_passes::remove_neutral_arithmetic(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  const bool gone = f.count("Where") == 0;
  EXPECT_EQ(gone, out->producer()->input(0) == scores);
  return gone;
}

TEST(RemoveNeutralArithmetic, WhereOfAMaskTrueEverywhere) {
  using ir::Dim;
  const std::vector<Dim> expanded = {Dim{}, Dim::of(1), Dim{}, Dim{}};
  EXPECT_TRUE(where_removed({true}, {1, 1, 1, 1}, expanded));
  // a row of three trues expanded to seq: not proved to leave the scores' shape (seq may be 1), so it stays
  EXPECT_FALSE(where_removed({true, true, true}, {1, 1, 1, 3}, expanded));
  EXPECT_FALSE(where_removed({true, false, true}, {1, 1, 1, 3}, expanded));
  EXPECT_FALSE(where_removed({false}, {1, 1, 1, 1}, expanded));
}

TEST(RemoveNeutralArithmetic, WhereThatWouldBroadcastStays) {
  // the mask has more rows than the scores: the result is the mask's shape, not x's
  using ir::Dim;
  PassFixture f(20);
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::of(1)}));
  ir::Value* m = f.weights("mask", {1, 1, 1}, {1, 3}, ir::DType::Bool);
  ir::Value* w = f.op("Where", {m, x, f.weights("zero", {0}, {})}, typed({Dim::named("batch"), Dim::of(3)}));
  f.g.add_output(w);
  onnx_passes::remove_neutral_arithmetic(f.m, f.ctx);
  EXPECT_EQ(f.count("Where"), 1u);
}

// Min(x, ConstantOfShape(shape of `filled_dims`, 7)) with x [batch, seq]: whether the filled
// operand became its one element (0-d, int64 7), the Min's result unchanged.
bool unfilled(std::vector<ir::Dim> filled_dims) {
  using ir::Dim;
  PassFixture f(20);
  ir::Value* x = f.g.add_input("x", typed({Dim::named("batch"), Dim::named("seq")}, ir::DType::Int64));
  ir::Value* y = f.g.add_input("y", typed(filled_dims, ir::DType::Int64));
  ir::Value* shape = f.op("Shape", {y}, ir::ValueType::tensor(ir::DType::Int64, {static_cast<int64_t>(filled_dims.size())}));
  ir::Value* filled = f.op("ConstantOfShape", {shape}, typed(filled_dims, ir::DType::Int64),
                           {{"value", ir::Tensor::from_int64s({7}, {1})}});
  ir::Value* m = f.op("Min", {x, filled}, typed(std::vector<Dim>(std::max<size_t>(2, filled_dims.size()), Dim{}),
                                                 ir::DType::Int64));
  f.g.add_output(m);
  onnx_passes::remove_neutral_arithmetic(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  ir::Value* c = m->producer()->input(1);
  if (f.count("ConstantOfShape") == 1) {
    EXPECT_EQ(c, filled);
    return false;
  }
  EXPECT_TRUE(c->constant() && c->constant()->dims().empty() && c->constant()->dtype() == ir::DType::Int64 &&
              c->constant()->int_at(0) == 7);
  EXPECT_EQ(f.count("Shape"), 0u);
  return true;
}

TEST(RemoveNeutralArithmetic, AFilledOperandIsItsOneElement) {
  using ir::Dim;
  EXPECT_TRUE(unfilled({Dim::named("batch"), Dim::named("seq")}));  // full_like(x, 7)
  EXPECT_TRUE(unfilled({Dim::named("seq")}));                       // a row: broadcast over x's rows
  EXPECT_TRUE(unfilled({Dim::of(1), Dim::named("seq")}));
  // the filled tensor would grow the result (more rows than x, or a dim x may have as 1)
  EXPECT_FALSE(unfilled({Dim::of(3), Dim::named("batch"), Dim::named("seq")}));
  EXPECT_FALSE(unfilled({Dim::named("batch"), Dim::named("other")}));
  EXPECT_FALSE(unfilled({Dim{}, Dim::named("seq")}));
}

}  // namespace
}  // namespace torch2onnx
