// onnx_passes::read_shapes_at_source
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

TEST(ReadShapesAtSource, ShapeOfACastIsReadFromItsInput) {
  PassFixture f;
  ir::Value* mask = f.g.add_input("mask", ir::ValueType::tensor(ir::DType::Int64, {2, 3}));
  ir::Value* cast = f.op("Cast", {mask}, ir::ValueType::tensor(ir::DType::Bool, {2, 3}), {{"to", int64_t{9}}});
  ir::Value* neg = f.op("Not", {cast}, ir::ValueType::tensor(ir::DType::Bool, {2, 3}));
  ir::Value* s1 = f.op("Shape", {mask}, ir::ValueType::tensor(ir::DType::Int64, {2}));
  ir::Value* s2 = f.op("Shape", {neg}, ir::ValueType::tensor(ir::DType::Int64, {2}));
  f.g.add_output(f.op("Add", {s1, s2}, ir::ValueType::tensor(ir::DType::Int64, {2})));
  onnx_passes::read_shapes_at_source(f.m, f.ctx);
  EXPECT_EQ(s2->producer()->input(0), mask);
  onnx_passes::eliminate_common_subexpressions(f.m, f.ctx);
  onnx_passes::eliminate_dead_code(f.m, f.ctx);
  onnx_passes::lint(f.m, "test");
  EXPECT_EQ(f.count("Shape"), 1u);  // (the Add reads one Shape twice)
  EXPECT_EQ(f.count("Cast"), 0u);   // read by the Shape only: gone
}

TEST(ReadShapesAtSource, ShapeChangingOpsAreNotLookedThrough) {
  PassFixture f;
  ir::Value* x = f.g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3}));
  ir::Value* t = f.op("Transpose", {x}, ir::ValueType::tensor(ir::DType::Float, {3, 2}), {{"perm", std::vector<int64_t>{1, 0}}});
  ir::Value* s = f.op("Shape", {t}, ir::ValueType::tensor(ir::DType::Int64, {2}));
  f.g.add_output(s);
  onnx_passes::read_shapes_at_source(f.m, f.ctx);
  EXPECT_EQ(s->producer()->input(0), t);
}

}  // namespace
}  // namespace torch2onnx
