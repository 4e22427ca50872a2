#include <onnx/defs/schema.h>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {

void name_derived_initializers(ir::Model& model, const PassContext&) {
  ir::Graph& g = *model.graph;
  for (ir::Value* v : g.initializers()) {
    if (!v->is_derived() || v->uses().size() != 1 || !v->uses()[0].user) continue;
    const ir::Node* user = v->uses()[0].user;
    const size_t index = v->uses()[0].index;
    std::string role = "input" + std::to_string(index);
    if (user->domain().empty()) {
      const auto* schema = onnx::OpSchemaRegistry::Schema(user->op_type(), static_cast<int>(model.opset), "");
      if (schema && index < schema->inputs().size()) role = schema->inputs()[index].GetName();
    }
    const std::string name = user->name() + "." + role;
    if (name == v->name()) continue;
    g.rename_unique(v, name);
  }
}

}  // namespace torch2onnx::onnx_passes
