// Facts that are fixed for an export, whatever the inputs: the graph runs
// on the CPU, with autograd and autocast off, on dense tensors. Scripted
// code asks about them (nn.MultiheadAttention's fast-path checks: `x.device`,
// `x.is_cuda`, `torch.is_grad_enabled()`, `x.requires_grad`,
// `torch.is_autocast_enabled()`, `query is key`, `bias is not None`); their
// answers become constants here, so that constant propagation decides the
// branches and only the branch that runs is exported.
#include <torch/csrc/jit/ir/constants.h>

#include <unordered_map>

#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// Questions about where and how a tensor lives: the answer for a dense CPU tensor.
const std::unordered_map<std::string, bool>& tensor_kind_facts() {
  static const std::unordered_map<std::string, bool> facts = {
      {"prim::is_cpu", true},     {"prim::is_cuda", false},  {"prim::is_xpu", false},    {"prim::is_mps", false},
      {"prim::is_meta", false},   {"prim::is_maia", false},  {"prim::is_ipu", false},    {"prim::is_vulkan", false},
      {"prim::is_mkldnn", false}, {"prim::is_nested", false}, {"prim::is_sparse", false}, {"prim::is_sparse_csr", false},
      {"prim::is_mtia", false},   {"prim::is_hpu", false}};
  return facts;
}

bool is_none_type(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::NoneType; }

// Whether a value of type t may be None at run time.
bool may_be_none(const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::NoneType:
    case c10::TypeKind::OptionalType:
    case c10::TypeKind::AnyType:
    case c10::TypeKind::UnionType: return true;
    default: return false;
  }
}

// `a is b`, when the graph alone decides it: the same value, or None
// against a value that cannot be None.
std::optional<bool> identity(const Value* a, const Value* b) {
  if (a == b) return true;
  const bool a_none = is_none_type(a->type()), b_none = is_none_type(b->type());
  if (a_none && b_none) return true;
  if ((a_none && !may_be_none(b->type())) || (b_none && !may_be_none(a->type()))) return false;
  return std::nullopt;
}

class FactFolder {
 public:
  explicit FactFolder(TorchGraph& tg) : tg_(tg) {
    for (const Param& p : tg.params) params_[p.value] = &p.tensor;
  }

  void run(torch::jit::Block* b) {
    for (auto it = b->nodes().begin(); it != b->nodes().end();) {
      Node* n = *it;
      ++it;
      for (torch::jit::Block* sub : n->blocks()) run(sub);
      if (auto v = fact(n)) replace(n, *v);
    }
  }

 private:
  std::optional<c10::IValue> fact(Node* n) const {
    const std::string kind = n->kind().toQualString();
    if (kind == "aten::is_grad_enabled" || kind == "aten::is_autocast_enabled" ||
        kind == "aten::is_autocast_cpu_enabled" || kind == "aten::is_inference_mode_enabled")
      return c10::IValue(false);
    if (auto f = tensor_kind_facts().find(kind); f != tensor_kind_facts().end()) return c10::IValue(f->second);
    if (kind == "prim::device" && n->inputs().size() == 1) return c10::IValue(c10::Device(c10::kCPU));
    if (kind == "prim::requires_grad" && n->inputs().size() == 1) {
      // Under no_grad nothing computed requires grad and the inputs are
      // detached; parameters keep their flag.
      auto p = params_.find(n->input(0));
      return c10::IValue(p != params_.end() && p->second->requires_grad());
    }
    if ((kind == "aten::__is__" || kind == "aten::__isnot__") && n->inputs().size() == 2) {
      if (auto same = identity(n->input(0), n->input(1))) return c10::IValue(kind == "aten::__is__" ? *same : !*same);
    }
    return std::nullopt;
  }

  void replace(Node* n, const c10::IValue& v) {
    if (n->outputs().size() != 1) return;
    torch::jit::WithInsertPoint guard(n);
    auto c = torch::jit::tryInsertConstant(*tg_.graph, v);
    if (!c) return;
    n->output()->replaceAllUsesWith(*c);
    n->destroy();
  }

  TorchGraph& tg_;
  std::unordered_map<const Value*, const at::Tensor*> params_;
};

}  // namespace

void fold_export_facts(TorchGraph& tg, const TorchContext&) { FactFolder(tg).run(tg.graph->block()); }

}  // namespace torch2onnx::torch_side
