// What a scripted list holds at a point of the graph, when the graph says it
// exactly: shared by simplify_scripted (len(l), l[i]) and fold_dicts
// (dict(pairs)). Before functionalize, a list is one mutable object whose
// writes (append, _set_item, ...) return it again.
#pragma once

#include <optional>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace torch2onnx::torch_side {

// Whether a use may write into the value it reads (a mutable schema
// argument, or a node without a schema other than the return).
bool writes(const torch::jit::Use& u);

// The node of block `b` that is, or holds, `m` (nullptr: m is outside b).
torch::jit::Node* anchor_in(torch::jit::Node* m, const torch::jit::Block* b);

// The elements of list `list` as node `at` (in the block that builds the
// list) reads them: a ListConstruct, a constant list (its elements are then
// inserted as constants after it), a list() copy, a slice with constant
// bounds or a concatenation of such lists, then appends and stores at
// constant indices (l[0] = x) in that block, with nothing else writing into
// the list before `at`; else nullopt.
std::optional<std::vector<torch::jit::Value*>> elements_at(torch::jit::Value* list, torch::jit::Node* at);

}  // namespace torch2onnx::torch_side
