// Before the opset-23 fusions: every value's type from ONNX shape inference.
// The fusions match on ranks and static sizes; the converters give types to
// the values they know, fold_static_shapes infers them only when there are
// Shape/Size nodes to fold, so a static graph (x[..., :r] of a static x)
// would leave its intermediate values without a rank. Runs only at opset
// 23+ and when an operator a fusion starts from is in the graph.
#include "onnx_passes/passes.h"
#include "serialize/check.h"

namespace torch2onnx::onnx_passes {
namespace {

bool has_fusion_start(const ir::Graph& g) {
  for (const auto& n : g.nodes())
    if (n->domain().empty() &&
        (n->op_type() == "Neg" || n->op_type() == "ReduceMean" || n->op_type() == "Attention" ||
         n->op_type() == "Softmax"))
      return true;
  return false;
}

}  // namespace

void infer_types_for_fusions(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.opset_version < 23 || !has_fusion_start(*model.graph)) return;
  serialize::infer_types(model);
}

}  // namespace torch2onnx::onnx_passes
