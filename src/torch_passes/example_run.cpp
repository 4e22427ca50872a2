// Runs the graph once on the example inputs, node by node, and records what
// each value was: a tensor's dtype and sizes, a number's value, a list's
// elements. Symbolic functions read this to pick dtypes and ranks.
//
// The run is on the meta device first: large tensors carry only dtype and
// shape, so nothing is computed (a ResNet-50 forward costs milliseconds, not
// a second). Small tensors (index arithmetic, sizes, masks) are computed for
// real, so their values stay known. Should any operator fail on meta (no meta
// kernel, or it needs data: nonzero, item, a data-dependent branch), the
// whole graph runs again for real on the CPU; PyTorch's own error messages
// for bad example inputs come from that run. Tensors are released after
// their last use.
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cstdlib>
#include <iostream>
#include <unordered_map>
#include <unordered_set>

#include "torch_passes/meta_shapes.h"
#include "torch_passes/origin.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

ExampleInfo info_of(const c10::IValue& v) {
  ExampleInfo info;
  if (v.isTensor()) {
    info.kind = ExampleInfo::Kind::Tensor;
    const at::Tensor& t = v.toTensor();
    if (t.defined()) {
      info.dtype = t.scalar_type();
      info.sizes = t.sizes().vec();
      if (t.numel() <= 64 && !t.is_quantized() && !t.is_meta()) info.small_value = t.detach().clone();
      if (t.is_quantized() && t.qscheme() == at::kPerTensorAffine) info.qparams = {{t.q_scale(), t.q_zero_point()}};
    }
  } else if (v.isInt()) {
    info.kind = ExampleInfo::Kind::Int;
    info.scalar = v;
  } else if (v.isDouble()) {
    info.kind = ExampleInfo::Kind::Float;
    info.scalar = v;
  } else if (v.isBool()) {
    info.kind = ExampleInfo::Kind::Bool;
    info.scalar = v;
  } else if (v.isNone()) {
    info.kind = ExampleInfo::Kind::None;
  } else if (v.isString()) {
    info.kind = ExampleInfo::Kind::String;
    info.scalar = v;
  } else if (v.isDevice()) {
    info.kind = ExampleInfo::Kind::Device;
    info.scalar = v;
  } else if (v.isList()) {
    info.kind = ExampleInfo::Kind::List;
    for (const auto& e : v.toListRef()) info.elements.push_back(info_of(e));
  } else if (v.isTuple()) {
    info.kind = ExampleInfo::Kind::Tuple;
    for (const auto& e : v.toTupleRef().elements()) info.elements.push_back(info_of(e));
  } else if (v.isGenericDict()) {
    info.kind = ExampleInfo::Kind::List;  // values, in insertion order
    for (const auto& kv : v.toGenericDict()) info.elements.push_back(info_of(kv.value()));
  }
  return info;
}

// Tensors up to this many elements are computed for real in a meta run.
constexpr int64_t kSmallTensor = 4096;

// Thrown in a meta run when an operator cannot run there.
struct NeedsRealRun {};

bool makes_quantized(const Node* n) {
  const auto k = n->kind();
  return k == c10::aten::quantize_per_tensor || k == c10::aten::quantize_per_channel ||
         k == c10::aten::_make_per_tensor_quantized_tensor || k == c10::aten::_make_per_channel_quantized_tensor ||
         k == c10::aten::quantize_per_tensor_dynamic;
}

class Runner {
 public:
  Runner(TorchGraph& tg, OriginTable& origins, bool meta) : tg_(tg), origins_(origins), meta_(meta) {}

  // The operator the run stopped at, where, and PyTorch's message.
  std::string stopped_at;

  void run() {
    auto& graph = *tg_.graph;
    std::unordered_set<const Value*> mutated;
    collect_mutated(graph.block(), mutated);
    for (size_t i = 0; i < tg_.user_inputs.size(); ++i) {
      // In-place ops on an input must not change the example itself (it is run again).
      const at::Tensor& t = tg_.example_inputs[i];
      set(tg_.user_inputs[i], shrink(mutated.count(tg_.user_inputs[i]) ? t.clone() : t));
    }
    for (const Param& p : tg_.params) {
      if (meta_)
        set(p.value, p.tensor.to(at::kMeta));
      else
        set(p.value, mutated.count(p.value) ? p.tensor.detach().clone() : p.tensor);
    }

    // Release each top-level value after the last top-level node that reads it.
    std::unordered_map<const Value*, const Node*> last_use;
    for (Node* n : graph.nodes()) note_uses(n, n, last_use);
    std::unordered_map<const Node*, std::vector<const Value*>> release_after;
    for (const auto& [v, n] : last_use) release_after[n].push_back(v);

    for (Node* n : graph.nodes()) {
      run_node(n);
      auto it = release_after.find(n);
      if (it != release_after.end())
        for (const Value* v : it->second) env_.erase(v);
    }
  }

 private:
  // Values written in place, and the bases of written views (`data[i] = v`
  // is a copy_ into select(data, 0, i): data is written).
  static void collect_mutated(Block* b, std::unordered_set<const Value*>& out) {
    std::vector<Node*> views;
    collect_writes(b, out, views);
    for (bool grew = true; grew;) {
      grew = false;
      for (Node* n : views) {
        bool written = false;
        for (const Value* o : n->outputs()) written = written || out.count(o);
        if (!written) continue;
        const c10::FunctionSchema& s = n->schema();
        for (size_t i = 0; i < s.arguments().size() && i < n->inputs().size(); ++i)
          if (s.arguments()[i].alias_info() && out.insert(n->input(i)).second) grew = true;
      }
    }
  }

  static void collect_writes(Block* b, std::unordered_set<const Value*>& out, std::vector<Node*>& views) {
    for (Node* n : b->nodes()) {
      for (Block* sub : n->blocks()) collect_writes(sub, out, views);
      const c10::FunctionSchema* s = n->maybeSchema();
      if (!s) continue;
      bool view = false;
      for (const auto& r : s->returns()) view = view || (r.alias_info() && !r.alias_info()->isWrite());
      if (view) views.push_back(n);
      if (!s->is_mutable()) continue;
      for (size_t i = 0; i < s->arguments().size() && i < n->inputs().size(); ++i) {
        const auto* a = s->arguments()[i].alias_info();
        if (a && a->isWrite()) out.insert(n->input(i));
      }
    }
  }

  static void note_uses(const Node* top, const Node* n, std::unordered_map<const Value*, const Node*>& last) {
    for (const Value* in : n->inputs()) last[in] = top;
    for (const Block* b : n->blocks()) {
      for (const Node* inner : b->nodes()) note_uses(top, inner, last);
      for (const Value* out : b->outputs()) last[out] = top;
    }
  }

  void set(const Value* v, c10::IValue iv) {
    ExampleInfo info = info_of(iv);
    // A value computed from random numbers has no "known" value (and the
    // meta/real comparison must not compare it).
    if (random_.count(v)) forget_values(info);
    tg_.info[v] = std::move(info);
    env_[v] = std::move(iv);
  }

  static void forget_values(ExampleInfo& info) {
    info.small_value = at::Tensor();
    for (auto& e : info.elements) forget_values(e);
  }

  void note_random(const Node* n) {
    // Random numbers, and uninitialized memory (empty*), have no known value.
    static const std::unordered_set<std::string> arbitrary = {"aten::empty", "aten::empty_like", "aten::new_empty",
                                                               "aten::empty_strided", "aten::new_empty_strided"};
    bool random = n->isNondeterministic() || arbitrary.count(n->kind().toQualString()) != 0;
    for (const Value* in : n->inputs()) random = random || random_.count(in);
    if (random)
      for (const Value* o : n->outputs()) random_.insert(o);
  }

  c10::IValue get(const Value* v) {
    auto it = env_.find(v);
    if (it == env_.end())
      throw Error(Error::Kind::Internal, "example run: value %" + v->debugName() + " was not computed");
    return speculating_ ? speculative(it->second) : it->second;
  }

  // A speculated branch reads meta copies of real tensors and of lists
  // holding them, one copy per object, so that identity (`key is value`)
  // and in-place list updates (`append`) behave as on the real values.
  c10::IValue speculative(const c10::IValue& v) {
    if (!v.isPtrType() || !needs_meta(v)) return to_meta(v);
    const void* key = v.internalToPointer();
    auto it = meta_copies_.find(key);
    if (it == meta_copies_.end()) it = meta_copies_.emplace(key, std::make_pair(v, to_meta(v))).first;
    return it->second.second;
  }

  void run_block(Block* b, const std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs) {
    for (size_t i = 0; i < b->inputs().size(); ++i) set(b->inputs()[i], inputs.at(i));
    for (Node* n : b->nodes()) run_node(n);
    outputs.clear();
    for (Value* o : b->outputs()) outputs.push_back(get(o));
  }

  // In a meta run, large tensors keep only dtype and shape.
  c10::IValue shrink(const c10::IValue& v) const {
    if (!meta_) return v;
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && !t.is_meta() && t.numel() > kSmallTensor) return t.to(at::kMeta);
      return v;
    }
    return v;
  }

  static bool has_meta(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor().defined() && v.toTensor().is_meta();
    if (v.isList()) {
      for (const auto& e : v.toListRef())
        if (has_meta(e)) return true;
    }
    if (v.isTuple()) {
      for (const auto& e : v.toTupleRef().elements())
        if (has_meta(e)) return true;
    }
    return false;
  }

  // A traced Python number (`x + 0.5`) is a 0-d double / long / bool tensor
  // constant, which the archive does not mark as a wrapped number. PyTorch
  // (and TorchScript's interpreter) promote with it as a number: an int
  // tensor + 0.5 is float32, not float64. So does the example run.
  static c10::IValue as_python_number(const c10::IValue& v) {
    if (!v.isTensor()) return v;
    const at::Tensor& t = v.toTensor();
    const auto st = t.defined() ? t.scalar_type() : at::kFloat;
    if (!t.defined() || t.dim() != 0 || !t.device().is_cpu() || t.unsafeGetTensorImpl()->is_wrapped_number() ||
        (st != at::kDouble && st != at::kLong && st != at::kBool && st != at::kComplexDouble))
      return v;
    at::Tensor w = t.detach();
    w.unsafeGetTensorImpl()->set_wrapped_number(true);
    return w;
  }

  // Whether `v` is or holds a real (not meta) tensor.
  static bool needs_meta(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor().defined() && !v.toTensor().is_meta();
    if (v.isList()) {
      for (const auto& e : v.toListRef())
        if (needs_meta(e)) return true;
    }
    return false;
  }

  // Puts real tensors (and CPU device arguments) on meta, to run with meta
  // ones. A list is copied only when it holds a real tensor: an operator that
  // updates a list in place (`append`) must see the list itself.
  static c10::IValue to_meta(const c10::IValue& v) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined() || t.is_meta()) return v;
      at::Tensor m = t.to(at::kMeta);
      if (t.unsafeGetTensorImpl()->is_wrapped_number()) m.unsafeGetTensorImpl()->set_wrapped_number(true);
      return m;
    }
    if (v.isDevice() && v.toDevice().is_cpu()) return c10::IValue(c10::Device(c10::kMeta));
    if (v.isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor& t : v.toTensorList()) out.push_back(t.defined() && !t.is_meta() ? t.to(at::kMeta) : t);
      return out;
    }
    if (v.isList() && has_meta(v) && needs_meta(v)) {
      c10::impl::GenericList out(v.toList().elementType());
      for (const auto& e : v.toListRef()) out.push_back(to_meta(e));
      return out;
    }
    return v;
  }

  void run_node(Node* n) {
    note_random(n);
    // Meta tensors are never quantized (quantize_per_tensor on meta gives float).
    if (meta_ && makes_quantized(n)) throw NeedsRealRun{};
    try {
      execute(n);
    } catch (const Error&) {
      throw;
    } catch (const NeedsRealRun&) {
      throw;
    } catch (const std::exception& e) {
      if (speculating_) throw;
      std::string msg = e.what();
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      stopped_at = std::string(n->kind().toQualString()) + " in " + describe_origin(*origins_.of(n)) + ": " + msg;
      if (meta_) {
        if (std::getenv("T2O_TIMING")) std::cerr << "[t2o] meta run stops at " << stopped_at.substr(0, 300) << "\n";
        throw NeedsRealRun{};
      }
      throw Error(Error::Kind::Args, "the example inputs do not fit the model: running " +
                                         std::string(n->kind().toQualString()) + " in " +
                                         describe_origin(*origins_.of(n)) + " failed: " + msg);
    }
  }

  void execute(Node* n) {
    const auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      set(n->output(), shrink(as_python_number(torch::jit::toIValue(n->output()).value())));
    } else if (kind == c10::prim::ListConstruct) {
      auto lt = n->output()->type()->expect<c10::ListType>();
      c10::impl::GenericList list(lt->getElementType());
      list.reserve(n->inputs().size());
      for (Value* in : n->inputs()) list.push_back(get(in));
      set(n->output(), c10::IValue(std::move(list)));
    } else if (kind == c10::prim::DictConstruct) {
      auto dt = n->output()->type()->expect<c10::DictType>();
      c10::impl::GenericDict dict(dt->getKeyType(), dt->getValueType());
      for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) dict.insert(get(n->input(i)), get(n->input(i + 1)));
      set(n->output(), c10::IValue(std::move(dict)));
    } else if (kind == c10::prim::TupleConstruct) {
      std::vector<c10::IValue> elems;
      for (Value* in : n->inputs()) elems.push_back(get(in));
      set(n->output(), c10::ivalue::Tuple::create(std::move(elems)));
    } else if (kind == c10::prim::ListUnpack) {
      const c10::IValue held = get(n->input());  // toListRef() points into it
      const auto list = held.toListRef();
      if (list.size() != n->outputs().size())
        throw std::runtime_error("expected a list of " + std::to_string(n->outputs().size()) + " elements, got " +
                                 std::to_string(list.size()));
      std::vector<c10::IValue> elems(list.begin(), list.end());
      for (size_t i = 0; i < elems.size(); ++i) set(n->output(i), elems[i]);
    } else if (kind == c10::prim::TupleUnpack) {
      auto elems = get(n->input()).toTupleRef().elements().vec();
      for (size_t i = 0; i < n->outputs().size(); ++i) set(n->output(i), elems.at(i));
    } else if (kind == c10::prim::If) {
      bool cond = get(n->input()).toBool();
      std::vector<c10::IValue> outs;
      run_block(n->blocks()[cond ? 0 : 1], {}, outs);
      for (size_t i = 0; i < outs.size(); ++i) set(n->output(i), outs[i]);
      // The other branch becomes an ONNX subgraph too: its values need types.
      speculate(n->blocks()[cond ? 1 : 0], {});
    } else if (kind == c10::prim::Loop) {
      run_loop(n);
    } else if (kind == c10::prim::unchecked_cast) {
      set(n->output(), get(n->input()));
    } else if (kind == c10::prim::device && n->inputs().size() == 1) {
      // A meta tensor here stands in for a CPU one (models are loaded on the
      // CPU): code that checks `x.device` must take the branch it takes.
      const c10::IValue x = get(n->input());
      if (!x.isTensor()) throw std::runtime_error("prim::device of a value that is not a tensor");
      const at::Tensor& t = x.toTensor();
      set(n->output(), c10::IValue(t.defined() && t.is_meta() ? c10::Device(c10::kCPU) : t.device()));
    } else {
      const torch::jit::Operator* op = n->maybeOperator();
      if (!op) throw std::runtime_error("no kernel for this operator");
      const c10::FunctionSchema& schema = op->schema();
      if (speculating_) check_speculable(n, schema);
      torch::jit::Operation operation = op->getOperation(n);
      torch::jit::Stack stack;
      stack.reserve(n->inputs().size() + 1);
      bool any_meta = false;
      for (Value* in : n->inputs()) {
        stack.push_back(get(in));
        any_meta = any_meta || has_meta(stack.back());
      }
      if (any_meta) {
        for (auto& v : stack) v = to_meta(v);
        if (run_meta_substitute(n, stack)) return;
      }
      // A branch run only to learn types writes to copies: an in-place op
      // there must not change the values the example really computes
      // (Swin's `shift_size[0] = 0` in the branch not taken).
      // A constant is a value, never an object: a write to one (a list the
      // torch passes folded, then updated: `l = shift.copy(); l[0] = 0`)
      // writes to a copy too, as the conversion does.
      for (size_t i = 0; i < stack.size() && i < schema.arguments().size(); ++i) {
        const auto* alias = schema.arguments()[i].alias_info();
        if (alias && alias->isWrite() && (speculating_ || n->input(i)->node()->kind() == c10::prim::Constant))
          stack[i] = private_copy(stack[i], speculating_ != 0);
      }
      // batch_norm/instance_norm in training mode update their running
      // statistics in place without saying so in their schema: run them on
      // copies, never on the model's buffers.
      if ((n->kind() == c10::aten::batch_norm || n->kind() == c10::aten::instance_norm) && stack.size() > 5 &&
          stack[5].isBool() && stack[5].toBool())
        for (size_t i : {size_t{3}, size_t{4}})
          if (stack[i].isTensor() && stack[i].toTensor().defined()) stack[i] = stack[i].toTensor().clone();
      // A vararg operator with a plain operation (aten::format(str self, ...))
      // pops its input count first: TorchScript's interpreter pushes it (its
      // OPN instruction; operations made for a node, like prim::PythonOp's,
      // know their count). Without it the kernel takes an argument for the
      // count and reads stack slots that do not exist.
      if (schema.is_vararg() && op->hasOperation()) stack.emplace_back(static_cast<int64_t>(n->inputs().size()));
      const c10::IValue first = returns_view_or_copy(n) && !stack.empty() ? stack[0] : c10::IValue();
      operation(stack);
      if (stack.size() < n->outputs().size())
        throw std::runtime_error("operator returned " + std::to_string(stack.size()) + " values");
      const size_t base = stack.size() - n->outputs().size();
      const bool copied = first.isTensor() && first.toTensor().defined() && stack[base].isTensor() &&
                          !stack[base].toTensor().is_alias_of(first.toTensor());
      for (size_t i = 0; i < n->outputs().size(); ++i) set(n->output(i), shrink(stack[base + i]));
      if (copied) tg_.info[n->output()].copied = true;
    }
  }

  // Operators whose own kernel has no meta path, computed through an
  // equivalent that has one.
  bool run_meta_substitute(Node* n, torch::jit::Stack& stack) {
    if (auto outs = meta_outputs(n->kind().toQualString(), stack)) {
      if (outs->size() != n->outputs().size()) throw std::runtime_error("meta shape function arity");
      for (size_t i = 0; i < outs->size(); ++i) set(n->output(i), (*outs)[i]);
      return true;
    }
    return false;
  }

  // A kernel trusts its stack: handed a value of another type than its
  // schema says (None or Uninitialized where a Tensor belongs, in a branch
  // whose guard the example fails) it reads memory that is not there, which
  // no catch can stop. Speculation runs an operator only when every input
  // fits its argument's declared type, and never one with side effects
  // (raise, warn, print).
  static bool is_uninitialized(const c10::IValue& v) { return v.tagKind() == "Uninitialized"; }

  static bool fits(const c10::IValue& v, const c10::TypePtr& t) {
    switch (t->kind()) {
      case c10::TypeKind::AnyType:
        return !is_uninitialized(v);  // kernels taking Any still read the value
      case c10::TypeKind::TensorType:
        return v.isTensor();
      case c10::TypeKind::OptionalType:
        return v.isNone() || fits(v, t->expectRef<c10::OptionalType>().getElementType());
      case c10::TypeKind::ListType: {
        if (!v.isList()) return false;
        const c10::TypePtr& elem = t->expectRef<c10::ListType>().getElementType();
        for (const c10::IValue& e : v.toListRef())
          if (!fits(e, elem)) return false;
        return true;
      }
      default:
        break;
    }
    if (is_uninitialized(v)) return false;
    if (t->hasFreeVariables()) return true;  // `t`, `t[]`: the kernel dispatches on the value
    return v.type()->isSubtypeOf(*t);
  }

  struct NotSpeculable {};

  // A copy to write to: on the meta device when only types matter.
  static c10::IValue private_copy(const c10::IValue& v, bool meta) {
    if (v.isTensor() && v.toTensor().defined()) {
      const at::Tensor& t = v.toTensor();
      if (!meta) return t.clone();
      return t.is_meta() ? at::empty_strided(t.sizes(), t.strides(), t.options()) : t.to(at::kMeta);
    }
    if (v.isList()) return v.toList().copy();
    if (v.isGenericDict()) return v.toGenericDict().copy();
    return v;
  }

  void check_speculable(Node* n, const c10::FunctionSchema& schema) {
    if (n->hasSideEffects()) throw NotSpeculable{};
    const auto& args = schema.arguments();
    if (schema.is_vararg() ? n->inputs().size() < args.size() : n->inputs().size() != args.size())
      throw NotSpeculable{};
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      auto it = env_.find(n->input(i));
      if (it == env_.end()) throw NotSpeculable{};
      if (i < args.size() && !fits(it->second, args[i].type())) throw NotSpeculable{};
      if (i >= args.size() && is_uninitialized(it->second)) throw NotSpeculable{};
    }
  }

  // Runs a block that the example does not execute (the other branch of an
  // If, a loop body run zero times) on meta copies of its inputs, only to
  // learn its values' types. Nothing real is touched; failures just leave
  // values without info.
  void speculate(Block* b, const std::vector<c10::IValue>& inputs) {
    ++speculating_;
    try {
      std::vector<c10::IValue> ins;
      for (const auto& v : inputs) ins.push_back(to_meta(v));
      std::vector<c10::IValue> outs;
      run_block(b, ins, outs);
    } catch (...) {
    }
    if (--speculating_ == 0) meta_copies_.clear();
  }

  void run_loop(Node* n) {
    // prim::Loop(max_trip_count, initial_condition, carried...) with body
    // block(i, carried...) -> (condition, carried...).
    int64_t max_trips = get(n->input(0)).toInt();
    bool cond = get(n->input(1)).toBool();
    std::vector<c10::IValue> carried;
    for (size_t i = 2; i < n->inputs().size(); ++i) carried.push_back(get(n->input(i)));
    Block* body = n->blocks()[0];
    int64_t trips = 0;
    for (int64_t i = 0; i < max_trips && cond; ++i, ++trips) {
      std::vector<c10::IValue> ins{c10::IValue(i)};
      ins.insert(ins.end(), carried.begin(), carried.end());
      std::vector<c10::IValue> outs;
      run_block(body, ins, outs);
      cond = outs.at(0).toBool();
      carried.assign(outs.begin() + 1, outs.end());
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) set(n->output(i), carried.at(i));
    if (trips == 0) {  // the body still becomes a subgraph: learn its types
      std::vector<c10::IValue> ins{c10::IValue(int64_t{0})};
      ins.insert(ins.end(), carried.begin(), carried.end());
      speculate(body, ins);
    }
  }

  TorchGraph& tg_;
  OriginTable& origins_;
  bool meta_;
  int speculating_ = 0;
  // Meta copies made while speculating (each beside its original, which
  // keeps the address it is found by alive).
  std::unordered_map<const void*, std::pair<c10::IValue, c10::IValue>> meta_copies_;
  std::unordered_set<const Value*> random_;  // values computed from random numbers
  std::unordered_map<const Value*, c10::IValue> env_;
};

// Meta and real runs must see the same dtypes, shapes and known values.
void compare_runs(const ExampleInfo& real, const ExampleInfo& meta, const std::string& where) {
  auto fail = [&](const std::string& what) {
    throw Error(Error::Kind::Internal, "meta run disagrees with the real run at " + where + ": " + what);
  };
  if (real.kind != meta.kind) fail("different kinds of value");
  if (real.kind == ExampleInfo::Kind::Tensor) {
    if (real.dtype != meta.dtype)
      fail(std::string("dtype ") + c10::toString(meta.dtype) + " instead of " + c10::toString(real.dtype));
    if (real.sizes != meta.sizes) fail("shape " + c10::str(meta.sizes) + " instead of " + c10::str(real.sizes));
    if (meta.small_value.defined()) {
      const at::Tensor& a = real.small_value;
      const at::Tensor& b = meta.small_value;
      const bool same = a.is_floating_point() ? at::allclose(a, b, 0, 0, /*equal_nan=*/true) : at::equal(a, b);
      if (!same) fail("different values");
    }
  } else if (real.kind == ExampleInfo::Kind::Int || real.kind == ExampleInfo::Kind::Float ||
             real.kind == ExampleInfo::Kind::Bool) {
    if (!(real.scalar == meta.scalar)) fail("different numbers");
  }
  if (real.elements.size() != meta.elements.size()) fail("different list lengths");
  for (size_t i = 0; i < real.elements.size(); ++i) compare_runs(real.elements[i], meta.elements[i], where);
}

}  // namespace

namespace {

// Sizes that differ between the example run and the run with resized dynamic axes.
void compare_sizes(ExampleInfo& a, const ExampleInfo& b) {
  if (a.kind == ExampleInfo::Kind::Tensor && b.kind == ExampleInfo::Kind::Tensor &&
      a.dtype != at::ScalarType::Undefined && b.dtype != at::ScalarType::Undefined) {
    a.dynamic_dims.assign(a.sizes.size(), true);
    if (b.sizes.size() == a.sizes.size())
      for (size_t d = 0; d < a.sizes.size(); ++d) a.dynamic_dims[d] = a.sizes[d] != b.sizes[d];
  }
  for (size_t i = 0; i < a.elements.size() && i < b.elements.size(); ++i) compare_sizes(a.elements[i], b.elements[i]);
}

}  // namespace

namespace {

// The example's info for every value the example run reached, run again (on
// the meta device) with each dynamic axis's size changed by `resize`: what
// the run computes from sizes alone is known, what depends on the inputs'
// values (nonzero, unique, item, a branch on data) stops it. Where the run
// stops, the values computed before are returned; `stopped` says where.
std::unordered_map<const torch::jit::Value*, ExampleInfo> run_resized(TorchGraph& tg, const TorchContext& ctx,
                                                                       int64_t (*resize)(int64_t),
                                                                       std::string& stopped) {
  const auto& dynamic = ctx.options.dynamic_axes;
  std::vector<at::Tensor> resized = tg.example_inputs;
  bool any = false;
  for (size_t i = 0; i < tg.user_inputs.size() && i < resized.size(); ++i) {
    const std::string name = i < ctx.options.input_names.size() ? ctx.options.input_names[i] : tg.user_input_names[i];
    auto it = dynamic.find(name);
    if (it == dynamic.end() || !resized[i].defined()) continue;
    std::vector<int64_t> sizes = resized[i].sizes().vec();
    const auto rank = static_cast<int64_t>(sizes.size());
    for (const auto& a : it->second) {
      const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      if (axis >= 0 && axis < rank) {
        int64_t& size = sizes[static_cast<size_t>(axis)];
        const int64_t new_size = resize(size);
        any = any || new_size != size;
        size = new_size;
      }
    }
    resized[i] = at::empty(sizes, resized[i].options().device(at::kMeta));
  }
  if (!any) return {};
  OriginTable origins(tg.root_class);
  auto real = std::move(tg.info);
  tg.info.clear();
  std::swap(tg.example_inputs, resized);
  Runner meta(tg, origins, /*meta=*/true);
  try {
    meta.run();
  } catch (const NeedsRealRun&) {
    stopped = "the run with the dynamic axes resized (on the meta device) stopped at " +
              (meta.stopped_at.empty() ? std::string("an operator that needs data") : meta.stopped_at);
  } catch (const std::exception& e) {
    stopped = "the run with the dynamic axes resized stopped: " + std::string(e.what());
  }
  if (!stopped.empty() && std::getenv("T2O_TIMING")) std::cerr << "[t2o] " << stopped.substr(0, 400) << "\n";
  std::swap(tg.example_inputs, resized);
  auto other = std::move(tg.info);
  tg.info = std::move(real);
  return other;
}

// Where a dim also differs at the shrunk sizes (same rank), it is dynamic.
void add_shrunk_differences(ExampleInfo& a, const ExampleInfo& b) {
  if (a.kind == ExampleInfo::Kind::Tensor && b.kind == ExampleInfo::Kind::Tensor && b.dtype != at::ScalarType::Undefined &&
      a.dynamic_dims.size() == a.sizes.size() && b.sizes.size() == a.sizes.size())
    for (size_t d = 0; d < a.sizes.size(); ++d) a.dynamic_dims[d] = a.dynamic_dims[d] || a.sizes[d] != b.sizes[d];
  for (size_t i = 0; i < a.elements.size() && i < b.elements.size(); ++i) add_shrunk_differences(a.elements[i], b.elements[i]);
}

}  // namespace

bool returns_view_or_copy(const torch::jit::Node* n) {
  const auto k = n->kind();
  return n->outputs().size() == 1 &&
         (k == c10::aten::contiguous || k == c10::aten::reshape || k == c10::aten::reshape_as || k == c10::aten::flatten);
}

void mark_dynamic_dims(TorchGraph& tg, const TorchContext& ctx) {
  tg.dynamic_run_stopped.clear();
  if (ctx.options.dynamic_axes.empty()) return;
  at::NoGradGuard no_grad;
  // First the dynamic axes doubled (divisibility kept: x.view(n // 2, 2, ...)
  // still runs). Values the example repeated would keep such sizes the same
  // and pass them for static. Where that run stops, the later values stay
  // unknown (their sizes then come from ONNX's shape inference), and a
  // lowering that needs one of them static says where the run stopped.
  auto grown = run_resized(tg, ctx, [](int64_t n) { return n * 2; }, tg.dynamic_run_stopped);
  for (auto& [v, info] : tg.info)
    if (auto it = grown.find(v); it != grown.end()) compare_sizes(info, it->second);
  // Then shrunk to 2 (axes of at most 2 kept): a size clamped at run time
  // looks static at larger sizes only (x[1:3] of a dynamic axis is 2 long
  // from length 3 on, 1 at length 2): the graph must not keep it. Where this
  // run stops (a kernel larger than 2, a view that needs more) the grown
  // run's answer stands (where it stopped is logged with T2O_TIMING only: no
  // lowering's message needs it).
  std::string shrunk_stopped;
  auto shrunk = run_resized(tg, ctx, [](int64_t n) { return n > 2 ? int64_t{2} : n; }, shrunk_stopped);
  for (auto& [v, info] : tg.info)
    if (auto it = shrunk.find(v); it != shrunk.end()) add_shrunk_differences(info, it->second);
}

void example_run(TorchGraph& tg, const TorchContext& ctx) {
  at::NoGradGuard no_grad;
  OriginTable origins(tg.root_class);
  // A run after passes changed the graph starts afresh: values they removed
  // are freed, and a new value may be allocated where one of them was.
  tg.info.clear();
  if (std::getenv("T2O_CHECK_META") && !ctx.real_example_run) {
    Runner(tg, origins, /*meta=*/false).run();
    auto real = std::move(tg.info);
    tg.info.clear();
    try {
      Runner(tg, origins, /*meta=*/true).run();
    } catch (const NeedsRealRun&) {
      tg.info = std::move(real);
      return;
    }
    for (const auto& [v, info] : real) {
      auto it = tg.info.find(v);
      std::string where = "%" + v->debugName() + (v->node() ? std::string(" (") + v->node()->kind().toQualString() + ")" : "");
      if (it == tg.info.end()) throw Error(Error::Kind::Internal, "meta run did not compute " + where);
      compare_runs(info, it->second, where);
    }
    return;
  }
  if (!ctx.real_example_run) {
    try {
      Runner(tg, origins, /*meta=*/true).run();
      return;
    } catch (const NeedsRealRun&) {
      tg.info.clear();
    }
  }
  Runner(tg, origins, /*meta=*/false).run();
}

}  // namespace torch2onnx::torch_side
