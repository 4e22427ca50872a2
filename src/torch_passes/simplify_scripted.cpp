// Scripted models carry what ONNX has no use for: exception branches
// (`if x.dim() != 4: raise ...`), branches on module attributes that are
// constants by now (`if self.training:`), prints and warnings. This pass
// considers exceptions unreachable (ONNX cannot raise), folds constant
// conditions and constant subexpressions, unrolls small loops with a constant
// trip count, and drops prints and warnings.
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "torch_passes/list_elements.h"
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

// `xs = []; xs.append(True); ...` with constants only, and nothing else
// touching the list on the way (a list comprehension over a tuple, which
// TorchScript unrolls: `all([_check_arg_device(x) for x in tensor_args])`):
// the list is a constant.
void fold_constant_appends(torch::jit::Block* b, torch::jit::Graph& g) {
  for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
    torch::jit::Node* n = *it;
    for (torch::jit::Block* sub : n->blocks()) fold_constant_appends(sub, g);
    if (n->kind() != c10::prim::ListConstruct) continue;
    c10::impl::GenericList elems(n->output()->type()->expectRef<c10::ListType>().getElementType());
    bool constant = true;
    for (torch::jit::Value* in : n->inputs()) {
      auto c = torch::jit::toIValue(in);
      if (!c) constant = false;
      else elems.push_back(*c);
    }
    if (!constant) continue;
    std::vector<torch::jit::Node*> chain;
    torch::jit::Value* list = n->output();
    while (list->uses().size() == 1 && list->uses()[0].user->kind() == c10::aten::append &&
           list->uses()[0].offset == 0 && list->uses()[0].user->owningBlock() == b) {
      torch::jit::Node* append = list->uses()[0].user;
      auto c = torch::jit::toIValue(append->input(1));
      if (!c) break;
      elems.push_back(*c);
      chain.push_back(append);
      list = append->output();
    }
    if (chain.empty()) continue;
    bool read_only = true;
    for (const torch::jit::Use& u : list->uses()) read_only = read_only && !writes(u);
    // Earlier lists in the chain are the same object: only the last append's result may be read.
    if (!read_only) continue;
    torch::jit::WithInsertPoint guard(chain.back()->next());
    auto folded = torch::jit::tryInsertConstant(g, c10::IValue(elems));
    if (!folded) continue;
    list->replaceAllUsesWith(*folded);
    for (auto a = chain.rbegin(); a != chain.rend(); ++a) (*a)->destroy();
  }
}

// How many pieces x.split(sizes) gives when the list of sizes is known
// (roi_heads' per-image box counts, each read from a tensor's shape).
std::optional<size_t> split_count(torch::jit::Value* list) {
  torch::jit::Node* s = list->node();
  const bool split = s->kind() == c10::aten::split || s->kind() == c10::aten::split_with_sizes;
  if (!split || s->inputs().size() < 2 || s->input(1)->type()->kind() != c10::TypeKind::ListType) return std::nullopt;
  auto sizes = elements_at(s->input(1), s);
  return sizes ? std::optional(sizes->size()) : std::nullopt;
}

// len(l) and l[i] (a constant i) whose elements are known (elements_at:
// a list built in one block (`images = [img for img in images]` once unrolled,
// the items() of a folded dict)) and nothing writes into the list before the
// read: the length is a constant (so `for i in range(len(l))` unrolls too),
// the element the value stored.
void fold_list_reads(torch::jit::Block* b, torch::jit::Graph& g) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    torch::jit::Node* n = *it;
    ++it;
    for (torch::jit::Block* sub : n->blocks()) fold_list_reads(sub, g);
    const bool len = n->kind() == c10::aten::len && n->inputs().size() == 1;
    const bool get = n->kind() == c10::aten::__getitem__ && n->inputs().size() == 2;
    if ((!len && !get) || n->input(0)->type()->kind() != c10::TypeKind::ListType) continue;
    if (auto pieces = len ? split_count(n->input(0)) : std::nullopt) {
      torch::jit::WithInsertPoint at(n);
      n->output()->replaceAllUsesWith(g.insertConstant(static_cast<int64_t>(*pieces)));
      n->destroy();
      continue;
    }
    auto elems = elements_at(n->input(0), n);
    if (!elems) continue;
    torch::jit::Value* result = nullptr;
    if (len) {
      torch::jit::WithInsertPoint at(n);
      result = g.insertConstant(static_cast<int64_t>(elems->size()));
    } else if (auto i = torch::jit::constant_as<int64_t>(n->input(1))) {
      const int64_t k = *i < 0 ? *i + static_cast<int64_t>(elems->size()) : *i;
      if (k < 0 || k >= static_cast<int64_t>(elems->size())) continue;  // (an IndexError: left to LibTorch)
      result = (*elems)[static_cast<size_t>(k)];
      if (*result->type() != *n->output()->type()) continue;
    }
    if (!result) continue;
    n->output()->replaceAllUsesWith(result);
    n->destroy();
  }
}

// `if x is not None: y = x ...` where x is None by now (a module attribute,
// an argument): the cast of None to its non-optional type only sits in a
// branch that never runs. Its result becomes prim::Uninitialized, which is
// what TorchScript itself puts in unreachable code; LibTorch's constant
// propagation would otherwise run the cast and fold None into a constant of
// the non-optional type, which it cannot read back.
void mark_unreachable_casts(torch::jit::Block* b, torch::jit::Graph& g) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    torch::jit::Node* n = *it;
    ++it;
    for (torch::jit::Block* sub : n->blocks()) mark_unreachable_casts(sub, g);
    if (n->kind() != c10::prim::unchecked_cast || n->input()->node()->kind() != c10::prim::Constant ||
        n->input()->type()->kind() != c10::TypeKind::NoneType)
      continue;
    const c10::TypePtr& to = n->output()->type();
    if (to->kind() == c10::TypeKind::OptionalType || to->kind() == c10::TypeKind::NoneType) continue;
    torch::jit::Node* u = g.create(c10::prim::Uninitialized, {}, 1);
    u->output()->setType(to);
    u->insertBefore(n);
    n->output()->replaceAllUsesWith(u->output());
    n->destroy();
  }
}

// `isinstance(x, T)` where x's static type decides it (torchvision's
// `if not isinstance(rois, torch.Tensor)` on a tensor): a constant. Values
// whose type may hold several kinds (Optional, Union, Any) stay.
void fold_isinstance(torch::jit::Block* b, torch::jit::Graph& g) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    torch::jit::Node* n = *it;
    ++it;
    for (torch::jit::Block* sub : n->blocks()) fold_isinstance(sub, g);
    if (n->kind() != c10::prim::isinstance || !n->hasAttribute(c10::attr::types)) continue;
    const c10::TypePtr& t = n->input()->type();
    const auto k = t->kind();
    if (k == c10::TypeKind::OptionalType || k == c10::TypeKind::UnionType || k == c10::TypeKind::AnyType ||
        k == c10::TypeKind::NumberType)
      continue;
    bool is = false, undecided = false;
    for (const c10::TypePtr& candidate : n->tys(c10::attr::types)) {
      is = is || t->isSubtypeOf(*candidate);
      undecided = undecided || candidate->isSubtypeOf(*t);  // (a narrower type: the value may or may not be one)
    }
    if (!is && undecided) continue;
    torch::jit::WithInsertPoint at(n);
    n->output()->replaceAllUsesWith(g.insertConstant(is));
    n->destroy();
  }
}

bool certainly_raises(torch::jit::Block* b) {
  for (torch::jit::Node* n : b->nodes())
    if (n->kind() == c10::prim::RaiseException) return true;
  return false;
}

// Reads only what a tensor is (its sizes, rank, dtype, device), not its values.
bool reads_metadata(const torch::jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::size", "aten::sym_size", "aten::dim", "aten::len", "aten::numel", "aten::is_floating_point",
      "prim::dtype", "prim::device", "prim::layout", "prim::is_cuda"};
  return kinds.count(n->kind().toQualString()) != 0;
}

// The graph inputs whose values `v` is computed from (not those it reads only
// the sizes of: `if x.size(0) != 3: raise` checks what torch.onnx drops).
void inputs_read(torch::jit::Value* v, const torch::jit::Graph& g, std::unordered_set<torch::jit::Value*>& seen,
                 std::unordered_set<const torch::jit::Value*>& out) {
  if (!seen.insert(v).second) return;
  if (v->node() == g.param_node()) {
    out.insert(v);
    return;
  }
  if (reads_metadata(v->node())) return;
  for (torch::jit::Value* in : v->node()->inputs()) inputs_read(in, g, seen, out);
}

// An If whose one branch raises: the condition takes the other value, here
// and wherever else it is read (an exported model never raises). LibTorch's
// EliminateExceptions does this too, but it loops forever when two Ifs test
// the same condition (the second replaces the constant it put in with
// itself: scripted `F.embedding_bag` with `per_sample_weights`).
void eliminate_exceptions(torch::jit::Block* b, torch::jit::Value* yes, torch::jit::Value* no,
                          std::vector<torch::jit::Value*>& checked) {
  for (torch::jit::Node* n : b->nodes()) {
    if (n->kind() == c10::prim::If && n->input()->node()->kind() != c10::prim::Constant) {
      torch::jit::Value* cond = n->input();
      if (certainly_raises(n->blocks()[0]) || certainly_raises(n->blocks()[1])) checked.push_back(cond);
      if (certainly_raises(n->blocks()[0])) cond->replaceAllUsesWith(no);
      else if (certainly_raises(n->blocks()[1])) cond->replaceAllUsesWith(yes);
    }
    for (torch::jit::Block* sub : n->blocks()) eliminate_exceptions(sub, yes, no, checked);
  }
}

// (A user input the removed checks read stays a graph input, as torch.onnx
// keeps it: `if float(t) < 0: raise ...` reads t; the caller passes it.)
void eliminate_exceptions(TorchGraph& tg) {
  torch::jit::Graph& g = *tg.graph;
  torch::jit::WithInsertPoint at_start(g.block()->nodes().front());
  torch::jit::Value* yes = g.insertConstant(true);
  torch::jit::Value* no = g.insertConstant(false);
  std::vector<torch::jit::Value*> checked;
  eliminate_exceptions(g.block(), yes, no, checked);
  std::unordered_set<torch::jit::Value*> seen;
  std::unordered_set<const torch::jit::Value*> read;
  for (torch::jit::Value* cond : checked) inputs_read(cond, g, seen, read);
  for (size_t i = 0; i < tg.user_inputs.size() && i < tg.user_input_kept.size(); ++i)
    if (read.count(tg.user_inputs[i])) tg.user_input_kept[i] = true;
}

size_t count_nodes(torch::jit::Block* b) {
  size_t n = 0;
  for (torch::jit::Node* node : b->nodes()) {
    ++n;
    for (torch::jit::Block* sub : node->blocks()) n += count_nodes(sub);
  }
  return n;
}

}  // namespace

bool simplify_scripted(TorchGraph& tg, const TorchContext&) {
  drop_side_effects_without_data(tg.graph->block());
  const size_t before = count_nodes(tg.graph->block());
  // (also once the loops are unrolled: the reads of the lists they built)
  fold_list_reads(tg.graph->block(), *tg.graph);
  if (!has_control_flow(tg.graph->block()))  // traced graphs: nothing more to do
    return count_nodes(tg.graph->block()) != before;
  fold_constant_appends(tg.graph->block(), *tg.graph);
  fold_list_reads(tg.graph->block(), *tg.graph);
  mark_unreachable_casts(tg.graph->block(), *tg.graph);
  fold_isinstance(tg.graph->block(), *tg.graph);
  eliminate_exceptions(tg);
  torch::jit::ConstantPropagation(tg.graph, /*ignore_custom_classes=*/true);
  // `for i in range(3)` over sizes and tuples (Swin3D's window sizes): small
  // loops with a constant trip count become straight code, whose indices are
  // constants then.
  if (torch::jit::UnrollConstantLoops(tg.graph)) {
    fold_constant_appends(tg.graph->block(), *tg.graph);  // the unrolled appends
    torch::jit::ConstantPropagation(tg.graph, true);
  }
  torch::jit::LowerSimpleTuples(tg.graph);
  torch::jit::EliminateDeadCode(tg.graph);
  return count_nodes(tg.graph->block()) != before;
}

}  // namespace torch2onnx::torch_side
