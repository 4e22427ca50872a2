// Drops what computes nothing for export: dead code and unused constants.
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {

void cleanup(TorchGraph& tg, const TorchContext&) {
  torch::jit::EliminateDeadCode(tg.graph, torch::jit::DCESideEffectPolicy::DONT_DELETE_NODES_WITH_SIDE_EFFECTS);
}

}  // namespace torch2onnx::torch_side
