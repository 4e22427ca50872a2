// Dicts a scripted model builds and reads in one block, with keys known at
// export time: `out = OrderedDict(); out["out"] = x; ...; return out`
// (torchvision's IntermediateLayerGetter, its segmentation models). ONNX has
// no dicts: each read becomes the value last stored under its key, `k in d`
// and len(d) become constants, and any other use (a return, a container)
// gets a fresh prim::DictConstruct of the entries at that point; d.update(e)
// of a dict e of known entries stores them; keys(), values() and items() are
// lists of the entries at that point; a read with a key known only at run
// time reads a snapshot too. A list that takes the dict before its last
// store is built after it (torchvision's detections: `result.append(d)`,
// then `result[i]["boxes"] = ...`). Dicts stored into with keys computed at
// run time, or in nested blocks, stay as they are.
// (`dict()` and `OrderedDict()` script to aten::dict, an empty one.)
#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <optional>

#include "torch_passes/list_elements.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

struct Entries {
  std::vector<std::pair<c10::IValue, Value*>> items;  // in insertion order, as Python's dict

  Value** find(const c10::IValue& key) {
    for (auto& [k, v] : items)
      if (c10::_fastEqualsForContainer(k, key)) return &v;
    return nullptr;
  }
  void set(const c10::IValue& key, Value* v) {
    if (Value** slot = find(key)) *slot = v;
    else items.emplace_back(key, v);
  }
};

bool is_dict_op(const Node* m, c10::Symbol kind) {
  return m->kind() == kind && m->inputs().size() >= 1 &&
         m->input(0)->type()->kind() == c10::TypeKind::DictType;
}

// What a use of the dict does, or nullopt when this pass cannot follow it.
// Reads may sit in nested blocks (`if "aux" in feats: y = feats["aux"]`):
// they see the entries as of the node of `b` that holds them, as long as
// every store is in `b` itself.
// A read with a key known only at run time (`for k in d: d[k]`, until the
// loop unrolls) reads a snapshot, as other uses do.
enum class UseKind { Store, Update, Read, DynamicRead, Contains, Length, Keys, Values, Items, Other };

// The entries of a dict value built by DictConstruct with constant keys (or
// an empty dict()), or nullopt.
std::optional<std::vector<std::pair<c10::IValue, Value*>>> known_entries(Value* d) {
  Node* m = d->node();
  if (m->kind() == c10::aten::dict && m->inputs().empty()) return std::vector<std::pair<c10::IValue, Value*>>{};
  if (m->kind() != c10::prim::DictConstruct) return std::nullopt;
  std::vector<std::pair<c10::IValue, Value*>> items;
  for (size_t i = 0; i + 1 < m->inputs().size(); i += 2) {
    auto key = torch::jit::toIValue(m->input(i));
    if (!key) return std::nullopt;
    items.emplace_back(*key, m->input(i + 1));
  }
  return items;
}
std::optional<UseKind> classify(const torch::jit::Use& u, bool nested) {
  const Node* m = u.user;
  const bool key_known = m->inputs().size() >= 2 && torch::jit::toIValue(m->input(1)).has_value();
  std::optional<UseKind> kind;
  if (u.offset == 0 && is_dict_op(m, c10::aten::_set_item)) kind = key_known ? std::optional(UseKind::Store) : std::nullopt;
  else if (u.offset == 0 && is_dict_op(m, c10::Symbol::aten("update")))  // d.update(other): stores of other's entries
    kind = known_entries(m->input(1)) ? std::optional(UseKind::Update) : std::nullopt;
  else if (u.offset == 0 && is_dict_op(m, c10::aten::__getitem__)) kind = key_known ? UseKind::Read : UseKind::DynamicRead;
  else if (u.offset == 0 && is_dict_op(m, c10::aten::__contains__))
    kind = key_known ? std::optional(UseKind::Contains) : std::nullopt;
  else if (u.offset == 0 && is_dict_op(m, c10::aten::len)) kind = UseKind::Length;
  else if (u.offset == 0 && is_dict_op(m, c10::aten::keys)) kind = UseKind::Keys;
  else if (u.offset == 0 && is_dict_op(m, c10::aten::values)) kind = UseKind::Values;
  else if (u.offset == 0 && is_dict_op(m, c10::Symbol::aten("items"))) kind = UseKind::Items;
  else {
    // Anything else may keep or change the dict: only after the last store.
    const c10::FunctionSchema* schema = m->maybeSchema();
    if (schema && u.offset < schema->arguments().size()) {
      const auto* alias = schema->arguments()[u.offset].alias_info();
      if (alias && alias->isWrite()) return std::nullopt;
    }
    kind = UseKind::Other;
  }
  if (nested && kind && (*kind == UseKind::Store || *kind == UseKind::Update || *kind == UseKind::Other))
    return std::nullopt;
  return kind;
}

// A list that takes the dict before its last store (`result.append(d)`,
// `[d]`, then `result[0]["boxes"] = ...` once the read of result[0] is d):
// if nothing reads the list between the two, building it just after the
// store (with the appends that follow, in order) is the same program, and
// the list then holds the dict as stored.
bool defer_container(Node* m, const Node* last_store, const Block* b) {
  const bool append = m->kind() == c10::aten::append && m->inputs().size() == 2;
  if ((!append && m->kind() != c10::prim::ListConstruct) || m->owningBlock() != b) return false;
  std::vector<Value*> versions{m->output()};  // the list, before and after each append
  if (append) versions.push_back(m->input(0));
  std::vector<Node*> moved{m};
  for (size_t i = 0; i < versions.size(); ++i)
    for (const torch::jit::Use& u : versions[i]->uses()) {
      Node* anchor = anchor_in(u.user, b);
      if (!anchor) return false;
      if (u.user == m || anchor->isBefore(m) || anchor->isAfter(last_store)) continue;
      const bool later_append = u.user == anchor && u.user->kind() == c10::aten::append && u.offset == 0;
      if (!later_append) return false;  // a read of the list before the store
      if (std::find(moved.begin(), moved.end(), u.user) == moved.end()) {
        moved.push_back(u.user);
        versions.push_back(u.user->output());
      }
    }
  std::sort(moved.begin(), moved.end(), [](Node* x, Node* y) { return y->isAfter(x); });
  Node* after = const_cast<Node*>(last_store);
  for (Node* n : moved) {
    n->moveAfter(after);
    after = n;
  }
  return true;
}

bool fold_dict(Node* construct, Graph& g) {
  Value* dict = construct->output();
  Block* b = construct->owningBlock();
  Entries entries;
  for (size_t i = 0; i + 1 < construct->inputs().size(); i += 2) {
    auto key = torch::jit::toIValue(construct->input(i));
    if (!key) return false;
    entries.set(*key, construct->input(i + 1));
  }
  // The uses, in program order (of the nodes of `b` holding them);
  // snapshots only after the last store.
  struct DictUse {
    Node* user;
    Node* anchor;
    UseKind kind;
  };
  std::vector<DictUse> uses;
  const Node* last_store = nullptr;
  for (const torch::jit::Use& u : dict->uses()) {
    Node* anchor = anchor_in(u.user, b);
    if (!anchor) return false;
    auto kind = classify(u, anchor != u.user);
    if (!kind) return false;
    uses.push_back({u.user, anchor, *kind});
    if ((*kind == UseKind::Store || *kind == UseKind::Update) && (!last_store || u.user->isAfter(last_store))) last_store = u.user;
  }
  for (const DictUse& u : uses)
    if ((u.kind == UseKind::Other || u.kind == UseKind::DynamicRead) && last_store && last_store->isAfter(u.anchor) &&
        !defer_container(u.user, last_store, b))
      return false;
  std::stable_sort(uses.begin(), uses.end(),
                   [](const DictUse& a, const DictUse& c) { return c.anchor->isAfter(a.anchor); });
  {  // every read finds its key (else a KeyError at run time: left to LibTorch's message)
    Entries keys = entries;
    for (const DictUse& u : uses) {
      if (u.kind == UseKind::Store) keys.set(*torch::jit::toIValue(u.user->input(1)), nullptr);
      if (u.kind == UseKind::Update) {
        const auto added = known_entries(u.user->input(1));
        for (const auto& [k, v] : *added) keys.set(k, nullptr);
      }
      // (a read in a branch may be guarded by `if k in d:`, which folds to
      // false: it never runs, and reads as prim::Uninitialized below)
      if (u.kind == UseKind::Read && u.anchor == u.user && !keys.find(*torch::jit::toIValue(u.user->input(1))))
        return false;
    }
  }

  std::vector<Node*> dead;
  for (const auto& [m, anchor, kind] : uses) {
    switch (kind) {
      case UseKind::Store:
        entries.set(*torch::jit::toIValue(m->input(1)), m->input(2));
        dead.push_back(m);
        break;
      case UseKind::Update: {
        const auto added = known_entries(m->input(1));
        for (const auto& [k, v] : *added) entries.set(k, v);
        dead.push_back(m);
        break;
      }
      case UseKind::Read: {
        Value** entry = entries.find(*torch::jit::toIValue(m->input(1)));
        Value* v = entry ? *entry : nullptr;
        if (!v) {  // a KeyError on a path that never runs (above)
          Node* u = g.create(c10::prim::Uninitialized, {}, 1);
          u->output()->setType(m->output()->type());
          u->insertBefore(m);
          v = u->output();
        }
        m->output()->replaceAllUsesWith(v);
        dead.push_back(m);
        break;
      }
      case UseKind::Contains:
      case UseKind::Length: {
        torch::jit::WithInsertPoint guard(m);
        Value* c = kind == UseKind::Contains
                       ? g.insertConstant(entries.find(*torch::jit::toIValue(m->input(1))) != nullptr)
                       : g.insertConstant(static_cast<int64_t>(entries.items.size()));
        m->output()->replaceAllUsesWith(c);
        dead.push_back(m);
        break;
      }
      case UseKind::Keys:
      case UseKind::Values:
      case UseKind::Items: {  // lists of the entries at this point
        torch::jit::WithInsertPoint guard(m);
        const auto& dict_type = dict->type()->expectRef<c10::DictType>();
        std::vector<Value*> elems;
        for (const auto& [k, v] : entries.items) {
          Value* key = kind == UseKind::Values ? nullptr : g.insertConstant(k);
          if (kind == UseKind::Items)
            elems.push_back(g.insertNode(g.createTuple({key, v}))->output());
          else
            elems.push_back(key ? key : v);
        }
        const c10::TypePtr elem = kind == UseKind::Keys     ? dict_type.getKeyType()
                                  : kind == UseKind::Values ? dict_type.getValueType()
                                                            : c10::TupleType::create({dict_type.getKeyType(),
                                                                                      dict_type.getValueType()});
        m->output()->replaceAllUsesWith(g.insertNode(g.createList(elem, elems))->output());
        dead.push_back(m);
        break;
      }
      case UseKind::DynamicRead:
      case UseKind::Other: {
        torch::jit::WithInsertPoint guard(m);
        std::vector<Value*> inputs;
        for (const auto& [k, v] : entries.items) {
          inputs.push_back(g.insertConstant(k));
          inputs.push_back(v);
        }
        Node* snapshot = g.insertNode(g.create(c10::prim::DictConstruct, inputs, 1));
        snapshot->output()->setType(dict->type());
        m->replaceInputWith(dict, snapshot->output());
        break;
      }
    }
  }
  for (Node* m : dead) m->destroy();
  if (!dict->hasUses()) construct->destroy();
  return true;
}

// dict(pairs) of a list of known (key, value) tuples with constant keys
// (`OrderedDict([(k, v) for k, v in zip(names, results)])` once unrolled):
// a DictConstruct, which the folding below can follow.
bool dicts_from_pairs(Block* b, Graph& g) {
  bool changed = false;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    Node* n = *it;
    ++it;
    for (Block* sub : n->blocks()) changed = dicts_from_pairs(sub, g) || changed;
    if (n->kind() != c10::aten::dict || n->inputs().size() != 1 ||
        n->input(0)->type()->kind() != c10::TypeKind::ListType)
      continue;
    auto pairs = elements_at(n->input(0), n);
    if (!pairs) continue;
    std::vector<Value*> inputs;
    for (Value* p : *pairs) {
      Node* t = p->node();
      if (t->kind() != c10::prim::TupleConstruct || t->inputs().size() != 2 || !torch::jit::toIValue(t->input(0))) {
        inputs.clear();
        break;
      }
      inputs.push_back(t->input(0));
      inputs.push_back(t->input(1));
    }
    if (inputs.empty() && !pairs->empty()) continue;
    torch::jit::WithInsertPoint guard(n);
    Node* d = g.insertNode(g.create(c10::prim::DictConstruct, inputs, 1));
    d->output()->setType(n->output()->type());
    n->output()->replaceAllUsesWith(d->output());
    n->destroy();
    changed = true;
  }
  return changed;
}

// A cast of the dict (Optional/Union -> Dict after an isinstance test) is
// the dict. Returns whether there was one.
bool forward_casts(Value* dict) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (const torch::jit::Use& u : dict->uses()) {
      Node* cast = u.user;  // (replacing its uses reallocates dict's)
      if (cast->kind() == c10::prim::unchecked_cast && dict->type()->isSubtypeOf(*cast->output()->type())) {
        cast->output()->replaceAllUsesWith(dict);
        cast->destroy();
        again = changed = true;
        break;
      }
    }
  }
  return changed;
}

bool fold_block(Block* b, Graph& g) {
  bool changed = false;
  std::vector<Node*> constructs;
  for (Node* n : b->nodes()) {
    for (Block* sub : n->blocks()) changed = fold_block(sub, g) || changed;
    const bool empty_dict = n->kind() == c10::aten::dict && n->inputs().empty();  // dict(), OrderedDict()
    if ((n->kind() == c10::prim::DictConstruct || empty_dict) && n->output()->hasUses()) constructs.push_back(n);
  }
  for (Node* n : constructs) {
    changed = forward_casts(n->output()) || changed;
    // Nothing to do for a dict that is only returned or passed on.
    bool only_other = true;
    for (const auto& u : n->output()->uses()) {
      auto kind = classify(u, anchor_in(u.user, b) != u.user);
      only_other = only_other && (kind == UseKind::Other || kind == UseKind::DynamicRead);
    }
    if (!only_other) changed = fold_dict(n, g) || changed;
  }
  return changed;
}

}  // namespace

bool fold_dicts(TorchGraph& tg, const TorchContext&) {
  const bool built = dicts_from_pairs(tg.graph->block(), *tg.graph);
  return fold_block(tg.graph->block(), *tg.graph) || built;
}

}  // namespace torch2onnx::torch_side
