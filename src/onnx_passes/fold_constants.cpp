// Constant folding: a node whose inputs are all known at export time is
// evaluated now and replaced by its result (a Constant node when small, an
// initializer otherwise). Results much larger than their inputs (Expand,
// ConstantOfShape, Tile of a scalar) stay computed at run time.
#include "onnx_passes/dead_initializers.h"
#include "onnx_passes/evaluate.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

constexpr int64_t kConstantNodeLimit = 64;   // elements: Constant node up to this size
constexpr size_t kGrowthLimit = 1 << 20;     // bytes a fold may add beyond its inputs

void replace_with(ir::Graph& g, ir::Node* n, std::vector<ir::Tensor>& results) {
  g.set_insert_point(n);
  g.set_current_origin(n->origin());
  for (size_t i = 0; i < results.size(); ++i) {
    ir::Value* old = n->output(i);
    ir::Value* fresh = nullptr;
    if (results[i].numel() <= kConstantNodeLimit) {
      ir::DType dt = results[i].dtype();
      std::vector<int64_t> dims = results[i].dims();
      fresh = g.create_node("Constant", {}, 1, {{"value", std::move(results[i])}})->output(0);
      fresh->set_type(ir::ValueType::tensor(dt, dims));
    } else {
      fresh = g.add_initializer(old->name(), std::move(results[i]));
      fresh->set_derived(true);
    }
    old->replace_all_uses_with(fresh);
  }
  g.set_insert_point(nullptr);
  g.set_current_origin(nullptr);
}

void run(ir::Graph& g, int64_t opset) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  DeadInitializers dead(g);
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) run(*sub, opset);
    if (n->op_type() == "Constant" || !can_evaluate(*n)) continue;
    std::vector<const ir::Tensor*> inputs;
    bool all_constant = n->num_inputs() > 0;
    size_t input_bytes = 0;
    for (ir::Value* in : n->inputs()) {
      const ir::Tensor* t = in ? in->constant() : nullptr;
      if (in && !t) all_constant = false;
      if (t) input_bytes += t->nbytes();
      inputs.push_back(t);
    }
    if (!all_constant) continue;
    auto results = evaluate(*n, inputs, opset);
    if (!results) continue;
    size_t out_bytes = 0;
    for (const auto& r : *results) out_bytes += r.nbytes();
    if (out_bytes > input_bytes + kGrowthLimit) continue;
    replace_with(g, n, *results);
    std::vector<ir::Value*> ins(n->inputs().begin(), n->inputs().end());
    n->destroy();
    for (ir::Value* in : ins) dead.consider(in);
  }
}

}  // namespace

void fold_constants(ir::Model& model, const PassContext& ctx) {
  if (!ctx.options.do_constant_folding) return;
  run(*model.graph, model.opset);
}

}  // namespace torch2onnx::onnx_passes
