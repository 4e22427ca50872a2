// Static values: x.size(d) of a dimension that is not dynamic, and anything
// computed only from such values and constants (NumToTensor, Int, integer
// arithmetic, small index tensors), is the same for every valid input. Those
// values become constants (taken from the example run), so symbolics see
// constants where ONNX wants attributes and the exported graph carries no
// shape arithmetic for static axes. Dims named in dynamic_axes, and values
// read from tensor data, stay computations.
#include <torch/csrc/jit/ir/constants.h>

#include <set>
#include <cstdlib>
#include <iostream>
#include <unordered_set>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// Operators whose output shape depends on the input values, not only shapes.
// aten::index does with a bool mask among its indices; integer indices give
// their own shape (Swin V2's relative position bias table).
bool data_dependent_shape(const Node* n, const TorchGraph& tg) {
  static const std::unordered_set<std::string> ops = {
      "aten::nonzero", "aten::nonzero_numpy", "aten::unique", "aten::_unique", "aten::_unique2",
      "aten::unique_consecutive", "aten::unique_dim", "aten::masked_select", "aten::repeat_interleave",
      "aten::bincount", "aten::histc", "torchvision::nms", "aten::argwhere", "aten::nonzero_static"};
  if (n->kind() == c10::aten::where && n->inputs().size() == 1) return true;  // where(condition): nonzero
  if (n->kind() == c10::aten::index && n->inputs().size() == 2) {
    const Node* indices = n->input(1)->node();
    if (indices->kind() != c10::prim::ListConstruct) return true;
    for (const Value* i : indices->inputs()) {
      if (i->type()->kind() == c10::TypeKind::NoneType) continue;
      auto it = tg.info.find(i);
      if (it == tg.info.end() || it->second.kind != ExampleInfo::Kind::Tensor ||
          (it->second.dtype != at::kLong && it->second.dtype != at::kInt))
        return true;
    }
    return false;
  }
  return n->kind() == c10::aten::index || ops.count(n->kind().toQualString()) != 0;
}

// Tensors, and containers of tensors (Tensor[], tuples, optionals), whose
// staticness is about shapes rather than values.
bool carries_tensors(const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return true;
    case c10::TypeKind::ListType: return carries_tensors(t->expectRef<c10::ListType>().getElementType());
    case c10::TypeKind::OptionalType: return carries_tensors(t->expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::TupleType:
      for (const auto& e : t->expectRef<c10::TupleType>().elements())
        if (carries_tensors(e)) return true;
      return false;
    default: return false;
  }
}

bool is_tensor(const Value* v) { return carries_tensors(v->type()); }

// Whether some use of v may write to it (aten::append, _set_item, ...).
bool mutated(const Value* v) {
  for (const torch::jit::Use& u : v->uses()) {
    const c10::FunctionSchema* schema = u.user->maybeSchema();
    if (!schema) {
      if (u.user->kind() == c10::prim::ListConstruct || u.user->kind() == c10::prim::TupleConstruct ||
          u.user->kind() == c10::prim::ListUnpack || u.user->kind() == c10::prim::TupleUnpack ||
          u.user->kind() == c10::prim::Return)
        continue;
      return true;  // unknown user: assume the worst
    }
    if (u.offset < schema->arguments().size()) {
      const auto* alias = schema->arguments()[u.offset].alias_info();
      if (alias && alias->isWrite()) return true;
    }
  }
  return false;
}

// Whether nodes a and b sit in different branches of one If (never both run).
bool exclusive(const Node* a, const Node* b) {
  for (const torch::jit::Block* blk = a->owningBlock(); blk->owningNode(); blk = blk->owningNode()->owningBlock()) {
    const Node* branch_point = blk->owningNode();
    if (branch_point->kind() != c10::prim::If) continue;
    for (const torch::jit::Block* other = b->owningBlock(); other->owningNode();
         other = other->owningNode()->owningBlock())
      if (other->owningNode() == branch_point) return other != blk;
  }
  return false;
}

// A use by an operator that only reads the list (l[i], len(l), sum(l));
// containers built of it (prim::ListConstruct, no schema) keep it.
bool plain_read(const torch::jit::Use& u) {
  const c10::FunctionSchema* schema = u.user->maybeSchema();
  if (!schema || u.offset >= schema->arguments().size()) return false;
  const auto* alias = schema->arguments()[u.offset].alias_info();
  return !alias || !alias->isWrite();
}

// A list update (l[i] = v, l.append(v)) after which nothing reads the old
// list: functionalize leaves such updates (later reads read its result),
// each a pure function of its inputs. Other uses of the old list must run
// before it and keep no alias, or sit in the other branch of an If
// (`if size[i] <= window[i]: window[i] = size[i]`, whose else returns it).
bool functional_list_update(const Node* n) {
  const auto k = n->kind();
  if ((k != c10::aten::_set_item && k != c10::aten::append) || n->inputs().empty()) return false;
  const Value* list = n->input(0);
  if (list->type()->kind() != c10::TypeKind::ListType) return false;
  if (list->node()->kind() == c10::prim::Constant) return true;  // updates copy it (example run, conversion)
  for (const torch::jit::Use& u : list->uses()) {
    if (u.user == n) continue;
    if (exclusive(u.user, n)) continue;
    if (!plain_read(u) || !u.user->isBefore(n)) return false;
  }
  return true;
}

// Values that are the same for every input of the export: a tensor's rank
// and dtype, whether two values are the same object (as in the example:
// ONNX inputs are never aliases), and the length of a list built here that
// nothing appends to.
bool fixed_for_export(const Node* n) {
  const std::string kind = n->kind().toQualString();
  if (kind == "aten::dim" || kind == "prim::dtype" || kind == "prim::is_quantized") return true;
  if (kind == "aten::__is__" || kind == "aten::__isnot__") {
    // ... except `y is None` on an Optional that an If or a Loop sets on some
    // paths only: the data decides (`y = None; if c: y = x`; in a loop body,
    // the carried value), and on a scripted forward()'s Optional[Tensor]
    // parameter, an optional graph input the caller may leave unfed.
    for (const Value* v : n->inputs()) {
      if (v->type()->kind() != c10::TypeKind::OptionalType) continue;
      const Node* p = v->node();
      if (p->kind() == c10::prim::If || p->kind() == c10::prim::Loop) return false;
      if (p->kind() == c10::prim::Param) return false;  // a loop body's input, or an optional graph input
    }
    return true;
  }
  if (kind == "aten::len" && n->inputs().size() == 1 && n->input(0)->type()->kind() == c10::TypeKind::ListType) {
    const Value* list = n->input(0);
    return list->node()->kind() == c10::prim::ListConstruct && !mutated(list);
  }
  return false;
}

class Folder {
 public:
  Folder(TorchGraph& tg, const ExportOptions& options) : tg_(tg) {
    for (size_t i = 0; i < tg.user_inputs.size(); ++i) {
      std::string name = i < options.input_names.size() ? options.input_names[i] : tg.user_input_names[i];
      auto it = options.dynamic_axes.find(name);
      std::set<int64_t> axes;
      if (it != options.dynamic_axes.end()) {
        int64_t rank = static_cast<int64_t>(tg.example_inputs[i].dim());
        for (const auto& a : it->second) axes.insert(a.axis < 0 ? a.axis + rank : a.axis);
      }
      input_dynamic_axes_[tg.user_inputs[i]] = axes;
      if (!axes.empty()) shape_static_.erase(tg.user_inputs[i]);
      else shape_static_.insert(tg.user_inputs[i]);
    }
    for (const Param& p : tg.params) {
      shape_static_.insert(p.value);
      value_static_.insert(p.value);
      from_params_.insert(p.value);
    }
  }

  void run() {
    if (std::getenv("T2O_DEBUG_STATIC")) std::cerr << "[t2o] fold_static_values\n";
    analyze(tg_.graph->block(), true);
    // (what the symbolics may build into the graph as constants: SymbolicContext::static_dim)
    for (const Value* v : shape_static_)
      if (auto it = tg_.info.find(v); it != tg_.info.end() && it->second.kind == ExampleInfo::Kind::Tensor)
        it->second.shape_static = true;
    fold_block(tg_.graph->block());
  }

 private:
  bool value_static(const Value* v) const { return value_static_.count(v) != 0; }
  bool shape_static(const Value* v) const { return shape_static_.count(v) || value_static(v); }

  // The block an If takes for every input: its condition is static.
  torch::jit::Block* static_branch(Node* n) const {
    if (n->kind() != c10::prim::If || !value_static(n->input())) return nullptr;
    auto it = tg_.info.find(n->input());
    if (it == tg_.info.end() || !it->second.scalar.isBool()) return nullptr;
    return n->blocks()[it->second.scalar.toBool() ? 0 : 1];
  }

  void analyze(torch::jit::Block* b, bool top) {
    for (Node* n : b->nodes()) {
      // An If on a static condition is its taken branch: what that computes
      // is static as at the top level (Swin's shifted windows chain twelve of
      // those, each deciding the shapes the next one sees).
      if (torch::jit::Block* taken = top ? static_branch(n) : nullptr) {
        for (torch::jit::Block* sub : n->blocks()) analyze(sub, sub == taken);
        if (std::getenv("T2O_DEBUG_STATIC"))
          for (size_t i = 0; i < n->outputs().size(); ++i)
            std::cerr << "[t2o] static branch -> %" << n->output(i)->debugName() << ": value "
                      << value_static(taken->outputs()[i]) << " shape " << shape_static(taken->outputs()[i]) << "\n";
        for (size_t i = 0; i < n->outputs().size(); ++i) {
          const Value* r = taken->outputs()[i];
          Value* o = n->output(i);
          if (value_static(r)) value_static_.insert(o);
          if (shape_static(r)) shape_static_.insert(o);
          if (from_params_.count(r)) from_params_.insert(o);
        }
        continue;
      }
      if (n->kind() == c10::prim::Loop)  // values carried from one iteration to the next
        for (torch::jit::Block* sub : n->blocks())
          for (size_t i = 1; i < sub->inputs().size(); ++i) carried_.insert(sub->inputs()[i]);
      for (torch::jit::Block* sub : n->blocks()) analyze(sub, false);
      if (!top) {
        bool carried = false;
        for (const Value* in : n->inputs()) carried = carried || carried_.count(in);
        for (const torch::jit::Block* sub : n->blocks())
          for (const Value* out : sub->outputs()) carried = carried || carried_.count(out);
        if (carried) {
          for (const Value* o : n->outputs()) carried_.insert(o);
        } else if ((n->kind() == c10::aten::dim || n->kind() == c10::prim::dtype) && n->inputs().size() == 1) {
          // The rank and dtype of a tensor in a branch or a loop body that
          // depends on no loop-carried value: the same at every iteration,
          // for every input (`dim = boxes.dim()` on a loop's element).
          value_static_.insert(n->output());
        }
        continue;
      }
      if (!n->blocks().empty()) continue;  // control flow: dynamic
      if (n->kind() == c10::prim::Constant) {
        for (Value* o : n->outputs()) {
          value_static_.insert(o);
          // quantized weights (decompose_quantized) stay integers, as parameters stay parameters
          if (auto v = torch::jit::toIValue(o); v && v->isTensor() && v->toTensor().is_quantized()) from_params_.insert(o);
        }
        continue;
      }
      if (n->kind() == c10::aten::size) {
        Value* x = n->input(0);
        bool st = false;
        auto it = input_dynamic_axes_.find(x);
        if (it != input_dynamic_axes_.end() && n->inputs().size() == 2) {
          auto d = torch::jit::toIValue(n->input(1));
          if (d && d->isInt()) {
            int64_t rank = static_cast<int64_t>(tg_.info[x].sizes.size());
            int64_t dim = d->toInt() < 0 ? d->toInt() + rank : d->toInt();
            st = it->second.count(dim) == 0;
          }
        } else {
          st = shape_static(x) && (n->inputs().size() == 1 || value_static(n->input(1)));
        }
        if (st) value_static_.insert(n->output());
        continue;
      }
      if (fixed_for_export(n)) {
        value_static_.insert(n->output());
        continue;
      }
      // len() of a tensor of static shape (its size(0)), or of a list of
      // tensors whose shapes are static (x.split(sizes), x.unbind(0)): how
      // many there are is too. (Lists a loop appends to are a Loop's
      // outputs by now: not static.)
      if (n->kind() == c10::aten::len && n->inputs().size() == 1 && is_tensor(n->input(0)) &&
          shape_static(n->input(0))) {
        value_static_.insert(n->output());
        continue;
      }
      bool inputs_values_static = true, inputs_shapes_static = true;
      for (const Value* in : n->inputs()) {
        if (from_params_.count(in))
          for (Value* o : n->outputs()) from_params_.insert(o);
        inputs_values_static = inputs_values_static && value_static(in);
        if (is_tensor(in))
          inputs_shapes_static = inputs_shapes_static && shape_static(in);
        else
          inputs_shapes_static = inputs_shapes_static && value_static(in);
      }
      const bool pure = !n->isNondeterministic() && !n->hasSideEffects() && !n->kind().is_prim() ? true
                        : n->kind() == c10::prim::NumToTensor || n->kind() == c10::prim::ListConstruct ||
                              n->kind() == c10::prim::ListUnpack || n->kind() == c10::prim::TupleConstruct ||
                              n->kind() == c10::prim::TupleUnpack || n->kind() == c10::prim::TupleIndex ||
                              n->kind() == c10::prim::max || n->kind() == c10::prim::min ||
                              n->kind() == c10::prim::abs;
      const bool mutates = n->maybeSchema() && n->maybeSchema()->is_mutable() && !functional_list_update(n);
      for (Value* o : n->outputs()) {
        if (pure && !mutates && inputs_values_static) value_static_.insert(o);
        if (is_tensor(o) && inputs_shapes_static && !data_dependent_shape(n, tg_)) shape_static_.insert(o);
      }
      if (std::getenv("T2O_DEBUG_STATIC") && !inputs_shapes_static)
        std::cerr << "[t2o] not static: " << n->kind().toQualString() << " -> %" << n->output(0)->debugName() << "\n";
    }
  }

  void fold_block(torch::jit::Block* b) {
    for (Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) fold_block(sub);  // (only what analyze found static there)
      fold(n);
    }
  }

  // Replaces static values that are numbers, number lists or small tensors by constants.
  void fold(Node* n) {
    if (n->kind() == c10::prim::Constant || n->kind() == c10::prim::ListConstruct ||
        n->kind() == c10::prim::TupleConstruct)
      return;
    for (Value* o : n->outputs()) {
      if (!value_static(o) || !o->hasUses()) continue;
      auto it = tg_.info.find(o);
      if (it == tg_.info.end()) continue;
      const ExampleInfo& info = it->second;
      c10::IValue v;
      if (info.kind == ExampleInfo::Kind::Int || info.kind == ExampleInfo::Kind::Float ||
          info.kind == ExampleInfo::Kind::Bool) {
        v = info.scalar;
      } else if (info.kind == ExampleInfo::Kind::Tensor && info.small_value.defined()) {
        // Only tensors derived from sizes and constants: parameters stay parameters.
        if (from_params_.count(o)) continue;
        v = info.small_value;
      } else if (info.kind == ExampleInfo::Kind::List && o->type()->kind() == c10::TypeKind::ListType &&
                 o->type()->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::IntType) {
        std::vector<int64_t> ints;
        for (const auto& e : info.elements) ints.push_back(e.scalar.toInt());
        v = c10::IValue(ints);
      } else {
        continue;
      }
      torch::jit::WithInsertPoint guard(n);
      auto c = torch::jit::tryInsertConstant(*tg_.graph, v);
      if (!c) continue;
      tg_.info[*c] = info;
      o->replaceAllUsesWith(*c);
    }
  }

  TorchGraph& tg_;
  std::unordered_map<const Value*, std::set<int64_t>> input_dynamic_axes_;
  std::unordered_set<const Value*> value_static_, shape_static_;
  std::unordered_set<const Value*> from_params_;  // values computed from parameters
  std::unordered_set<const Value*> carried_;      // in loop bodies: values that depend on loop-carried ones
};

}  // namespace

void fold_static_values(TorchGraph& tg, const TorchContext& ctx) { Folder(tg, ctx.options).run(); }

}  // namespace torch2onnx::torch_side
