// onnx_passes::fuse_rms_normalization
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "onnx_passes/passes.h"
#include "pass_fixture.h"

namespace torch2onnx {
namespace {

struct Fixture : PassFixture {
  explicit Fixture(int opset = 23) : PassFixture(opset) {}
  ir::Value* constant(ir::Tensor t) {
    const ir::DType dt = t.dtype();
    const std::vector<int64_t> dims = t.dims();
    ir::Value* v = g.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
    v->set_type(ir::ValueType::tensor(dt, dims));
    return v;
  }
  void run() {
    onnx_passes::fuse_rms_normalization(m, ctx);
    onnx_passes::eliminate_dead_code(m, ctx);
    onnx_passes::lint(m, "test");
  }
};

const std::vector<int64_t> kShape = {2, 3, 8};

// LlamaRMSNorm: w * (xf * rsqrt(mean(xf^2, axis) + eps)).to(x.dtype), xf = x.to(float32).
// Returns {x, w, y}; `mean_also_returned` makes an intermediate a graph output.
std::vector<ir::Value*> llama_norm(Fixture& f, ir::DType dt, int64_t axis = -1, bool mean_also_returned = false) {
  const auto t = [&](ir::DType d, std::vector<int64_t> dims = kShape) { return ir::ValueType::tensor(d, dims); };
  ir::Value* x = f.g.add_input("x", t(dt));
  ir::Value* w = f.g.add_initializer("w", ir::Tensor::from_doubles(dt, std::vector<double>(8, 0.5), {8}));
  w->set_type(t(dt, {8}));
  const ir::DType F = ir::DType::Float;
  ir::Value* xf = dt == F ? x : f.op("Cast", {x}, t(F), {{"to", static_cast<int64_t>(F)}});
  ir::Value* sq = f.op("Pow", {xf, f.constant(ir::Tensor::scalar(F, 2.0))}, t(F));
  std::vector<int64_t> reduced = kShape;
  reduced[static_cast<size_t>(axis < 0 ? axis + 3 : axis)] = 1;
  ir::Value* mean = f.op("ReduceMean", {sq, f.constant(ir::Tensor::from_int64s({axis}))}, t(F, reduced));
  ir::Value* var = f.op("Add", {mean, f.constant(ir::Tensor::scalar(F, 1e-6))}, t(F, reduced));
  ir::Value* r = f.op("Reciprocal", {f.op("Sqrt", {var}, t(F, reduced))}, t(F, reduced));
  ir::Value* n = f.op("Mul", {xf, r}, t(F));
  if (dt != F) n = f.op("Cast", {n}, t(dt), {{"to", static_cast<int64_t>(dt)}});
  ir::Value* y = f.op("Mul", {w, n}, t(dt));
  f.g.add_output(y);
  if (mean_also_returned) f.g.add_output(mean);
  return {x, w, y};
}

TEST(FuseRmsNormalization, LlamaNormIsOneNodeWithTheHalfInputsOwnUpcast) {
  for (ir::DType dt : {ir::DType::Float, ir::DType::Float16}) {
    Fixture f;
    auto v = llama_norm(f, dt);
    f.run();
    ASSERT_EQ(f.g.num_nodes(), 1u);
    ir::Node* n = f.g.outputs()[0]->producer();
    ASSERT_EQ(n->op_type(), "RMSNormalization");
    EXPECT_EQ(n->input(0), v[0]);  // x itself, not its float32 copy
    EXPECT_EQ(n->input(1), v[1]);
    EXPECT_FLOAT_EQ(static_cast<float>(n->attr_f("epsilon", 0)), 1e-6f);
    EXPECT_EQ(n->attr_i("axis", 0), -1);
    EXPECT_EQ(n->attr_i("stash_type", 0), 1);
    EXPECT_EQ(n->output(0)->type().dtype, dt);
  }
}

TEST(FuseRmsNormalization, OtherAxesSharedValuesAndOldOpsetsStay) {
  {
    Fixture f;
    llama_norm(f, ir::DType::Float, /*axis=*/1);  // a mean over the middle axis
    f.run();
    EXPECT_EQ(f.count("RMSNormalization"), 0u);
  }
  {
    Fixture f;
    llama_norm(f, ir::DType::Float, -1, /*mean_also_returned=*/true);
    f.run();
    EXPECT_EQ(f.count("RMSNormalization"), 0u);
  }
  {
    Fixture f(22);
    llama_norm(f, ir::DType::Float);
    f.run();
    EXPECT_EQ(f.count("RMSNormalization"), 0u);
  }
}

}  // namespace
}  // namespace torch2onnx
