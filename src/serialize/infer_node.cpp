#include "serialize/infer_node.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <unordered_map>

#include "serialize/to_proto.h"

namespace torch2onnx::serialize {
namespace {

constexpr int kMaxDepth = 64;                // producers followed back from one value
constexpr int64_t kMaxConstantElements = 1024;  // constant inputs shown to inference (shapes, axes)

bool infer_node(ir::Node* n, int64_t opset) {
  if (!n->subgraphs().empty()) return false;  // If/Loop: their branches decide
  const std::string domain = n->domain() == "ai.onnx" ? "" : n->domain();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(opset), domain);
  if (!schema || !schema->has_type_and_shape_inference_function()) return false;
  onnx::NodeProto node;
  node.set_op_type(n->op_type());
  node.set_domain(domain);
  std::unordered_map<std::string, onnx::TypeProto> types;
  std::unordered_map<std::string, onnx::TensorProto> data;
  for (size_t i = 0; i < n->num_inputs(); ++i) {
    ir::Value* in = n->input(i);
    if (!in) {
      node.add_input("");
      continue;
    }
    const std::string name = "i" + std::to_string(i);
    node.add_input(name);
    if (in->type().dtype == ir::DType::Undefined) return false;
    type_to_proto(in->type(), types[name]);
    if (const ir::Tensor* c = in->constant(); c && c->numel() <= kMaxConstantElements)
      tensor_to_proto(*c, name, data[name], true);
  }
  for (size_t k = 0; k < n->num_outputs(); ++k) node.add_output("o" + std::to_string(k));
  ProtoOptions options;
  for (const ir::Attribute& a : n->attributes()) attribute_to_proto(a, *node.add_attribute(), options);
  std::unordered_map<std::string, onnx::TypeProto*> type_ptrs;
  for (auto& [name, t] : types) type_ptrs[name] = &t;
  std::unordered_map<std::string, const onnx::TensorProto*> data_ptrs;
  for (auto& [name, t] : data) data_ptrs[name] = &t;
  try {
    onnx::shape_inference::InferenceContextImpl ctx(node, type_ptrs, data_ptrs, {});
    schema->GetTypeAndShapeInferenceFunction()(ctx);
    for (size_t k = 0; k < n->num_outputs() && k < ctx.getNumOutputs(); ++k) {
      ir::Value* out = n->output(k);
      if (out && !out->type().has_shape && out->type().kind == ir::ValueType::Kind::Tensor &&
          ctx.getOutputType(k)->has_tensor_type())
        out->set_type(type_from_proto(*ctx.getOutputType(k), out->type()));
    }
  } catch (const std::exception&) {
    return false;  // inputs inference rejects: nothing learned
  }
  return true;
}

bool infer(ir::Value* v, int64_t opset, int depth) {
  if (v->type().has_shape) return true;
  ir::Node* p = v->producer();
  if (!p || depth > kMaxDepth || v->type().kind != ir::ValueType::Kind::Tensor) return false;
  for (size_t i = 0; i < p->num_inputs(); ++i)
    if (ir::Value* in = p->input(i)) infer(in, opset, depth + 1);
  infer_node(p, opset);
  return v->type().has_shape;
}

}  // namespace

bool infer_value_type(ir::Value* v, int64_t opset) { return infer(v, opset, 0); }

}  // namespace torch2onnx::serialize
