#include "torch_passes/list_elements.h"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>

namespace torch2onnx::torch_side {

bool writes(const torch::jit::Use& u) {
  const c10::FunctionSchema* schema = u.user->maybeSchema();
  if (!schema || u.offset >= schema->arguments().size()) return u.user->kind() != c10::prim::Return;
  const auto* alias = schema->arguments()[u.offset].alias_info();
  return alias && alias->isWrite();
}

namespace {

using torch::jit::Node;
using torch::jit::Value;

bool is_list(const Value* v) { return v->type()->kind() == c10::TypeKind::ListType; }

// Python's l[start:end:step] (step > 0) of n elements.
std::optional<std::vector<Value*>> python_slice(const std::vector<Value*>& l, Node* s) {
  auto bound = [&](size_t i, int64_t none) -> std::optional<int64_t> {
    if (s->input(i)->type()->kind() == c10::TypeKind::NoneType) return none;
    if (auto c = torch::jit::constant_as<int64_t>(s->input(i))) return *c;
    return std::nullopt;
  };
  const int64_t n = static_cast<int64_t>(l.size());
  auto start = bound(1, 0), end = bound(2, n), step = bound(3, 1);
  if (!start || !end || !step || *step <= 0) return std::nullopt;
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
  std::vector<Value*> out;
  for (int64_t i = clamp(*start); i < clamp(*end); i += *step) out.push_back(l[static_cast<size_t>(i)]);
  return out;
}

}  // namespace

Node* anchor_in(Node* m, const torch::jit::Block* b) {
  while (m && m->owningBlock() != b) m = m->owningBlock()->owningNode();
  return m;
}

std::optional<std::vector<Value*>> elements_at(Value* list, Node* at) {
  // After functionalize a write returns the list (later reads read that);
  // before, reads read the one list object the writes went into. Both: the
  // list's origin, then every write into it before `at`, in program order.
  const torch::jit::Block* block = at->owningBlock();
  std::vector<Value*> versions{list};
  Value* v = list;
  while ((v->node()->kind() == c10::aten::append || v->node()->kind() == c10::aten::_set_item) &&
         v->node()->owningBlock() == block && !v->node()->inputs().empty() && is_list(v->node()->input(0))) {
    v = v->node()->input(0);
    versions.push_back(v);
  }
  std::vector<Node*> updates;
  for (Value* version : versions)
    for (const torch::jit::Use& u : version->uses()) {
      if (u.user == at || !writes(u)) continue;
      Node* anchor = anchor_in(u.user, block);
      if (anchor && anchor->isAfter(at)) continue;
      const bool update = anchor == u.user && u.offset == 0 &&
                          (u.user->kind() == c10::aten::append ||
                           (u.user->kind() == c10::aten::_set_item && torch::jit::constant_as<int64_t>(u.user->input(1))));
      if (!update) return std::nullopt;  // (anything else may change the list)
      if (std::find(updates.begin(), updates.end(), u.user) == updates.end()) updates.push_back(u.user);
    }
  std::sort(updates.begin(), updates.end(), [](Node* a, Node* b) { return b->isAfter(a); });
  Node* d = v->node();
  if (d->owningBlock() != at->owningBlock()) return std::nullopt;
  std::optional<std::vector<Value*>> elems;
  if (d->kind() == c10::prim::ListConstruct) {
    elems.emplace(d->inputs().begin(), d->inputs().end());
  } else if (d->kind() == c10::prim::Constant && d->output()->type()->kind() == c10::TypeKind::ListType) {
    // a constant list: its elements as constants, right after it
    auto value = torch::jit::toIValue(d->output());
    if (value && value->isList()) {
      torch::jit::WithInsertPoint guard(d->next());
      elems.emplace();
      for (const c10::IValue& e : value->toListRef()) {
        auto c = torch::jit::tryInsertConstant(*d->owningGraph(), e);
        if (!c) return std::nullopt;
        elems->push_back(*c);
      }
    }
  } else if (d->kind() == c10::aten::list && d->inputs().size() == 1 && is_list(d->input(0))) {
    elems = elements_at(d->input(0), d);  // list(l): a copy of l as it is there
  } else if (d->kind() == c10::aten::slice && d->inputs().size() == 4 && is_list(d->input(0))) {
    if (auto source = elements_at(d->input(0), d)) elems = python_slice(*source, d);
  } else if (d->kind() == c10::aten::add && d->inputs().size() == 2 && is_list(d->input(0)) && is_list(d->input(1))) {
    auto a = elements_at(d->input(0), d), b = elements_at(d->input(1), d);
    if (a && b) {
      a->insert(a->end(), b->begin(), b->end());
      elems = std::move(a);
    }
  }
  if (!elems) return std::nullopt;
  for (Node* u : updates) {
    if (u->kind() == c10::aten::append) {
      elems->push_back(u->input(1));
      continue;
    }
    const int64_t n = static_cast<int64_t>(elems->size());
    int64_t i = *torch::jit::constant_as<int64_t>(u->input(1));
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;  // (an IndexError: left to LibTorch)
    (*elems)[static_cast<size_t>(i)] = u->input(2);
  }
  return elems;
}

}  // namespace torch2onnx::torch_side
