// Takes forward() of the module as a graph with every call inlined.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <unordered_map>

#include "torch_passes/origin.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {

namespace {

// Whether example `args` can be forward()'s arguments under `schema` (self first).
bool accepts(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  const auto& params = schema.arguments();
  if (args.size() + 1 > params.size()) return false;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i].type()->isSubtypeOf(*params[i + 1].type())) return false;
  for (size_t i = args.size() + 1; i < params.size(); ++i)
    if (!params[i].default_value()) return false;
  return true;
}

// forward(), or for a module whose forward is overloaded (a scripted nn.LSTM:
// forward__0 on a tensor, forward__1 on a PackedSequence) the first overload
// that takes the example args.
torch::jit::Method forward_method(torch::jit::Module& module, const std::vector<c10::IValue>& args) {
  if (auto m = module.find_method("forward")) return *m;
  std::vector<std::string> overloads;
  for (int k = 0;; ++k) {
    auto m = module.find_method("forward__" + std::to_string(k));
    if (!m) break;
    if (accepts(m->function().getSchema(), args)) return *m;
    overloads.push_back(m->name());
  }
  if (overloads.empty()) throw Error(Error::Kind::Load, "the TorchScript module has no forward() method to export");
  std::string names;
  for (const auto& o : overloads) names += (names.empty() ? "" : ", ") + o;
  throw Error(Error::Kind::Args, "no overload of the module's forward() (" + names + ") takes the example args");
}

// Every call of a graph inlined, bottom-up as torch::jit::Inline does (each
// callee's graph with its own calls inlined first, so the nodes' inlined call
// stacks name every module on the way), but from each function's graph as
// it is: Inline takes Function::optimized_graph(), which runs peephole,
// constant propagation and pooling and autocast over every callee first (most
// of the inlining's time on a traced model of many small modules; the torch
// passes clean up the one graph afterwards). One inlined copy per function.
class Inliner {
 public:
  void inline_calls(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(), end = block->nodes().end(); it != end;) {
      torch::jit::Node* cur = *it++;
      if (cur->kind() == c10::prim::CallFunction) {
        torch::jit::Node* constant = cur->input(0)->node();
        if (constant->kind() != c10::prim::Constant) continue;
        auto* f = torch::jit::tryToGraphFunction(*constant->output()->type()->expect<c10::FunctionType>()->function());
        if (!f) continue;
        cur->removeInput(0);
        torch::jit::inlineCallTo(cur, f, inlined(f));
      } else if (cur->kind() == c10::prim::CallMethod) {
        auto class_type = cur->input(0)->type()->cast<c10::ClassType>();
        if (!class_type) continue;
        auto* f = torch::jit::tryToGraphFunction(class_type->getMethod(cur->s(c10::attr::name)));
        if (f) torch::jit::inlineCallTo(cur, f, inlined(f));
      } else {
        for (torch::jit::Block* b : cur->blocks()) inline_calls(b);
      }
    }
  }

 private:
  torch::jit::Graph* inlined(torch::jit::GraphFunction* f) {
    auto it = done_.find(f);
    if (it != done_.end()) return it->second.get();
    std::shared_ptr<torch::jit::Graph> g = f->graph()->copy();
    inline_calls(g->block());
    return done_.emplace(f, std::move(g)).first->second.get();
  }

  std::unordered_map<const torch::jit::GraphFunction*, std::shared_ptr<torch::jit::Graph>> done_;
};

}  // namespace

TorchGraph inline_forward(torch::jit::Module& module, const std::vector<c10::IValue>& args, const TorchContext& ctx) {
  switch (ctx.options.training) {
    case TrainingMode::Eval: module.eval(); break;
    case TrainingMode::Training: module.train(true); break;
    case TrainingMode::Preserve: break;
  }
  auto method = forward_method(module, args);
  TorchGraph tg;
  tg.graph = method.graph()->copy();
  Inliner().inline_calls(tg.graph->block());
  const auto& schema = method.function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    const auto& a = schema.arguments()[i];
    tg.input_arg_names.push_back(a.name());
    tg.input_defaults.push_back(a.default_value() ? std::optional<c10::IValue>(*a.default_value()) : std::nullopt);
  }
  tg.root_class = module.type()->name() ? plain_class_name(module.type()->name()->qualifiedName()) : "Module";
  return tg;
}

}  // namespace torch2onnx::torch_side
