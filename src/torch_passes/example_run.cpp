// Runs the graph once on the example inputs, node by node, and records what
// each value was: a tensor's dtype and sizes, a number's value, a list's
// elements. Symbolic functions read this to pick dtypes and ranks. Tensors
// are released after their last use, so the run never holds more than the
// live activations.
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <unordered_map>
#include <unordered_set>

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
      if (t.numel() <= 64 && !t.is_quantized()) info.small_value = t.detach().clone();
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

class Runner {
 public:
  Runner(TorchGraph& tg, OriginTable& origins) : tg_(tg), origins_(origins) {}

  void run() {
    auto& graph = *tg_.graph;
    std::unordered_set<const Value*> mutated;
    collect_mutated(graph.block(), mutated);
    for (size_t i = 0; i < tg_.user_inputs.size(); ++i) set(tg_.user_inputs[i], tg_.example_inputs[i]);
    for (const Param& p : tg_.params)
      set(p.value, mutated.count(p.value) ? p.tensor.detach().clone() : p.tensor);

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
  static void collect_mutated(Block* b, std::unordered_set<const Value*>& out) {
    for (Node* n : b->nodes()) {
      for (Block* sub : n->blocks()) collect_mutated(sub, out);
      const c10::FunctionSchema* s = n->maybeSchema();
      if (!s || !s->is_mutable()) continue;
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
    tg_.info[v] = info_of(iv);
    env_[v] = std::move(iv);
  }

  const c10::IValue& get(const Value* v) {
    auto it = env_.find(v);
    if (it == env_.end())
      throw Error(Error::Kind::Internal, "example run: value %" + v->debugName() + " was not computed");
    return it->second;
  }

  void run_block(Block* b, const std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs) {
    for (size_t i = 0; i < b->inputs().size(); ++i) set(b->inputs()[i], inputs.at(i));
    for (Node* n : b->nodes()) run_node(n);
    outputs.clear();
    for (Value* o : b->outputs()) outputs.push_back(get(o));
  }

  void run_node(Node* n) {
    try {
      execute(n);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      throw Error(Error::Kind::Args, "the example inputs do not fit the model: running " +
                                         std::string(n->kind().toQualString()) + " in " +
                                         describe_origin(*origins_.of(n)) + " failed: " + msg);
    }
  }

  void execute(Node* n) {
    const auto kind = n->kind();
    if (kind == c10::prim::Constant) {
      set(n->output(), torch::jit::toIValue(n->output()).value());
    } else if (kind == c10::prim::ListConstruct) {
      auto lt = n->output()->type()->expect<c10::ListType>();
      c10::impl::GenericList list(lt->getElementType());
      list.reserve(n->inputs().size());
      for (Value* in : n->inputs()) list.push_back(get(in));
      set(n->output(), c10::IValue(std::move(list)));
    } else if (kind == c10::prim::TupleConstruct) {
      std::vector<c10::IValue> elems;
      for (Value* in : n->inputs()) elems.push_back(get(in));
      set(n->output(), c10::ivalue::Tuple::create(std::move(elems)));
    } else if (kind == c10::prim::ListUnpack) {
      auto list = get(n->input()).toListRef();
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
    } else if (kind == c10::prim::Loop) {
      run_loop(n);
    } else if (kind == c10::prim::unchecked_cast) {
      set(n->output(), get(n->input()));
    } else {
      const torch::jit::Operator* op = n->maybeOperator();
      if (!op) throw std::runtime_error("no kernel for this operator");
      torch::jit::Operation operation = op->getOperation(n);
      torch::jit::Stack stack;
      stack.reserve(n->inputs().size());
      for (Value* in : n->inputs()) stack.push_back(get(in));
      operation(stack);
      if (stack.size() < n->outputs().size())
        throw std::runtime_error("operator returned " + std::to_string(stack.size()) + " values");
      const size_t base = stack.size() - n->outputs().size();
      for (size_t i = 0; i < n->outputs().size(); ++i) set(n->output(i), std::move(stack[base + i]));
    }
  }

  void run_loop(Node* n) {
    // prim::Loop(max_trip_count, initial_condition, carried...) with body
    // block(i, carried...) -> (condition, carried...).
    int64_t max_trips = get(n->input(0)).toInt();
    bool cond = get(n->input(1)).toBool();
    std::vector<c10::IValue> carried;
    for (size_t i = 2; i < n->inputs().size(); ++i) carried.push_back(get(n->input(i)));
    Block* body = n->blocks()[0];
    for (int64_t i = 0; i < max_trips && cond; ++i) {
      std::vector<c10::IValue> ins{c10::IValue(i)};
      ins.insert(ins.end(), carried.begin(), carried.end());
      std::vector<c10::IValue> outs;
      run_block(body, ins, outs);
      cond = outs.at(0).toBool();
      carried.assign(outs.begin() + 1, outs.end());
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) set(n->output(i), carried.at(i));
  }

  TorchGraph& tg_;
  OriginTable& origins_;
  std::unordered_map<const Value*, c10::IValue> env_;
};

}  // namespace

void example_run(TorchGraph& tg, const TorchContext&) {
  at::NoGradGuard no_grad;
  OriginTable origins(tg.root_class);
  Runner(tg, origins).run();
}

}  // namespace torch2onnx::torch_side
