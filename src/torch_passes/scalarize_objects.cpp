// Instances of TorchScript classes that forward() creates (torchvision's
// ImageList, a scripted dataclass): once every method is inlined, an object
// is only prim::CreateObject, prim::SetAttr and prim::GetAttr nodes, so each
// attribute read becomes the value last assigned to it and the object goes
// away. Assignments must be in the block that creates the object (a branch
// or a loop assigning would need the value carried out of it); an object
// that escapes (returned, put into a list, passed to an operator) is refused
// with its class named. Tuples built and unpacked at once (an inlined
// method's return) are lowered first.
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/lower_tuples.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "torch2onnx/options.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

void collect(Block* b, std::vector<Node*>& out) {
  for (Node* n : b->nodes()) {
    if (n->kind() == c10::prim::CreateObject) out.push_back(n);
    for (Block* sub : n->blocks()) collect(sub, out);
  }
}

std::string class_name(const Value* v) {
  if (auto cls = v->type()->cast<c10::ClassType>(); cls && cls->name()) return cls->name()->name();
  return v->type()->repr_str();
}

// What is known of an object before its attributes go: a cast of it is the
// object (Optional[T] -> T after `is not None`), and it is not None.
void forward_aliases(Value* obj) {
  for (bool again = true; again;) {
    again = false;
    for (const torch::jit::Use& u : obj->uses()) {
      Node* n = u.user;
      if (n->kind() == c10::prim::unchecked_cast) {
        n->output()->replaceAllUsesWith(obj);
      } else if ((n->kind() == c10::aten::__is__ || n->kind() == c10::aten::__isnot__) &&
                 n->input(1 - u.offset)->type()->kind() == c10::TypeKind::NoneType) {
        torch::jit::WithInsertPoint guard(n);
        n->output()->replaceAllUsesWith(n->owningGraph()->insertConstant(n->kind() == c10::aten::__isnot__));
      } else {
        continue;
      }
      n->destroy();
      again = true;
      break;
    }
  }
}

struct Scalarizer {
  Value* obj;
  std::string cls;
  std::unordered_map<std::string, Value*> state;       // attribute -> its current value
  std::vector<std::pair<Node*, Value*>> reads;         // GetAttr -> the value it reads
  std::vector<Node*> writes;                           // SetAttr
  std::string error;                                   // why the object cannot go (empty: it can)

  void refuse(const std::string& what) {
    if (error.empty()) error = "an object of class " + cls + " " + what + ", which cannot be exported";
  }

  // Walks `b` in program order from `from` (nullptr: its first node).
  void walk(Block* b, Node* from, bool home) {
    for (auto it = from ? from->iterator() : b->nodes().begin(); it != b->nodes().end(); ++it) {
      Node* n = *it;
      if (n->kind() == c10::prim::SetAttr && n->input(0) == obj) {
        if (!home) refuse("is assigned attribute '" + n->s(c10::attr::name) + "' inside a branch or a loop");
        state[n->s(c10::attr::name)] = n->input(1);
        writes.push_back(n);
      } else if (n->kind() == c10::prim::GetAttr && n->input(0) == obj) {
        auto s = state.find(n->s(c10::attr::name));
        if (s == state.end()) refuse("is read (attribute '" + n->s(c10::attr::name) + "') before it is assigned");
        else reads.emplace_back(n, s->second);
      }
      for (Block* sub : n->blocks()) walk(sub, nullptr, false);
    }
  }
};

}  // namespace

bool scalarize_objects(TorchGraph& tg, const TorchContext&, bool strict) {
  std::vector<Node*> creations;
  collect(tg.graph->block(), creations);
  if (creations.empty()) return false;
  // (an inlined method returning the object with something else packs it
  // into a tuple that the caller unpacks at once)
  torch::jit::LowerSimpleTuples(tg.graph);
  bool changed = false;
  for (Node* create : creations) {
    forward_aliases(create->output());
    Scalarizer s{create->output(), class_name(create->output()), {}, {}, {}, {}};
    for (const torch::jit::Use& u : create->output()->uses()) {
      const bool attr_use = (u.user->kind() == c10::prim::GetAttr || u.user->kind() == c10::prim::SetAttr) &&
                            u.offset == 0;
      if (!attr_use) s.refuse(std::string("is passed to ") + u.user->kind().toQualString());
    }
    if (s.error.empty()) s.walk(create->owningBlock(), create->next(), true);
    if (!s.error.empty()) {
      if (strict) throw Error(Error::Kind::Conversion, s.error);
      continue;  // (a later round of folding may free it)
    }
    for (auto& [get, value] : s.reads) {
      get->output()->replaceAllUsesWith(value);
      get->destroy();
    }
    for (Node* set : s.writes) set->destroy();
    create->destroy();
    changed = true;
  }
  return changed;
}

}  // namespace torch2onnx::torch_side
