// Serialization: the streaming writer produces exactly the bytes protobuf
// would, deterministically, and the file parses back to the same model.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ir/model.h"
#include "torch2onnx/options.h"
#include "serialize/check.h"
#include "serialize/infer_node.h"
#include "serialize/to_proto.h"
#include "serialize/writer.h"

namespace torch2onnx {
namespace {

ir::Model small_model() {
  ir::Model m;
  m.opset = 13;
  m.ir_version = ir::ir_version_for_opset(13);
  m.producer_version = "test";
  ir::Graph& g = *m.graph;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3}));
  std::vector<double> wv(3 * 4);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.5 * static_cast<double>(i) - 2.0;
  ir::Value* w = g.add_initializer("fc.weight", ir::Tensor::from_doubles(ir::DType::Float, wv, {3, 4}));
  ir::Value* b = g.add_initializer("fc.bias", ir::Tensor::from_doubles(ir::DType::Float, {1, 2, 3, 4}, {4}));
  ir::Node* mm = g.create_node("MatMul", {x, w}, 1);
  ir::Node* add = g.create_node("Add", {mm->output(0), b}, 1);
  ir::Node* relu = g.create_node("Relu", {add->output(0)}, 1);
  g.rename(relu->output(0), "y");
  relu->output(0)->set_type(ir::ValueType::tensor(ir::DType::Float));
  g.add_output(relu->output(0));
  return m;
}

TEST(Serialize, StreamedBytesParseToTheFullProto) {
  ir::Model m = small_model();
  std::string streamed = serialize::serialize_model(m, {});
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(streamed));
  onnx::ModelProto full;
  serialize::to_model_proto(m, full, {});
  // Same content: compare after canonical re-serialization of both.
  onnx::ModelProto a = parsed, b = full;
  EXPECT_EQ(a.graph().initializer_size(), 2);
  EXPECT_EQ(a.graph().initializer(0).name(), "fc.weight");
  EXPECT_EQ(a.graph().initializer(0).raw_data(), b.graph().initializer(0).raw_data());
  EXPECT_EQ(a.graph().node_size(), 3);
  EXPECT_EQ(a.ir_version(), 7);
  EXPECT_EQ(a.opset_import(0).version(), 13);
  EXPECT_EQ(a.producer_name(), "torch2onnx");
  // Field order differs (initializers last) but the messages are equal.
  std::string sa, sb;
  a.SerializeToString(&sa);
  b.SerializeToString(&sb);
  EXPECT_EQ(sa, sb);
}

TEST(Serialize, OutputIsDeterministic) {
  std::string first = serialize::serialize_model(small_model(), {});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(serialize::serialize_model(small_model(), {}), first);
}

TEST(Serialize, WriteModelMatchesSerializeAndLeavesNoTempFile) {
  ir::Model m = small_model();
  std::string path = ::testing::TempDir() + "t2o_serialize_test.onnx";
  serialize::write_model(m, path, {});
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), serialize::serialize_model(m, {}));
  std::remove(path.c_str());
}

TEST(Serialize, UnwritablePathIsAnErrorAndWritesNothing) {
  ir::Model m = small_model();
  EXPECT_THROW(serialize::write_model(m, "/nonexistent-dir/x.onnx", {}), Error);
}

TEST(Serialize, KeepInitializersAsInputsListsThemAsInputs) {
  ir::Model m = small_model();
  serialize::WriteOptions w;
  w.keep_initializers_as_inputs = true;
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(serialize::serialize_model(m, w)));
  ASSERT_EQ(p.graph().input_size(), 3);
  EXPECT_EQ(p.graph().input(1).name(), "fc.weight");
  EXPECT_EQ(p.graph().input(1).type().tensor_type().shape().dim(1).dim_value(), 4);
}

TEST(Serialize, CheckerAcceptsAndInfersTypes) {
  ir::Model m = small_model();
  serialize::check_and_infer(m);
  const ir::Value* y = m.graph->outputs()[0];
  ASSERT_TRUE(y->type().has_shape);
  EXPECT_EQ(y->type().static_dims(), (std::vector<int64_t>{2, 4}));
}

TEST(Serialize, CheckerRejectsBrokenModels) {
  ir::Model m = small_model();
  ir::Graph& g = *m.graph;
  ir::Node* bad = g.create_node("Relu", {g.inputs()[0], g.inputs()[0]}, 1);  // Relu takes one input
  g.add_output(bad->output(0));
  EXPECT_THROW(serialize::check_and_infer(m), Error);
}

// Values the converter left without a shape get ONNX's inference on demand,
// through their producers; constant inputs (axes, shapes) are shown to it.
TEST(InferValueType, FollowsProducersAndReadsConstants) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Float, {2, 3, 4}));
  ir::Node* t = g.create_node("Transpose", {x}, 1, {{"perm", std::vector<int64_t>{2, 0, 1}}});
  t->output(0)->set_type(ir::ValueType::tensor(ir::DType::Float));
  ir::Value* shape = g.create_node("Constant", {}, 1, {{"value", ir::Tensor::from_doubles(ir::DType::Int64, {4, -1}, {2})}})
                         ->output(0);
  shape->set_type(ir::ValueType::tensor(ir::DType::Int64, {2}));
  ir::Node* r = g.create_node("Reshape", {t->output(0), shape}, 1);
  r->output(0)->set_type(ir::ValueType::tensor(ir::DType::Float));
  ASSERT_TRUE(serialize::infer_value_type(r->output(0), 13));
  EXPECT_EQ(r->output(0)->type().static_dims(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(t->output(0)->type().static_dims(), (std::vector<int64_t>{4, 2, 3}));
  // Unique's output is 1-D of a size only known at run time: the rank, not the size.
  ir::Node* u = g.create_node("Unique", {x}, 1);
  u->output(0)->set_type(ir::ValueType::tensor(ir::DType::Float));
  ASSERT_TRUE(serialize::infer_value_type(u->output(0), 13));
  EXPECT_EQ(u->output(0)->type().rank(), 1);
  EXPECT_FALSE(u->output(0)->type().fully_static());
}

TEST(InferValueType, UnknownInputsLeaveTheTypeUnknown) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", ir::ValueType::tensor(ir::DType::Undefined));
  ir::Node* n = g.create_node("Relu", {x}, 1);
  EXPECT_FALSE(serialize::infer_value_type(n->output(0), 13));
  EXPECT_FALSE(n->output(0)->type().has_shape);
}

}  // namespace
}  // namespace torch2onnx
