// In-place operators (relu_, add_, x += y, scatter_, index_put_, copy_ ...)
// write into one of their inputs. ONNX values are immutable, so:
//
// 1. Every later read of the mutated value reads the op's result instead
//    (the op itself converts like its out-of-place form).
// 2. When the mutated value is a view of another tensor (x[:, 1:3] += y,
//    x[i] = v, x.t().add_(1) ...), the base is rebuilt from the new view
//    contents, up the chain of views: slice -> slice_scatter, select ->
//    select_scatter, view/reshape -> reshape back, transpose/permute ->
//    the inverse permutation, squeeze/unsqueeze -> the inverse, ... and every
//    later read of the base (and of other views of it) reads the rebuilt one.
#include <torch/csrc/jit/ir/constants.h>

#include <unordered_set>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

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

// The view's base (input 0), or the tensor a Tensor[] element was split from.
struct ViewStep {
  Node* node;          // the view op (or ListUnpack for split/chunk/unbind pieces)
  Value* base;         // what it views
  size_t list_index;   // for ListUnpack pieces: which piece
};

std::optional<ViewStep> view_of(Value* v) {
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
  if (!is_view_op(n)) return std::nullopt;
  return ViewStep{n, n->input(0), 0};
}

class Functionalizer {
 public:
  explicit Functionalizer(TorchGraph& tg) : graph_(*tg.graph), tg_(tg) {}

  void run_block(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) {
      Node* n = *it;
      for (torch::jit::Block* b : n->blocks()) run_block(b);
      if (n->kind().is_prim() || n->outputs().size() != 1) continue;
      int k = mutated_argument(n);
      if (k < 0) continue;
      Value* target = n->input(static_cast<size_t>(k));
      if (!target->type()->cast<c10::TensorType>()) continue;
      Value* result = n->output();
      // Later reads of the mutated value read the result.
      target->replaceAllUsesAfterNodeWith(n, result);
      // And if it was a view, its base changes too.
      if (view_of(target)) {
        write_back(n, target, result);
        changed_ = true;
      }
    }
  }

 private:
  Value* constant(const c10::IValue& v) { return graph_.insertConstant(v); }

  Value* call(const char* op, std::vector<Value*> inputs) {
    Node* n = graph_.create(c10::Symbol::fromQualString(op), inputs, 1);
    graph_.insertNode(n);
    n->output()->setType(c10::TensorType::get());
    return n->output();
  }

  static c10::IValue const_input(const Node* n, size_t i) {
    auto v = torch::jit::toIValue(n->input(i));
    if (!v)
      throw Error(Error::Kind::Conversion, std::string("writing into the result of ") + n->kind().toQualString() +
                                               " whose arguments are computed at run time is not supported");
    return *v;
  }

  // The new contents of `step.base` given new contents `child` of the view.
  Value* rebuild(const ViewStep& step, Value* child) {
    Node* v = step.node;
    Value* base = step.base;
    const std::string k = v->kind().toQualString();
    if (v->kind() == c10::prim::ListUnpack) {
      Node* split = v->input()->node();
      const std::string sk = split->kind().toQualString();
      const auto& info = tg_.info.at(base);
      auto piece_info = tg_.info.find(v->output(step.list_index));
      if (piece_info == tg_.info.end()) throw Error(Error::Kind::Internal, "no shape for a split piece");
      int64_t dim = const_input(split, sk == "aten::unbind" ? 1 : 2).toInt();
      if (dim < 0) dim += static_cast<int64_t>(info.sizes.size());
      if (sk == "aten::unbind")
        return call("aten::select_scatter", {base, child, constant(dim), constant(int64_t(step.list_index))});
      int64_t start = 0;
      for (size_t i = 0; i < step.list_index; ++i) start += tg_.info.at(v->output(i)).sizes.at(static_cast<size_t>(dim));
      const int64_t len = piece_info->second.sizes.at(static_cast<size_t>(dim));
      return call("aten::slice_scatter",
                  {base, child, constant(dim), constant(start), constant(start + len), constant(int64_t{1})});
    }
    if (k == "aten::slice")
      return call("aten::slice_scatter", {base, child, v->input(1), v->input(2), v->input(3), v->input(4)});
    if (k == "aten::narrow") {
      Value* end = call("aten::add", {v->input(2), v->input(3)});
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
    throw Error(Error::Kind::Conversion,
                "the model writes into the result of " + k + " (a view of its input); exporting that is not supported");
  }

  // Re-applies view `node` (with its original arguments) to a new base.
  Value* reapply(const ViewStep& step, Value* new_base) {
    Node* v = step.node;
    if (v->kind() == c10::prim::ListUnpack) {
      Node* split = v->input()->node();
      std::vector<Value*> ins(split->inputs().begin(), split->inputs().end());
      ins[0] = new_base;
      Node* s2 = graph_.insertNode(graph_.create(split->kind(), ins, 1));
      s2->output()->setType(split->output()->type());
      Node* u = graph_.insertNode(graph_.createListUnpack(s2->output(), v->outputs().size()));
      return u->output(step.list_index);
    }
    std::vector<Value*> ins(v->inputs().begin(), v->inputs().end());
    ins[0] = new_base;
    Node* c = graph_.insertNode(graph_.create(v->kind(), ins, 1));
    c->output()->setType(v->output()->type());
    return c->output();
  }

  void write_back(Node* mutation, Value* view, Value* new_view) {
    torch::jit::WithInsertPoint guard(mutation->next());
    // Up the chain of views to the root.
    Value* child = new_view;
    Value* current = view;
    Value* root = view;
    std::vector<std::pair<Value*, Value*>> rebuilt;  // (old value, new value) along the chain
    while (auto step = view_of(current)) {
      Value* new_base = rebuild(*step, child);
      rebuilt.emplace_back(step->base, new_base);
      child = new_base;
      current = step->base;
      root = current;
    }
    Node* last = child->node();
    // Later reads of the root and of the chain's intermediate views see the new contents.
    for (auto& [old_value, new_value] : rebuilt) old_value->replaceAllUsesAfterNodeWith(last, new_value);
    // Other views of the root, made before the write and read after it, are recomputed.
    torch::jit::WithInsertPoint after(last->next());
    refresh_views(root, child, mutation, rebuilt);
  }

  void refresh_views(Value* old_base, Value* new_base, Node* mutation,
                     const std::vector<std::pair<Value*, Value*>>& rebuilt) {
    std::vector<torch::jit::Use> uses = old_base->uses();
    for (const auto& use : uses) {
      Node* user = use.user;
      if (user->isAfter(mutation) || user == mutation) continue;
      std::vector<Value*> views;
      if (user->kind() != c10::prim::ListUnpack && is_view_op(user) && use.offset == 0) views.push_back(user->output());
      for (Value* v : views) {
        bool in_chain = false;
        for (const auto& r : rebuilt) in_chain = in_chain || r.first == v;
        if (in_chain || v == mutation->input(static_cast<size_t>(mutated_argument(mutation)))) continue;
        bool used_later = false;
        for (const auto& u : v->uses()) used_later = used_later || u.user->isAfter(mutation);
        if (!used_later) continue;
        Value* fresh = reapply(ViewStep{user, new_base, 0}, new_base);
        v->replaceAllUsesAfterNodeWith(fresh->node(), fresh);
        refresh_views(v, fresh, mutation, rebuilt);
      }
    }
  }

  torch::jit::Graph& graph_;
  TorchGraph& tg_;

 public:
  bool changed_ = false;
};

}  // namespace

bool functionalize(TorchGraph& tg, const TorchContext&) {
  Functionalizer f(tg);
  f.run_block(tg.graph->block());
  return f.changed_;
}

}  // namespace torch2onnx::torch_side
