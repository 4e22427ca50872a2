// onnx_passes::can_evaluate / evaluate (evaluate.cpp): one ONNX node computed on constant inputs
// with ONNX's semantics (ATen kernels), for constant folding; nullopt when the op, a use of it or
// the data is not supported, so the node stays for the runtime. The tests check values and dims of
// the results where ONNX differs from a naive reading (integer division, Mod, Reshape's 0, negative
// indices and steps, Shape's start/end, reductions, Split) and the cases that must give nullopt.
#include <gtest/gtest.h>

#include <cstdint>

#include "onnx_passes/evaluate.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

using onnx_passes::evaluate;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

ir::Tensor I(Ints v, Ints dims) { return ir::Tensor::from_int64s(v, std::move(dims)); }
ir::Tensor F(Doubles v, Ints dims) { return ir::Tensor::from_doubles(ir::DType::Float, v, std::move(dims)); }

// `type` (with `attrs` and `outputs` outputs) evaluated on `in` (an undefined tensor: an omitted input).
std::optional<std::vector<ir::Tensor>> eval(const char* type, std::vector<ir::Tensor> in, ir::Attributes attrs = {},
                                            int64_t opset = 17, size_t outputs = 1, const char* domain = "") {
  ir::Graph g;
  ir::Node* n = g.create_node(type, {}, outputs, std::move(attrs), domain);
  std::vector<const ir::Tensor*> inputs;
  for (const ir::Tensor& t : in) inputs.push_back(t.defined() ? &t : nullptr);
  return evaluate(*n, inputs, opset);
}
// The one result of a node that must evaluate.
ir::Tensor one(const char* type, std::vector<ir::Tensor> in, ir::Attributes attrs = {}, int64_t opset = 17) {
  auto r = eval(type, std::move(in), std::move(attrs), opset);
  EXPECT_TRUE(r && r->size() == 1) << type;
  return r && r->size() == 1 ? (*r)[0] : ir::Tensor();
}

TEST(Evaluate, KnownOpsOfTheDefaultDomainOnly) {
  ir::Graph g;
  EXPECT_TRUE(onnx_passes::can_evaluate(*g.create_node("Add", {}, 1)));
  EXPECT_FALSE(onnx_passes::can_evaluate(*g.create_node("Add", {}, 1, {}, "com.example")));
  EXPECT_FALSE(onnx_passes::can_evaluate(*g.create_node("Softmax", {}, 1)));
  EXPECT_FALSE(eval("Add", {F({1}, {1}), F({2}, {1})}, {}, 17, 1, "com.example"));
  EXPECT_FALSE(eval("Softmax", {F({1}, {1})}));
}

TEST(Evaluate, ArithmeticAsOnnxDefinesIt) {
  EXPECT_EQ(one("Div", {I({-7, 7}, {2}), I({2, -2}, {2})}).to_int64s(), (Ints{-3, -3}));  // truncates
  EXPECT_EQ(one("Div", {F({-7}, {1}), F({2}, {1})}).to_doubles(), (Doubles{-3.5}));
  EXPECT_EQ(one("Mod", {I({-7, 7}, {2}), I({3, -3}, {2})}).to_int64s(), (Ints{2, -2}));  // the divisor's sign
  EXPECT_EQ(one("Mod", {I({-7}, {1}), I({3}, {1})}, {{"fmod", int64_t{1}}}).to_int64s(), (Ints{-1}));
  ir::Tensor sum = one("Add", {I({1, 2}, {2, 1}), I({10, 20, 30}, {3})});  // broadcast
  EXPECT_EQ(sum.dims(), (Ints{2, 3}));
  EXPECT_EQ(sum.to_int64s(), (Ints{11, 21, 31, 12, 22, 32}));
  ir::Tensor cast = one("Cast", {F({1.7, -1.7}, {2})}, {{"to", int64_t{7}}});
  EXPECT_EQ(cast.dtype(), ir::DType::Int64);
  EXPECT_EQ(cast.to_int64s(), (Ints{1, -1}));
  EXPECT_FALSE(eval("Div", {I({1}, {1}), I({0}, {1})}));         // the runtime's error, not ours
  EXPECT_FALSE(eval("Cast", {F({1}, {1})}, {{"to", int64_t{8}}}));  // to string
}

TEST(Evaluate, ShapesAndIndexing) {
  ir::Tensor x = I({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(one("Reshape", {x, I({0, -1}, {2})}).dims(), (Ints{2, 3}));  // 0 copies x's dim
  EXPECT_FALSE(eval("Reshape", {x, I({0, -1}, {2})}, {{"allowzero", int64_t{1}}}));
  EXPECT_FALSE(eval("Reshape", {x, I({3, 2, 0}, {3})}));  // a 0 past x's rank
  ir::Tensor gathered = one("Gather", {x, I({-1, 0}, {2})}, {{"axis", int64_t{1}}});
  EXPECT_EQ(gathered.dims(), (Ints{2, 2}));
  EXPECT_EQ(gathered.to_int64s(), (Ints{2, 0, 5, 3}));
  EXPECT_EQ(one("Gather", {x, I({1}, {})}).dims(), (Ints{3}));
  ir::Tensor r = I({0, 1, 2, 3, 4}, {5});
  EXPECT_EQ(one("Slice", {r, I({-1}, {1}), I({INT64_MIN}, {1}), I({0}, {1}), I({-2}, {1})}).to_int64s(),
            (Ints{4, 2, 0}));
  EXPECT_EQ(one("Slice", {r, I({1}, {1}), I({100}, {1})}).to_int64s(), (Ints{1, 2, 3, 4}));
  EXPECT_EQ(one("Slice", {r}, {{"starts", Ints{1}}, {"ends", Ints{3}}}, 9).to_int64s(), (Ints{1, 2}));
  EXPECT_FALSE(eval("Slice", {r, I({0}, {1}), I({5}, {1}), I({0}, {1}), I({0}, {1})}));  // step 0
  ir::Tensor cube = F(Doubles(24, 1), {2, 3, 4});
  EXPECT_EQ(one("Shape", {cube}, {{"start", int64_t{-2}}}).to_int64s(), (Ints{3, 4}));
  EXPECT_EQ(one("Shape", {cube}, {{"start", int64_t{1}}, {"end", int64_t{-1}}}).to_int64s(), (Ints{3}));
  ir::Tensor size = one("Size", {cube});
  EXPECT_EQ(size.rank(), 0);
  EXPECT_EQ(size.to_int64s(), (Ints{24}));
  EXPECT_EQ(one("Unsqueeze", {x, I({-1, 0}, {2})}).dims(), (Ints{1, 2, 3, 1}));
  EXPECT_EQ(one("Squeeze", {F({1, 2}, {1, 2, 1})}).dims(), (Ints{2}));
  EXPECT_EQ(one("Flatten", {cube}, {{"axis", int64_t{-1}}}).dims(), (Ints{6, 4}));
  ir::Tensor t = one("Transpose", {x});  // no perm: reversed axes
  EXPECT_EQ(t.dims(), (Ints{3, 2}));
  EXPECT_EQ(t.to_int64s(), (Ints{0, 3, 1, 4, 2, 5}));
}

TEST(Evaluate, RangesReductionsAndSplits) {
  EXPECT_EQ(one("Range", {I({5}, {}), I({0}, {}), I({-2}, {})}).to_int64s(), (Ints{5, 3, 1}));
  EXPECT_EQ(one("Range", {F({0}, {}), F({1}, {}), F({0.25}, {})}).to_doubles(), (Doubles{0, 0.25, 0.5, 0.75}));
  EXPECT_FALSE(eval("Range", {I({0}, {}), I({3}, {}), I({0}, {})}));
  ir::Tensor x = I({0, 1, 2, 3, 4, 5}, {2, 3});
  ir::Tensor rows = one("ReduceSum", {x, I({-1}, {1})}, {{"keepdims", int64_t{0}}}, 13);
  EXPECT_EQ(rows.dims(), (Ints{2}));
  EXPECT_EQ(rows.dtype(), ir::DType::Int64);
  EXPECT_EQ(rows.to_int64s(), (Ints{3, 12}));
  ir::Tensor cols = one("ReduceMax", {x}, {{"axes", Ints{0}}});
  EXPECT_EQ(cols.dims(), (Ints{1, 3}));
  EXPECT_EQ(cols.to_int64s(), (Ints{3, 4, 5}));
  EXPECT_EQ(one("ReduceSum", {x}, {{"noop_with_empty_axes", int64_t{1}}}, 13).dims(), (Ints{2, 3}));
  EXPECT_EQ(one("ReduceSum", {x}, {}, 13).dims(), (Ints{1, 1}));
  auto halves = eval("Split", {x}, {{"axis", int64_t{1}}}, 17, 3);
  ASSERT_TRUE(halves);
  EXPECT_EQ((*halves)[2].to_int64s(), (Ints{2, 5}));
  auto sized = eval("Split", {I({0, 1, 2, 3, 4, 5}, {6}), I({1, 5}, {2})}, {}, 13, 2);
  ASSERT_TRUE(sized);
  EXPECT_EQ((*sized)[1].to_int64s(), (Ints{1, 2, 3, 4, 5}));
  EXPECT_FALSE(eval("Split", {x}, {{"axis", int64_t{1}}}, 17, 2));  // 3 does not split in 2
  EXPECT_FALSE(eval("Split", {I({0, 1, 2}, {3}), I({1, 1, 1}, {3})}, {}, 13, 2));  // 3 parts, 2 outputs
}

TEST(Evaluate, LargeTransposesAreComputedAsTheyAreRead) {
  Doubles v(128 * 130);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  ir::Tensor t = one("Transpose", {F(v, {128, 130})}, {{"perm", Ints{1, 0}}});
  EXPECT_TRUE(t.is_computed());
  EXPECT_EQ(t.dims(), (Ints{130, 128}));
  EXPECT_EQ(t.double_at(1), 130);         // [0][1] = x[1][0]
  EXPECT_EQ(t.double_at(128 + 5), 5 * 130 + 1);  // [1][5] = x[5][1]
}

// A zero-size x flattens to ONNX's [d_0 * ... , d_axis * ...] ([0, 12], not [0, 0]: the folded
// constant must agree with the value's inferred shape).
TEST(Evaluate, FlatteningAnEmptyTensorKeepsItsInnerSize) {
  EXPECT_EQ(one("Flatten", {F({}, {0, 3, 4})}).dims(), (Ints{0, 12}));
  EXPECT_EQ(one("Flatten", {F({}, {3, 4, 0})}).dims(), (Ints{3, 0}));
}

}  // namespace
}  // namespace torch2onnx
