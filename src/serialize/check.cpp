#include "serialize/check.h"

#include <google/protobuf/arena.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdlib>
#include <fstream>
#include <unordered_map>

#include "serialize/to_proto.h"
#include "torch2onnx/options.h"

namespace torch2onnx::serialize {
namespace {

void collect(const onnx::GraphProto& g, std::unordered_map<std::string, const onnx::TypeProto*>& out) {
  for (const auto& vi : g.value_info()) out[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) out[vi.name()] = &vi.type();
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.has_g()) collect(a.g(), out);
}

void apply_types(ir::Graph& g, const std::unordered_map<std::string, const onnx::TypeProto*>& types) {
  for (const auto& n : g.nodes()) {
    for (ir::Value* o : n->outputs()) {
      auto it = types.find(o->name());
      if (it != types.end()) o->set_type(type_from_proto(*it->second, o->type()));
    }
    for (ir::Graph* sub : n->subgraphs()) apply_types(*sub, types);
  }
}

// On an arena: a graph of 100k nodes is built and dropped in one piece, not
// node by node through malloc.
onnx::ModelProto& skeleton(const ir::Model& model, google::protobuf::Arena& arena) {
  ProtoOptions po;
  po.initializers = ProtoOptions::Initializers::InputsIfLarge;
  po.value_info = false;  // let inference compute every intermediate type afresh
  auto* mp = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  to_model_proto(model, *mp, po);
  return *mp;
}

}  // namespace

void check_and_infer(ir::Model& model) {
  // One inference (strict: an op whose types do not fit is an error), whose
  // types also complete the graph outputs; then the checker on that proto.
  google::protobuf::Arena arena;
  onnx::ModelProto* mp = &skeleton(model, arena);
  try {
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(*mp, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
      // Data propagation (shape arithmetic) is not part of ONNX's full check,
      // and ONNX 1.23's can fail on valid models (a known-length 1-D float
      // tensor taken for a shape: Unsqueeze then Mul "Invalid rank for Mul
      // broadcasting"): the verdict is strict inference without it.
      mp = &skeleton(model, arena);
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/false);
      onnx::shape_inference::InferShapes(*mp, onnx::OpSchemaRegistry::Instance(), options);
    }
    onnx::checker::check_model(*mp);
  } catch (const std::exception& e) {
    // T2O_DUMP_ON_CHECK_FAILURE=path: keep the rejected model (weights left out) for debugging.
    if (const char* dump = std::getenv("T2O_DUMP_ON_CHECK_FAILURE")) {
      google::protobuf::Arena dump_arena;
      onnx::ModelProto& failed = skeleton(model, dump_arena);
      std::ofstream out(dump, std::ios::binary);
      failed.SerializeToOstream(&out);
    }
    throw Error(Error::Kind::Check, std::string("the exported model fails the ONNX checker: ") + e.what());
  }
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  collect(mp->graph(), types);
  apply_types(*model.graph, types);
}

void infer_types(ir::Model& model) {
  google::protobuf::Arena arena;
  onnx::ModelProto& mp = skeleton(model, arena);
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return;  // best effort: values keep the types they had
  }
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  collect(mp.graph(), types);
  apply_types(*model.graph, types);
}

}  // namespace torch2onnx::serialize
