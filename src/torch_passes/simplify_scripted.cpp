// Scripted models carry what ONNX has no use for: exception branches
// (`if x.dim() != 4: raise ...`), branches on module attributes that are
// constants by now (`if self.training:`), prints and warnings. This pass
// considers exceptions unreachable (ONNX cannot raise), folds constant
// conditions and constant subexpressions, and drops prints and warnings.
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_exceptions.h>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

bool has_control_flow(torch::jit::Block* b) {
  for (torch::jit::Node* n : b->nodes())
    if (!n->blocks().empty() || n->kind() == c10::prim::RaiseException) return true;
  return false;
}

void drop_side_effects_without_data(torch::jit::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    torch::jit::Node* n = *it;
    ++it;
    for (torch::jit::Block* sub : n->blocks()) drop_side_effects_without_data(sub);
    if ((n->kind() == c10::prim::Print || n->kind() == c10::aten::warn) && n->outputs().empty()) n->destroy();
  }
}

}  // namespace

void simplify_scripted(TorchGraph& tg, const TorchContext&) {
  drop_side_effects_without_data(tg.graph->block());
  if (!has_control_flow(tg.graph->block())) return;  // traced graphs: nothing to do
  torch::jit::EliminateExceptions(tg.graph);
  torch::jit::ConstantPropagation(tg.graph, /*ignore_custom_classes=*/true);
  torch::jit::LowerSimpleTuples(tg.graph);
  torch::jit::EliminateDeadCode(tg.graph);
}

}  // namespace torch2onnx::torch_side
