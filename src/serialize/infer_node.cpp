#include "serialize/infer_node.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <type_traits>
#include <unordered_map>

#include "serialize/to_proto.h"

namespace torch2onnx::serialize {
namespace {

constexpr int kMaxDepth = 64;                // producers followed back from one value
constexpr int64_t kMaxConstantElements = 1024;  // constant inputs shown to inference (shapes, axes)

using TypeMap = std::unordered_map<std::string, onnx::TypeProto*>;
using DataMap = std::unordered_map<std::string, const onnx::TensorProto*>;
using SparseMap = std::unordered_map<std::string, const onnx::SparseTensorProto*>;

// Runs `schema`'s inference on `node` and hands the context to `read`.
// ONNX 1.13+ takes ShapeInferenceOptions in the context's constructor, 1.12 does not.
template <class Impl, class Read>
void run_inference(const onnx::OpSchema& schema, onnx::NodeProto& node, const TypeMap& types, const DataMap& data,
                   Read read) {
  if constexpr (std::is_constructible_v<Impl, onnx::NodeProto&, const TypeMap&, const DataMap&, const SparseMap&,
                                        const onnx::ShapeInferenceOptions&>) {
    Impl ctx(node, types, data, SparseMap{}, onnx::ShapeInferenceOptions{});
    schema.GetTypeAndShapeInferenceFunction()(ctx);
    read(ctx);
  } else {
    Impl ctx(node, types, data, SparseMap{});
    schema.GetTypeAndShapeInferenceFunction()(ctx);
    read(ctx);
  }
}

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
  TypeMap type_ptrs;
  for (auto& [name, t] : types) type_ptrs[name] = &t;
  DataMap data_ptrs;
  for (auto& [name, t] : data) data_ptrs[name] = &t;
  try {
    run_inference<onnx::shape_inference::InferenceContextImpl>(*schema, node, type_ptrs, data_ptrs, [&](auto& ctx) {
      for (size_t k = 0; k < n->num_outputs() && k < ctx.getNumOutputs(); ++k) {
        ir::Value* out = n->output(k);
        if (out && !out->type().has_shape && out->type().kind == ir::ValueType::Kind::Tensor &&
            ctx.getOutputType(k)->has_tensor_type())
          out->set_type(type_from_proto(*ctx.getOutputType(k), out->type()));
      }
    });
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
