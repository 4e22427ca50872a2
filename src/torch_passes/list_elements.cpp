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

// Nothing but `except` writes into v before `at`.
bool untouched(Value* v, Node* at, Node* except) {
  for (const torch::jit::Use& u : v->uses())
    if (u.user != at && u.user != except && writes(u) && !u.user->isAfter(at)) return false;
  return true;
}

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

std::optional<std::vector<Value*>> elements_at(Value* list, Node* at) {
  if (!untouched(list, at, nullptr)) return std::nullopt;
  std::vector<Value*> appended;  // (last first)
  Value* v = list;
  while (v->node()->kind() == c10::aten::append && v->node()->owningBlock() == at->owningBlock()) {
    Node* append = v->node();
    appended.push_back(append->input(1));
    v = append->input(0);
    if (!untouched(v, at, append)) return std::nullopt;  // (the same list object as `list`)
  }
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
  elems->insert(elems->end(), appended.rbegin(), appended.rend());
  return elems;
}

}  // namespace torch2onnx::torch_side
