// onnx_passes::fuse_shape_slices
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  ir::Value* x;
  explicit Fixture(int opset = 17) : PassFixture(opset) {
    ir::ValueType t = ir::ValueType::tensor(ir::DType::Float, {-1, -1, 8});  // [batch, seq, 8]
    x = g.add_input("x", t);
  }
  // x.size(i) as a [1] tensor: Unsqueeze(Gather(Shape(x), i), [0])
  ir::Value* size(int64_t i) {
    ir::Value* s = g.create_node("Shape", {x}, 1)->output(0);
    s->set_type(ir::ValueType::tensor(ir::DType::Int64, {3}));
    ir::Value* d = g.create_node("Gather", {s, ints({i}, true)}, 1, {{"axis", int64_t{0}}})->output(0);
    d->set_type(ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{}));
    ir::Value* u = g.create_node("Unsqueeze", {d, ints({0})}, 1)->output(0);
    u->set_type(ir::ValueType::tensor(ir::DType::Int64, {1}));
    return u;
  }
  size_t run_and_count(const std::string& op) {
    onnx_passes::fuse_shape_slices(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
    return count(op);
  }
};

TEST(FuseShapeSlices, SizesPutBackTogetherAreOneShapeSlice) {
  Fixture f;
  // view(x.size(0), x.size(-2), 4, 2): [batch, seq] from one Shape(x, 0, 2)
  ir::Value* to = f.g.create_node("Concat", {f.size(0), f.size(-2), f.ints({4, 2})}, 1, {{"axis", int64_t{0}}})->output(0);
  ir::Value* y = f.g.create_node("Reshape", {f.x, to}, 1)->output(0);
  f.g.add_output(y);
  EXPECT_EQ(f.run_and_count("Gather") + f.run_and_count("Unsqueeze"), 0u);
  ir::Node* cat = to->producer();
  ASSERT_EQ(cat->num_inputs(), 2u);
  ir::Node* shape = cat->input(0)->producer();
  ASSERT_EQ(shape->op_type(), "Shape");
  EXPECT_EQ(shape->attr_i("start", -9), 0);
  EXPECT_EQ(shape->attr_i("end", -9), 2);
}

TEST(FuseShapeSlices, BeforeOpset15ShapeHasNoBounds) {
  Fixture f(14);
  ir::Value* to = f.g.create_node("Concat", {f.size(0), f.ints({-1})}, 1, {{"axis", int64_t{0}}})->output(0);
  f.g.add_output(f.g.create_node("Reshape", {f.x, to}, 1)->output(0));
  EXPECT_EQ(f.run_and_count("Gather"), 1u);
}

}  // namespace
}  // namespace torch2onnx
