// onnx_passes::fuse_concats: a Concat reading a Concat along the same axis (a negative axis
// normalized by the rank, when it is known) takes the inner one's inputs in its place, when nothing
// else reads the inner result. The tests check the inputs of the Concats left, nested Concats
// becoming one, and the inner Concats that stay (read twice, a graph output, another axis, a
// negative axis of unknown rank).
#include <gtest/gtest.h>

#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  const ir::ValueType t = ir::ValueType::tensor(ir::DType::Float, {2, 1});
  ir::Value* a = g.add_input("a", t);
  ir::Value* b = g.add_input("b", t);
  ir::Value* c = g.add_input("c", t);
  ir::Value* d = g.add_input("d", t);
  // Concat(`in`, axis) of 2-D values (of unknown rank when not `ranked`).
  ir::Value* cat(std::vector<ir::Value*> in, int64_t axis, bool ranked = true) {
    return op("Concat", std::move(in),
              ranked ? ir::ValueType::tensor(ir::DType::Float, {2, -1}) : ir::ValueType::tensor(ir::DType::Float),
              {{"axis", axis}});
  }
  void run() {
    onnx_passes::fuse_concats(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
  using Values = std::vector<ir::Value*>;
};

TEST(FuseConcats, AnInnerConcatAlongTheSameAxisIsInlined) {
  Fixture f;
  ir::Value* y = f.cat({f.a, f.cat({f.b, f.c}, 1), f.d}, -1);  // -1 of a 2-D result is 1
  f.g.add_output(y);
  f.run();
  EXPECT_EQ(f.count("Concat"), 1u);
  EXPECT_EQ(y->producer()->inputs(), (Fixture::Values{f.a, f.b, f.c, f.d}));
  EXPECT_EQ(y->producer()->attr_i("axis", 0), -1);
}

TEST(FuseConcats, NestedConcatsBecomeOne) {
  Fixture f;
  ir::Value* y = f.cat({f.cat({f.cat({f.a, f.b}, 0), f.c}, 0), f.cat({f.d, f.a}, 0)}, 0);
  f.g.add_output(y);
  f.run();
  EXPECT_EQ(f.count("Concat"), 1u);
  EXPECT_EQ(y->producer()->inputs(), (Fixture::Values{f.a, f.b, f.c, f.d, f.a}));
}

TEST(FuseConcats, InnerConcatsThatStay) {
  Fixture f;
  ir::Value* twice = f.cat({f.a, f.b}, 1);
  ir::Value* y1 = f.cat({twice, f.c}, 1);
  f.g.add_output(f.op("Neg", {twice}));  // read twice
  ir::Value* returned = f.cat({f.a, f.b}, 1);
  ir::Value* y2 = f.cat({returned, f.c}, 1);
  f.g.add_output(returned);  // a graph output
  ir::Value* other_axis = f.cat({f.a, f.b}, 0);
  ir::Value* y3 = f.cat({other_axis, f.c}, 1);
  ir::Value* unranked = f.cat({f.a, f.b}, -1, false);
  ir::Value* y4 = f.cat({unranked, f.c}, -1, false);  // -1 of an unknown rank: not comparable
  for (ir::Value* y : {y1, y2, y3, y4}) f.g.add_output(y);
  f.run();
  EXPECT_EQ(f.count("Concat"), 8u);
  EXPECT_EQ(y1->producer()->inputs(), (Fixture::Values{twice, f.c}));
  EXPECT_EQ(y2->producer()->inputs(), (Fixture::Values{returned, f.c}));
  EXPECT_EQ(y3->producer()->inputs(), (Fixture::Values{other_axis, f.c}));
  EXPECT_EQ(y4->producer()->inputs(), (Fixture::Values{unranked, f.c}));
}

}  // namespace
}  // namespace torch2onnx
