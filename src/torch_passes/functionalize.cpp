// In-place operators (relu_, add_, x += y, scatter_, index_put_, copy_,
// list.append ...) write into one of their inputs. ONNX values are
// immutable, so the graph is rewritten into value semantics:
//
// 1. Every later read of the mutated value reads the op's result instead
//    (the op itself converts like its out-of-place form).
// 2. When the mutated value is a view of another tensor (x[:, 1:3] += y,
//    x[i] = v, x.t().add_(1) ...), the base is rebuilt from the new view
//    contents, up the chain of views: slice -> slice_scatter, select ->
//    select_scatter, view/reshape -> reshape back, transpose/permute -> the
//    inverse permutation, ... and later reads of the base, and of other
//    views of it, read the rebuilt one.
// 3. A value mutated inside a branch or a loop body (a list appended to in a
//    loop, a tensor updated in an if) leaves the block as a new output of the
//    If, or as a new loop-carried value of the Loop.
#include <torch/csrc/jit/ir/constants.h>

#include <map>
#include <optional>
#include <unordered_set>

#include "torch_passes/list_erase.h"
#include "torch_passes/origin.h"
#include "torch_passes/passes.h"
#include "torch2onnx/warnings.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

// Index of the argument an op writes into, or -1.
int mutated_argument(const Node* n) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema || !schema->is_mutable()) return -1;
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
    const auto* alias = args[i].alias_info();
    if (alias && alias->isWrite()) return static_cast<int>(i);
  }
  return -1;
}

bool is_view_op(const Node* n) {
  static const std::unordered_set<std::string> ops = {
      "aten::slice",     "aten::select",    "aten::narrow",     "aten::view",      "aten::reshape",
      "aten::_reshape_alias", "aten::flatten", "aten::unflatten", "aten::transpose", "aten::permute",
      "aten::t",         "aten::unsqueeze", "aten::squeeze",    "aten::diagonal",  "aten::detach",
      "aten::alias",     "aten::contiguous", "aten::view_as",   "aten::reshape_as", "aten::swapaxes",
      "aten::swapdims",  "aten::expand",    "aten::expand_as",  "aten::numpy_T"};
  return ops.count(n->kind().toQualString()) != 0;
}

bool in_block(const Node* n, const Block* b) {
  for (const Block* cur = n->owningBlock(); cur; cur = cur->owningNode() ? cur->owningNode()->owningBlock() : nullptr)
    if (cur == b) return true;
  return false;
}

bool defined_in(const Value* v, const Block* b) { return in_block(v->node(), b); }

// Replaces reads of `from` that come after `after` and lie inside block `b`
// (nested blocks included) with `to`.
void replace_after_in_block(Value* from, Value* to, const Node* after, const Block* b) {
  std::vector<torch::jit::Use> uses = from->uses();
  for (const auto& u : uses)
    if (u.user != to->node() && u.user->isAfter(after) && in_block(u.user, b)) u.user->replaceInput(u.offset, to);
}

struct ViewStep {
  Node* node;         // the view op (or ListUnpack for split/chunk/unbind pieces)
  Value* base;        // what it views
  size_t list_index;  // for ListUnpack pieces: which piece
};

std::optional<ViewStep> view_of(Value* v, const std::unordered_map<const Value*, ExampleInfo>& info) {
  Node* n = v->node();
  if (n->kind() == c10::prim::ListUnpack) {
    Node* split = n->input()->node();
    const std::string k = split->kind().toQualString();
    if (k == "aten::split" || k == "aten::split_with_sizes" || k == "aten::chunk" || k == "aten::unbind" ||
        k == "aten::unsafe_split" || k == "aten::unsafe_chunk" || k == "aten::tensor_split") {
      size_t index = 0;
      while (n->output(index) != v) ++index;
      return ViewStep{n, split->input(0), index};
    }
    return std::nullopt;
  }
  if (!is_view_op(n) || !v->type()->cast<c10::TensorType>()) return std::nullopt;
  // (contiguous, reshape and flatten copy when they must: the example run
  // saw whether they did, and a write into a copy stays in the copy)
  if (auto it = info.find(v); it != info.end() && it->second.copied) return std::nullopt;
  return ViewStep{n, n->input(0), 0};
}

class Functionalizer {
 public:
  Functionalizer(TorchGraph& tg, bool dynamic) : graph_(*tg.graph), tg_(tg), dynamic_(dynamic) {}

  bool changed = false;

  // Rewrites block `b`; returns, for values defined outside `b` that it
  // mutates, their version at the end of `b`.
  std::map<Value*, Value*> run_block(Block* b) {
    std::map<Value*, Value*> escaping;
    std::map<Value*, Value*>& latest = latest_[b];
    std::vector<Node*> nodes(b->nodes().begin(), b->nodes().end());
    for (Node* n : nodes) {
      if (!n->blocks().empty()) {
        lift_out_of(n, b, escaping, latest);
        continue;
      }
      if (n->kind().is_prim()) continue;
      const int k = mutated_argument(n);
      if (k < 0) continue;
      Value* target = n->input(static_cast<size_t>(k));
      Value* rest = pop_as_slices(n);  // list.pop(i), del l[i]: l[i], and l[:i] + l[i+1:] from then on
      if (!rest) rest = pop_at_run_time(n);   // (i computed at run time: t2o::list_erase(l, i))
      if (!rest) rest = insert_as_slices(n);  // list.insert(i, v): l[:i] + [v] + l[i:]
      if (!rest) rest = extend_as_add(n);     // list.extend(m), l += m: l + m
      if (rest) {
        if (n->kind() == c10::aten::add_ && n->outputs().size() == 1) n->output()->replaceAllUsesWith(rest);
        replace_after_in_block(target, rest, n, b);
        note(escaping, latest, target, rest, b);
        n->destroy();
        changed = true;
        continue;
      }
      if (n->outputs().size() != 1 || n->output()->type()->kind() != target->type()->kind()) {
        bool read_later = false;
        for (const auto& u : target->uses()) read_later = read_later || u.user->isAfter(n);
        // (a store into a dict with constant keys is fold_dicts' work, once
        // branches and loops over static lists have folded)
        const bool dict_store = target->type()->kind() == c10::TypeKind::DictType &&
                                ((n->kind() == c10::aten::_set_item && torch::jit::toIValue(n->input(1))) ||
                                 n->kind() == c10::Symbol::aten("update"));
        if ((read_later || !defined_in(target, b)) && !dict_store) unsupported(n);
        continue;  // nothing reads the mutated value afterwards
      }
      Value* result = n->output();
      if (dynamic_) warn_if_aliasing_varies(n, target);
      replace_after_in_block(target, result, n, b);
      note(escaping, latest, target, result, b);
      if (view_of(target, tg_.info)) {
        Value* root_new = nullptr;
        Value* root = write_back(n, target, result, b, root_new);
        if (root) note(escaping, latest, root, root_new, b);
        changed = true;
      }
    }
    return escaping;
  }

 private:
  // The constant index of list op n (`l.pop(i)`, `l.insert(i, v)`: kind
  // `kind` with `arity` inputs, the list first, the index second), if it is one.
  static std::optional<int64_t> constant_list_index(const Node* n, c10::Symbol kind, size_t arity) {
    if (n->kind() != kind || n->inputs().size() != arity || n->input(0)->type()->kind() != c10::TypeKind::ListType)
      return std::nullopt;
    if (auto idx = torch::jit::constant_as<int64_t>(n->input(1))) return *idx;
    return std::nullopt;
  }

  // `x = l.pop(i)`: x's readers read l[i] (at the insertion point) instead.
  void read_popped_item(Node* pop) {
    Value* item = graph_.insert(c10::aten::__getitem__, {pop->input(0), pop->input(1)});
    item->setType(pop->output()->type());
    if (auto info = tg_.info.find(pop->output()); info != tg_.info.end()) {
      ExampleInfo copy = info->second;
      tg_.info[item] = std::move(copy);
    }
    pop->output()->replaceAllUsesWith(item);
  }

  // `x = l.pop(i)` with a constant i: x = l[i], and the list without it is
  // l[:-1] (i = -1) or l[:i] + l[i+1:]. Returns the shortened list (n's
  // uses now read the element), or null for other nodes.
  // `del l[i]` (aten::Delete) likewise, without the element.
  Value* pop_as_slices(Node* n) {
    const bool del = n->kind() == c10::aten::Delete;
    auto idx = constant_list_index(n, del ? c10::aten::Delete : c10::aten::pop, 2);
    if (!idx) return nullptr;
    torch::jit::WithInsertPoint guard(n);
    Value* l = n->input(0);
    Value* none = graph_.insertConstant(c10::IValue());
    Value* one = graph_.insertConstant(int64_t{1});
    if (!del) read_popped_item(n);
    if (*idx == -1) return graph_.insert(c10::aten::slice, {l, none, graph_.insertConstant(int64_t{-1}), one});
    Value* head = graph_.insert(c10::aten::slice, {l, none, n->input(1), one});
    Value* tail = graph_.insert(c10::aten::slice, {l, graph_.insertConstant(*idx + 1), none, one});
    return graph_.insert(c10::aten::add, {head, tail});
  }

  // `x = l.pop(i)` / `del l[i]` with i computed at run time: x = l[i], and
  // the list is t2o::list_erase(l, i) from then on. Returns it, or null for
  // other nodes.
  Value* pop_at_run_time(Node* n) {
    const bool del = n->kind() == c10::aten::Delete;
    if ((!del && n->kind() != c10::aten::pop) || n->inputs().size() != 2 ||
        n->input(0)->type()->kind() != c10::TypeKind::ListType)
      return nullptr;
    register_list_erase();
    torch::jit::WithInsertPoint guard(n);
    Value* l = n->input(0);
    if (!del) read_popped_item(n);
    Node* erase = graph_.insertNode(graph_.create(list_erase_symbol(), {l, n->input(1)}, 1));
    erase->output()->setType(l->type());
    return erase->output();
  }

  // `l.insert(i, v)` with a constant i: l[:i] + [v] + l[i:] (Python's
  // clamping of i is the slices'). Returns that list, or null for other nodes.
  Value* insert_as_slices(Node* n) {
    if (!constant_list_index(n, c10::aten::insert, 3)) return nullptr;
    torch::jit::WithInsertPoint guard(n);
    Value* l = n->input(0);
    Value* none = graph_.insertConstant(c10::IValue());
    Value* one = graph_.insertConstant(int64_t{1});
    auto elem = l->type()->expectRef<c10::ListType>().getElementType();
    Value* item = graph_.insertNode(graph_.createList(elem, {n->input(2)}))->output();
    Value* head = graph_.insert(c10::aten::slice, {l, none, n->input(1), one});
    Value* tail = graph_.insert(c10::aten::slice, {l, n->input(1), none, one});
    return graph_.insert(c10::aten::add, {graph_.insert(c10::aten::add, {head, item}), tail});
  }

  // `l.extend(m)` of a list m (torchvision's LastLevelP6P7: p.extend([p6,
  // p7])): the list is l + m from then on. Returns it, or null for other nodes.
  // `l += m` (aten::add_ of lists) is the same.
  Value* extend_as_add(Node* n) {
    if ((n->kind() != c10::Symbol::aten("extend") && n->kind() != c10::aten::add_) || n->inputs().size() != 2 ||
        n->input(0)->type()->kind() != c10::TypeKind::ListType || *n->input(1)->type() != *n->input(0)->type())
      return nullptr;
    torch::jit::WithInsertPoint guard(n);
    return graph_.insert(c10::aten::add, {n->input(0), n->input(1)});
  }

  // contiguous(), reshape() and flatten() return their input's storage when
  // its strides allow and a copy otherwise, so whether a write into their
  // result reaches the input is decided by the sizes at run time (x.t() of an
  // (a, b) tensor is contiguous where a or b is 1). The example's answer is
  // what the graph keeps; with dynamic axes, a write whose answer shows (the
  // input is read after it) is warned about: a copy may be a view at sizes
  // of 1, and a view of a tensor with a dim of 1 may be a copy at others.
  void warn_if_aliasing_varies(const Node* write, Value* target) {
    for (Value* v = target;;) {
      const Node* p = v->node();
      if (returns_view_or_copy(p)) {
        const std::string k = p->kind().toQualString();
        auto out = tg_.info.find(v);
        auto in = tg_.info.find(p->input(0));
        const bool copied = out != tg_.info.end() && out->second.copied;
        bool ambiguous = copied;
        if (in != tg_.info.end())
          for (int64_t size : in->second.sizes) ambiguous = ambiguous || size <= 1;
        bool read_later = false;  // (the input, or what it is a view of)
        for (Value* base = p->input(0); base && !read_later;) {
          for (const auto& u : base->uses()) read_later = read_later || u.user->isAfter(write);
          auto up = view_of(base, tg_.info);
          base = up ? up->base : nullptr;
        }
        if (ambiguous && read_later && warned_.insert(p).second) {
          OriginTable origins(tg_.root_class);
          warn(describe_origin(*origins.of(write)) + " writes into the result of " + k +
               ", whose input is read afterwards: whether " + k +
               " copies depends on the sizes, and the graph keeps the example's answer (" +
               (copied ? "a copy" : "a view") +
               "); with the dynamic axes, other sizes may give other values");
        }
      }
      auto step = view_of(v, tg_.info);
      if (!step) return;
      v = step->base;
    }
  }

  [[noreturn]] void unsupported(const Node* n) {
    OriginTable origins(tg_.root_class);
    throw Error(Error::Kind::Conversion, std::string("the model mutates a value with ") + n->kind().toQualString() +
                                             " in " + describe_origin(*origins.of(n)) +
                                             ", which has no value-returning form; exporting it is not supported");
  }

  // Records that `value` (as seen in `b`) now has version `next`.
  void note(std::map<Value*, Value*>& escaping, std::map<Value*, Value*>& latest, Value* value, Value* next,
            Block* b) {
    Value* original = value;
    auto it = origin_.find(value);
    if (it != origin_.end()) original = it->second;
    origin_[next] = original;
    latest[original] = next;
    if (!defined_in(original, b)) escaping[original] = next;
  }

  // Values mutated inside n's blocks leave n as extra outputs.
  void lift_out_of(Node* n, Block* b, std::map<Value*, Value*>& escaping, std::map<Value*, Value*>& latest) {
    std::vector<std::map<Value*, Value*>> inner;
    for (Block* sub : n->blocks()) inner.push_back(run_block(sub));
    std::vector<Value*> lifted;  // originals, in a fixed order
    for (const auto& m : inner)
      for (const auto& [original, version] : m)
        if (std::find(lifted.begin(), lifted.end(), original) == lifted.end()) lifted.push_back(original);
    if (lifted.empty()) return;
    changed = true;
    if (n->kind() != c10::prim::If && n->kind() != c10::prim::Loop)
      throw Error(Error::Kind::Conversion, std::string("values mutated inside ") + n->kind().toQualString() +
                                               " cannot be exported");
    for (Value* original : lifted) {
      // What n's blocks read: the latest version before n.
      auto seen = latest.find(original);
      Value* before = seen == latest.end() ? original : seen->second;
      Value* after = nullptr;
      if (n->kind() == c10::prim::If) {
        for (size_t k = 0; k < n->blocks().size(); ++k) {
          auto it = inner[k].find(original);
          n->blocks()[k]->registerOutput(it == inner[k].end() ? before : it->second);
        }
        after = n->addOutput()->setType(before->type());
      } else {  // prim::Loop: a new loop-carried value
        Block* body = n->blocks()[0];
        n->addInput(before);
        Value* carried_in = body->addInput()->setType(before->type());
        auto it = inner[0].find(original);
        Value* last = it == inner[0].end() ? before : it->second;
        // Inside the body, reads of the value read this iteration's copy.
        std::vector<torch::jit::Use> uses = before->uses();
        for (const auto& u : uses)
          if (u.user != n && in_block(u.user, body)) u.user->replaceInput(u.offset, carried_in);
        body->registerOutput(last == before ? carried_in : last);
        after = n->addOutput()->setType(before->type());
      }
      replace_after_in_block(before, after, n, b);
      origin_[after] = original;
      latest[original] = after;
      if (!defined_in(original, b)) escaping[original] = after;
    }
  }

  Value* constant(const c10::IValue& v) { return graph_.insertConstant(v); }

  Value* call(const char* op, std::vector<Value*> inputs) {
    Node* n = graph_.create(c10::Symbol::fromQualString(op), inputs, 1);
    graph_.insertNode(n);
    n->output()->setType(c10::TensorType::get());
    return n->output();
  }

  // A constant argument of view op n: a constant, or a list built of constants.
  c10::IValue const_input(const Node* n, size_t i) const {
    const Value* in = n->input(i);
    if (auto v = torch::jit::toIValue(in)) return *v;
    if (in->node()->kind() == c10::prim::ListConstruct && in->type()->isSubtypeOf(*c10::ListType::ofInts())) {
      c10::List<int64_t> out;
      for (const Value* e : in->node()->inputs()) {
        auto c = torch::jit::constant_as<int64_t>(e);
        if (!c) break;
        out.push_back(*c);
      }
      if (out.size() == in->node()->inputs().size()) return out;
    }
    OriginTable origins(tg_.root_class);
    throw Error(Error::Kind::Conversion, std::string("the model writes into the result of ") +
                                             n->kind().toQualString() + " in " + describe_origin(*origins.of(n)) +
                                             ", whose arguments are computed at run time; exporting that is not "
                                             "supported");
  }

  // The new contents of `step.base` given new contents `child` of the view.
  Value* rebuild(const ViewStep& step, Value* child) {
    Node* v = step.node;
    Value* base = step.base;
    const std::string k = v->kind().toQualString();
    if (v->kind() == c10::prim::ListUnpack) {
      Node* split = v->input()->node();
      const std::string sk = split->kind().toQualString();
      auto base_info = tg_.info.find(base);
      if (base_info == tg_.info.end()) throw Error(Error::Kind::Internal, "no shape for a split tensor");
      int64_t dim = const_input(split, sk == "aten::unbind" ? 1 : 2).toInt();
      if (dim < 0) dim += static_cast<int64_t>(base_info->second.sizes.size());
      if (sk == "aten::unbind")
        return call("aten::select_scatter", {base, child, constant(dim), constant(int64_t(step.list_index))});
      int64_t start = 0;
      for (size_t i = 0; i < step.list_index; ++i) start += tg_.info.at(v->output(i)).sizes.at(static_cast<size_t>(dim));
      const int64_t len = tg_.info.at(v->output(step.list_index)).sizes.at(static_cast<size_t>(dim));
      return call("aten::slice_scatter",
                  {base, child, constant(dim), constant(start), constant(start + len), constant(int64_t{1})});
    }
    if (k == "aten::slice")
      return call("aten::slice_scatter", {base, child, v->input(1), v->input(2), v->input(3), v->input(4)});
    if (k == "aten::narrow") {
      Value* end = graph_.insertNode(graph_.create(c10::aten::add, {v->input(2), v->input(3)}, 1))->output();
      end->setType(c10::IntType::get());
      return call("aten::slice_scatter", {base, child, v->input(1), v->input(2), end, constant(int64_t{1})});
    }
    if (k == "aten::select") return call("aten::select_scatter", {base, child, v->input(1), v->input(2)});
    if (k == "aten::diagonal")
      return call("aten::diagonal_scatter", {base, child, v->input(1), v->input(2), v->input(3)});
    if (k == "aten::view" || k == "aten::reshape" || k == "aten::_reshape_alias" || k == "aten::flatten" ||
        k == "aten::unflatten" || k == "aten::view_as" || k == "aten::reshape_as" || k == "aten::unsqueeze" ||
        k == "aten::squeeze")
      return call("aten::reshape_as", {child, base});
    if (k == "aten::transpose" || k == "aten::swapaxes" || k == "aten::swapdims")
      return call("aten::transpose", {child, v->input(1), v->input(2)});
    if (k == "aten::t" || k == "aten::numpy_T") return call(k.c_str(), {child});
    if (k == "aten::permute") {
      std::vector<int64_t> perm = const_input(v, 1).toIntVector();
      const int64_t rank = static_cast<int64_t>(perm.size());
      std::vector<int64_t> inverse(perm.size());
      for (int64_t i = 0; i < rank; ++i) inverse[static_cast<size_t>((perm[static_cast<size_t>(i)] + rank) % rank)] = i;
      return call("aten::permute", {child, constant(inverse)});
    }
    if (k == "aten::detach" || k == "aten::alias" || k == "aten::contiguous") return child;
    OriginTable origins(tg_.root_class);
    throw Error(Error::Kind::Conversion, "the model writes into the result of " + k + " in " +
                                             describe_origin(*origins.of(v)) +
                                             " (a view of its input); exporting that is not supported");
  }

  // Re-applies a view (with its original arguments) to a new base.
  Value* reapply(Node* view, Value* new_base) {
    std::vector<Value*> ins(view->inputs().begin(), view->inputs().end());
    ins[0] = new_base;
    Node* c = graph_.insertNode(graph_.create(view->kind(), ins, 1));
    c->output()->setType(view->output()->type());
    return c->output();
  }

  // Rebuilds the bases of `view` after `mutation` wrote `new_view` into it.
  // Returns the root base (and its new version in `root_new`).
  Value* write_back(Node* mutation, Value* view, Value* new_view, Block* b, Value*& root_new) {
    torch::jit::WithInsertPoint guard(mutation->next());
    Value* child = new_view;
    Value* current = view;
    Value* root = nullptr;
    std::vector<std::pair<Value*, Value*>> rebuilt;  // (old value, new value) along the chain
    while (auto step = view_of(current, tg_.info)) {
      Value* new_base = rebuild(*step, child);
      rebuilt.emplace_back(step->base, new_base);
      child = new_base;
      current = step->base;
      root = current;
    }
    Node* last = child->node();
    for (auto& [old_value, new_value] : rebuilt) replace_after_in_block(old_value, new_value, last, b);
    torch::jit::WithInsertPoint after(last->next());
    refresh_views(root, child, mutation, rebuilt, view, b);
    root_new = child;
    return root;
  }

  // Views of `old_base` made before the write and read after it are
  // recomputed from `new_base`.
  void refresh_views(Value* old_base, Value* new_base, Node* mutation,
                     const std::vector<std::pair<Value*, Value*>>& rebuilt, Value* written, Block* b) {
    std::vector<torch::jit::Use> uses = old_base->uses();
    for (const auto& use : uses) {
      Node* user = use.user;
      if (user->isAfter(mutation) || user == mutation || use.offset != 0) continue;
      if (user->kind() == c10::prim::ListUnpack || !is_view_op(user)) continue;
      Value* v = user->output();
      if (auto it = tg_.info.find(v); it != tg_.info.end() && it->second.copied) continue;  // a copy keeps its contents
      bool in_chain = v == written;
      for (const auto& r : rebuilt) in_chain = in_chain || r.first == v;
      if (in_chain) continue;
      bool read_later = false;
      for (const auto& u : v->uses()) read_later = read_later || (u.user->isAfter(mutation) && in_block(u.user, b));
      if (!read_later) continue;
      Value* fresh = reapply(user, new_base);
      replace_after_in_block(v, fresh, fresh->node(), b);
      refresh_views(v, fresh, mutation, rebuilt, written, b);
    }
  }

  torch::jit::Graph& graph_;
  TorchGraph& tg_;
  const bool dynamic_;  // the export has dynamic axes
  std::unordered_set<const Node*> warned_;
  std::map<Value*, Value*> origin_;  // a version -> the value it is a version of
  std::map<Block*, std::map<Value*, Value*>> latest_;  // per block: original -> latest version
};

// copy_(dst, expand(y, sizes)) writes y broadcast to dst's shape, as
// copy_(dst, y) does: the tracer records the broadcast of `x[:, k:] = y` as an
// expand to the example's sizes, which would fix them in the graph (torch.onnx
// drops it too). Broadcasting twice gives what broadcasting once does.
void drop_expands_before_copy(Block* b) {
  for (Node* n : b->nodes()) {
    for (Block* sub : n->blocks()) drop_expands_before_copy(sub);
    if (n->kind() != c10::aten::copy_ || n->inputs().size() < 2) continue;
    Node* e = n->input(1)->node();
    if ((e->kind() == c10::aten::expand || e->kind() == c10::aten::expand_as) && n->input(1)->uses().size() == 1)
      n->replaceInput(1, e->input(0));
  }
}

}  // namespace

bool functionalize(TorchGraph& tg, const TorchContext& ctx) {
  drop_expands_before_copy(tg.graph->block());
  Functionalizer f(tg, !ctx.options.dynamic_axes.empty());
  f.run_block(tg.graph->block());
  return f.changed;
}

}  // namespace torch2onnx::torch_side
