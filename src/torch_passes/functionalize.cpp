// In-place operators (relu_, add_, x += y, scatter_ ...) write into one of
// their inputs. ONNX values are immutable, so every read of the mutated value
// after the op reads the op's result instead; the op itself then converts
// like its out-of-place form.
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

// Index of the argument an op writes into, or -1.
int mutated_argument(const torch::jit::Node* n) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema || !schema->is_mutable()) return -1;
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
    const auto* alias = args[i].alias_info();
    if (alias && alias->isWrite()) return static_cast<int>(i);
  }
  return -1;
}

void run_block(torch::jit::Block* block) {
  for (torch::jit::Node* n : block->nodes()) {
    for (torch::jit::Block* b : n->blocks()) run_block(b);
    if (n->kind().is_prim() || n->outputs().size() != 1) continue;
    int k = mutated_argument(n);
    if (k < 0) continue;
    torch::jit::Value* target = n->input(static_cast<size_t>(k));
    if (!target->type()->cast<c10::TensorType>()) continue;
    target->replaceAllUsesAfterNodeWith(n, n->output());
  }
}

}  // namespace

void functionalize(TorchGraph& tg, const TorchContext&) { run_block(tg.graph->block()); }

}  // namespace torch2onnx::torch_side
