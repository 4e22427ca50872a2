// IR -> onnx::ModelProto.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "ir/model.h"

namespace torch2onnx::serialize {

struct ProtoOptions {
  enum class Initializers {
    Full,            // every initializer with its data
    Omit,            // no initializers at all (the writer streams them)
    InputsIfLarge,   // initializers over `inline_limit` bytes become typed graph inputs (check/inference)
  };
  Initializers initializers = Initializers::Full;
  size_t inline_limit = 4096;
  bool keep_initializers_as_inputs = false;
  bool keep_doc_strings = false;
  bool value_info = true;
};

void to_model_proto(const ir::Model& model, onnx::ModelProto& out, const ProtoOptions& options);
void graph_to_proto(const ir::Graph& graph, onnx::GraphProto& out, const ProtoOptions& options);
void tensor_to_proto(const ir::Tensor& t, const std::string& name, onnx::TensorProto& out, bool with_data);
void type_to_proto(const ir::ValueType& t, onnx::TypeProto& out);
// The type in `tp` over `previous` (what `tp` leaves unsaid stays).
ir::ValueType type_from_proto(const onnx::TypeProto& tp, const ir::ValueType& previous);
void attribute_to_proto(const ir::Attribute& a, onnx::AttributeProto& p, const ProtoOptions& options);
// Every domain used by a node (subgraphs included), with its opset version.
std::map<std::string, int64_t> used_domains(const ir::Model& model);

}  // namespace torch2onnx::serialize
