// Scripted code returns tuples out of branches (`if c: return a, b` /
// `t = (x, y)` reassigned in a branch): the If's output is a tuple, which ONNX
// has no type for. Each tuple output becomes one output per element (nested
// tuples too), the tuple rebuilt after the If for its readers; an element
// that is None on every path is a None constant, not an output.
#include <torch/csrc/jit/ir/constants.h>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// The elements of tuple `v` at the end of block `b`.
std::vector<Value*> elements_at_end(Block* b, Value* v) {
  if (v->node()->kind() == c10::prim::TupleConstruct) return v->node()->inputs().vec();
  if (v->node()->kind() == c10::prim::Uninitialized) {  // a path that raises or returns earlier: each element too
    std::vector<Value*> out;
    for (const c10::TypePtr& t : v->type()->expectRef<c10::TupleType>().elements()) {
      Node* u = b->owningGraph()->createUninitialized(t);
      u->insertBefore(b->return_node());
      out.push_back(u->output());
    }
    return out;
  }
  Node* unpack = b->owningGraph()->createTupleUnpack(v);
  unpack->insertBefore(b->return_node());
  return unpack->outputs().vec();
}

// Splits tuple output i of If `n`; returns whether it did.
bool split_tuple_output(Node* n, size_t i) {
  const auto tuple = n->output(i)->type()->cast<c10::TupleType>();
  if (!tuple) return false;
  const size_t k = tuple->elements().size();
  for (Block* b : n->blocks()) {
    std::vector<Value*> elems = elements_at_end(b, b->outputs()[i]);
    b->eraseOutput(i);
    for (size_t e = 0; e < k; ++e) b->insertOutput(i + e, elems[e]);
  }
  Value* old = n->output(i);
  std::vector<Value*> parts;
  for (size_t e = 0; e < k; ++e) parts.push_back(n->insertOutput(i + e)->setType(tuple->elements()[e]));
  Node* rebuilt = n->owningGraph()->createTuple(parts);
  rebuilt->insertAfter(n);
  old->replaceAllUsesWith(rebuilt->output());
  n->eraseOutput(i + k);
  return true;
}

// Output i of If `n` is None on every path: a None constant.
bool drop_none_output(Node* n, size_t i) {
  if (n->output(i)->type()->kind() != c10::TypeKind::NoneType) return false;
  torch::jit::WithInsertPoint guard(n->next());
  n->output(i)->replaceAllUsesWith(n->owningGraph()->insertConstant(c10::IValue()));
  for (Block* b : n->blocks()) b->eraseOutput(i);
  n->eraseOutput(i);
  return true;
}

void run(Block* block) {
  for (Node* n : block->nodes()) {
    for (Block* sub : n->blocks()) run(sub);
    if (n->kind() != c10::prim::If) continue;
    for (size_t i = 0; i < n->outputs().size();) {
      if (split_tuple_output(n, i)) continue;  // (its first element may be a tuple again)
      if (drop_none_output(n, i)) continue;
      ++i;
    }
  }
}

}  // namespace

void lower_if_tuples(TorchGraph& tg, const TorchContext&) { run(tg.graph->block()); }

}  // namespace torch2onnx::torch_side
