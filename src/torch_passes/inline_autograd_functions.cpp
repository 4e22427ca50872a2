// torch.autograd.Function calls traced from Python are prim::PythonOp nodes
// whose Subgraph attribute holds the ops the function ran. A function with a
// `symbolic` (asked through TorchContext::python_ops) stays one node for
// the converter; every other one is replaced by its Subgraph. A kept node
// without a symbolic is marked for the unsupported-operator report.
#include <torch/csrc/jit/ir/ir.h>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

void inline_block(torch::jit::Block* block, const TorchContext& ctx) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (torch::jit::Block* b : n->blocks()) inline_block(b, ctx);
    if (n->kind() != c10::prim::PythonOp || !n->hasAttribute(c10::attr::Subgraph)) continue;
    std::shared_ptr<torch::jit::Graph> body = n->g(c10::attr::Subgraph);
    const bool inlinable =
        body->inputs().size() == n->inputs().size() && body->outputs().size() == n->outputs().size();
    if (!inlinable || (ctx.python_ops.keep && ctx.python_ops.keep(*n))) {
      std::string name = ctx.python_ops.missing_symbolic ? ctx.python_ops.missing_symbolic(*n) : "";
      if (!name.empty()) n->s_(kUnconvertibleAttr, "prim::PythonOp[" + name + "]");
      continue;
    }
    torch::jit::WithInsertPoint guard(n);
    std::vector<torch::jit::Value*> outs =
        torch::jit::insertGraph(*n->owningGraph(), *body, n->inputs().vec());
    for (size_t i = 0; i < outs.size(); ++i) {
      outs[i]->setType(n->output(i)->type());
      n->output(i)->replaceAllUsesWith(outs[i]);
    }
    n->destroy();
  }
}

}  // namespace

void inline_autograd_functions(TorchGraph& tg, const TorchContext& ctx) { inline_block(tg.graph->block(), ctx); }

}  // namespace torch2onnx::torch_side
