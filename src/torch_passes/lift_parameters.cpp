// Turns a module's forward() into a function: inlines every call, resolves
// `self.<path>` attribute reads into graph inputs for tensors (parameters and
// buffers, named by their state_dict key) and constants for everything else,
// and drops `self`.
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "torch_passes/origin.h"
#include "torch_passes/passes.h"

namespace torch2onnx::torch_side {
namespace {

using torch::jit::Module;
using torch::jit::Node;
using torch::jit::Value;

// state_dict order: a module's parameters, then its buffers, then its
// children, recursively (attributes keep registration order).
void state_dict_order(const Module& m, const std::string& prefix, std::vector<std::pair<std::string, at::Tensor>>& out) {
  auto type = m._ivalue()->type();
  const size_t n = type->numAttributes();
  for (size_t i = 0; i < n; ++i)
    if (type->is_parameter(i) && m._ivalue()->getSlot(i).isTensor())
      out.emplace_back(prefix + type->getAttributeName(i), m._ivalue()->getSlot(i).toTensor());
  for (size_t i = 0; i < n; ++i)
    if (type->is_buffer(i) && m._ivalue()->getSlot(i).isTensor())
      out.emplace_back(prefix + type->getAttributeName(i), m._ivalue()->getSlot(i).toTensor());
  for (size_t i = 0; i < n; ++i) {
    const auto& slot = m._ivalue()->getSlot(i);
    if (slot.isObject() && slot.toObject()->type()->is_module())
      state_dict_order(Module(slot.toObject()), prefix + type->getAttributeName(i) + ".", out);
  }
}

struct Lifter {
  TorchGraph& tg;
  std::unordered_map<Value*, std::pair<Module, std::string>> modules;  // module-typed values
  std::unordered_map<std::string, Value*> by_name;                     // param name -> input
  std::unordered_map<const c10::TensorImpl*, Value*> by_tensor;        // tied weights
  std::vector<std::pair<Value*, std::pair<std::string, at::Tensor>>> lifted;
  const std::vector<std::pair<std::string, at::Tensor>>& order;  // the state_dict
  std::unordered_map<const c10::TensorImpl*, std::string> state_dict_names;  // of `order`, filled on first use
  std::unordered_map<std::string, Value*> assigned;  // attribute path -> value set in forward()
  struct AssignedAttr {
    Module owner;
    Value* owner_value;  // the owner as the graph reads it
    std::string attr;
  };
  std::unordered_map<std::string, AssignedAttr> assigned_attrs;  // path -> where it lives

  Value* param_input(const std::string& name, const at::Tensor& t) {
    if (auto it = by_name.find(name); it != by_name.end()) return it->second;
    if (auto it = by_tensor.find(t.unsafeGetTensorImpl()); it != by_tensor.end()) {
      by_name[name] = it->second;
      return it->second;
    }
    Value* in = tg.graph->addInput(name);
    in->setType(c10::TensorType::create(t));
    by_name[name] = in;
    by_tensor[t.unsafeGetTensorImpl()] = in;
    lifted.push_back({in, {name, t}});
    return in;
  }

  // A list-of-tensors attribute (nn.LSTM's _flat_weights, a scripted
  // ParameterList read as a list): a list of the tensors' inputs. Tensors
  // that are parameters or buffers keep their state_dict names.
  Value* tensor_list(Node* at, const std::string& path, const std::vector<at::Tensor>& tensors) {
    if (state_dict_names.empty())
      for (const auto& [name, t] : order) state_dict_names.emplace(t.unsafeGetTensorImpl(), name);
    std::vector<Value*> items;
    for (size_t k = 0; k < tensors.size(); ++k) {
      auto known = state_dict_names.find(tensors[k].unsafeGetTensorImpl());
      items.push_back(param_input(known != state_dict_names.end() ? known->second : path + "." + std::to_string(k),
                                  tensors[k]));
    }
    torch::jit::WithInsertPoint guard(at);
    return tg.graph->insertNode(tg.graph->createList(c10::TensorType::get(), items))->output();
  }

  // `self.<attr> = value` in forward(): later reads in this call read
  // `value` (as PyTorch computes it; the module's state is not part of an
  // ONNX graph). In a branch, the If gets an output carrying the attribute's
  // value out (run_if), a loop carries it (run_loop). Assignments to
  // attributes of other objects are left to scalarize_objects.
  void assign(Node* n) {
    auto owner = modules.find(n->input(0));
    if (owner == modules.end()) return;
    const std::string attr = n->s(c10::attr::name);
    const std::string path = attr_path(owner->second.second, attr);
    assigned[path] = n->input(1);
    assigned_attrs.emplace(path, AssignedAttr{owner->second.first, n->input(0), attr});
    n->destroy();
  }

  // The value module attribute `path` had before forward() assigned it, as a
  // value defined before node `at`.
  Value* original_value(Node* at, const std::string& path) {
    const auto& [m, owner, attr] = assigned_attrs.at(path);
    c10::IValue v = m.attr(attr);
    if (v.isTensor()) return param_input(path, v.toTensor());
    if (v.isObject() && !is_torchbind_object(v)) return materialize(at, v, path);  // (LevelMapper)
    torch::jit::WithInsertPoint guard(at);
    std::optional<Value*> c;
    if (!v.isModule())
      if (auto inserted = torch::jit::tryInsertConstant(*tg.graph, v)) c = *inserted;
    if (!c)
      throw Error(Error::Kind::Conversion, "module attribute '" + path + "' of type " + v.type()->repr_str() +
                                               " is assigned in a branch or a loop of forward(), which cannot be "
                                               "exported");
    return *c;
  }

  // An If whose branches assign module attributes: each such attribute
  // becomes an output of the If (the branch's value, or the one before).
  void run_if(Node* n) {
    const auto before = assigned;
    std::vector<std::unordered_map<std::string, Value*>> after;
    for (torch::jit::Block* b : n->blocks()) {
      assigned = before;
      run_block(b);
      after.push_back(assigned);
    }
    assigned = before;
    std::vector<std::string> paths;
    for (const auto& branch : after)
      for (const auto& [path, v] : branch) {
        auto prev = before.find(path);
        if ((prev == before.end() || prev->second != v) &&
            std::find(paths.begin(), paths.end(), path) == paths.end())
          paths.push_back(path);
      }
    for (const std::string& path : paths) {
      auto prev = before.find(path);
      Value* old = prev != before.end() ? prev->second : original_value(n, path);
      c10::TypePtr type;
      for (size_t i = 0; i < after.size(); ++i) {
        auto it = after[i].find(path);
        Value* v = it != after[i].end() ? it->second : old;
        n->blocks()[i]->registerOutput(v);
        type = type ? merge_types(type, v->type(), path) : v->type();
      }
      Value* out = n->addOutput();
      out->setType(type);
      assigned[path] = out;
    }
  }

  static c10::TypePtr merge_types(const c10::TypePtr& a, const c10::TypePtr& b, const std::string& path) {
    if (a == b || *a == *b) return a;
    if (a->kind() == c10::TypeKind::NoneType) return b->kind() == c10::TypeKind::OptionalType ? b : c10::OptionalType::create(b);
    if (b->kind() == c10::TypeKind::NoneType) return a->kind() == c10::TypeKind::OptionalType ? a : c10::OptionalType::create(a);
    if (auto u = c10::unifyTypes(a, b)) return *u;
    throw Error(Error::Kind::Conversion, "module attribute '" + path + "' is assigned values of types " +
                                             a->repr_str() + " and " + b->repr_str() +
                                             " in the branches or a loop of forward(), which cannot be exported");
  }

  // The module a value stands for (a module value, or an attribute read of
  // one not yet resolved: inside a loop body before run_block reaches it).
  std::optional<std::pair<Module, std::string>> module_of(Value* v) {
    if (auto it = modules.find(v); it != modules.end()) return it->second;
    Node* p = v->node();
    if (p->kind() != c10::prim::GetAttr) return std::nullopt;
    auto owner = module_of(p->input(0));
    if (!owner || !owner->first.hasattr(p->s(c10::attr::name))) return std::nullopt;
    c10::IValue a = owner->first.attr(p->s(c10::attr::name));
    if (!a.isModule()) return std::nullopt;
    return std::make_pair(a.toModule(), attr_path(owner->second, p->s(c10::attr::name)));
  }

  // The module attributes assigned anywhere in `b` (nested blocks too), in order.
  void assigned_in(torch::jit::Block* b, std::vector<std::string>& paths) {
    for (Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) assigned_in(sub, paths);
      if (n->kind() != c10::prim::SetAttr) continue;
      auto owner = module_of(n->input(0));
      if (!owner) continue;  // (another object's: scalarize_objects)
      const std::string attr = n->s(c10::attr::name);
      const std::string path = attr_path(owner->second, attr);
      assigned_attrs.emplace(path, AssignedAttr{owner->first, n->input(0), attr});
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
  }

  // A loop assigning module attributes carries them: each becomes a
  // loop-carried value (in: the value before the loop; out: the value after
  // an iteration), read in the body and after the loop as PyTorch reads it.
  void run_loop(Node* n) {
    torch::jit::Block* body = n->blocks()[0];
    std::vector<std::string> paths;
    assigned_in(body, paths);
    std::vector<Value*> ins;
    for (const std::string& path : paths) {
      auto prev = assigned.find(path);
      Value* old = prev != assigned.end() ? prev->second : original_value(n, path);
      n->addInput(old);
      Value* in = body->addInput()->setType(old->type());
      ins.push_back(in);
      assigned[path] = in;
    }
    run_block(body);
    for (size_t i = 0; i < paths.size(); ++i) {
      Value* v = assigned.at(paths[i]);
      const c10::TypePtr type = merge_types(ins[i]->type(), v->type(), paths[i]);
      ins[i]->setType(type);
      body->registerOutput(v);
      Value* out = n->addOutput();
      out->setType(type);
      assigned[paths[i]] = out;
    }
  }

  // "layer1.0.conv" + "weight" -> "layer1.0.conv.weight" (the root module's prefix is empty).
  static std::string attr_path(const std::string& module_path, const std::string& attr) {
    return module_path.empty() ? attr : module_path + "." + attr;
  }

  void run_block(torch::jit::Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* n = *it;
      ++it;
      if (n->kind() == c10::prim::If) run_if(n);
      else if (n->kind() == c10::prim::Loop) run_loop(n);
      else for (torch::jit::Block* b : n->blocks()) run_block(b);
      if (n->kind() == c10::prim::SetAttr) {
        assign(n);
        continue;
      }
      if (n->kind() != c10::prim::GetAttr) continue;
      auto owner = modules.find(n->input(0));
      if (owner == modules.end()) continue;  // attribute of a non-module object
      const std::string attr = n->s(c10::attr::name);
      const Module& m = owner->second.first;
      const std::string path = attr_path(owner->second.second, attr);
      Value* out = n->output();
      if (auto set = assigned.find(path); set != assigned.end()) {  // read after `self.<attr> = value`
        out->replaceAllUsesWith(set->second);
        n->destroy();
        continue;
      }
      c10::IValue v = m.attr(attr);
      if (v.isModule()) {
        modules.emplace(out, std::make_pair(v.toModule(), path));
        continue;  // removed once its reads are resolved
      }
      Value* repl = nullptr;
      if (v.isObject() && !is_torchbind_object(v)) {  // a TorchScript class instance (BoxCoder)
        bool reads_only = true;
        for (const torch::jit::Use& u : out->uses()) reads_only = reads_only && u.user->kind() == c10::prim::GetAttr;
        if (reads_only) {  // read like a module
          modules.emplace(out, std::make_pair(Module(v.toObject()), path));
          continue;
        }
        repl = materialize(n, v, path);  // (`if self.map_levels is None:`)
      } else if (v.isTensor()) {
        repl = param_input(path, v.toTensor());
      } else if (v.isTensorList()) {
        repl = tensor_list(n, path, v.toTensorVector());
      } else if (is_torchbind_object(v)) {
        repl = object_constant(n, v);  // e.g. packed quantized weights, for decompose_quantized
        repl->setDebugName(path);
      } else {
        torch::jit::WithInsertPoint guard(n);
        auto c = torch::jit::tryInsertConstant(*tg.graph, v);
        if (!c)
          throw Error(Error::Kind::Conversion, "module attribute '" + path + "' of type " + v.type()->repr_str() +
                                                   " cannot be used in an exported graph");
        repl = *c;
      }
      out->replaceAllUsesWith(repl);
      n->destroy();
    }
  }

  // A TorchScript class instance held by a module, rebuilt before `at` as
  // forward() would build it (prim::CreateObject and a SetAttr per
  // attribute), for scalarize_objects: used beyond attribute reads (tested
  // against None, carried out of a branch assigning the attribute), it
  // cannot be read like a module.
  Value* materialize(Node* at, const c10::IValue& v, const std::string& path) {
    const auto& obj = v.toObjectRef();
    const auto type = obj.type();
    torch::jit::WithInsertPoint guard(at);
    Value* created = tg.graph->insertNode(tg.graph->createObject(type))->output();
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      const std::string name = type->getAttributeName(i);
      const c10::IValue& slot = obj.getSlot(i);
      const std::string attr = attr_path(path, name);
      Value* value = nullptr;
      if (slot.isTensor()) {
        value = param_input(attr, slot.toTensor());
      } else if (slot.isObject() && !is_torchbind_object(slot) && !slot.toObjectRef().type()->is_module()) {
        value = materialize(at, slot, attr);
      } else if (auto c = torch::jit::tryInsertConstant(*tg.graph, slot)) {
        value = *c;
      } else {
        throw Error(Error::Kind::Conversion, "attribute '" + attr + "' of type " + slot.type()->repr_str() +
                                                 " cannot be used in an exported graph");
      }
      tg.graph->insertNode(tg.graph->createSetAttr(created, name, value));
    }
    return created;
  }

  // An object of a C++ class registered with TorchScript (torch.classes.*).
  static bool is_torchbind_object(const c10::IValue& v) {
    if (!v.isObject()) return false;
    const auto name = v.toObjectRef().type()->name();
    return name && name->qualifiedName().rfind("__torch__.torch.classes.", 0) == 0;
  }

  // A constant holding the object itself, as TorchScript's freezing makes.
  Value* object_constant(Node* at, const c10::IValue& v) {
    Node* c = tg.graph->create(c10::prim::Constant);
    c->output()->setType(v.type());
    c->ival_(c10::attr::value, v);
    c->insertBefore(at);
    return c->output();
  }
};

}  // namespace

void lift_parameters(TorchGraph& tg, torch::jit::Module& module, const TorchContext&) {
  auto& graph = *tg.graph;
  // Parameters in state_dict order; others (non-persistent buffers) after, in use order.
  std::vector<std::pair<std::string, at::Tensor>> order;
  state_dict_order(module, "", order);
  Lifter lifter{tg, {}, {}, {}, {}, order, {}, {}, {}};
  Value* self = graph.inputs().at(0);
  lifter.modules.emplace(self, std::make_pair(module, std::string()));
  lifter.run_block(graph.block());

  // Drop the now unused module-typed GetAttr nodes, in every block.
  std::function<bool(torch::jit::Block*)> drop_unused = [&](torch::jit::Block* b) {
    bool changed = false;
    for (auto it = b->nodes().rbegin(); it != b->nodes().rend();) {
      Node* n = *it;
      ++it;
      for (torch::jit::Block* sub : n->blocks()) changed = drop_unused(sub) || changed;
      if (n->kind() == c10::prim::GetAttr && !n->output()->hasUses()) {
        n->destroy();
        changed = true;
      }
    }
    return changed;
  };
  while (drop_unused(graph.block())) {
  }
  if (self->hasUses()) {
    for (const auto& use : self->uses())
      throw Error(Error::Kind::Conversion, std::string("the model passes the module itself to ") +
                                               use.user->kind().toQualString() + ", which cannot be exported");
  }
  graph.eraseInput(0);

  std::unordered_map<std::string, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i) rank.emplace(order[i].first, i);
  auto key = [&](const std::string& name) { auto it = rank.find(name); return it == rank.end() ? order.size() : it->second; };
  std::stable_sort(lifter.lifted.begin(), lifter.lifted.end(),
                   [&](const auto& a, const auto& b) { return key(a.second.first) < key(b.second.first); });
  // Reorder the parameter inputs to match.
  const size_t first_param = graph.inputs().size() - lifter.lifted.size();
  for (size_t i = 0; i < lifter.lifted.size(); ++i) {
    Value* old = lifter.lifted[i].first;
    Value* fresh = graph.addInput(old->debugName());
    fresh->setType(old->type());
    old->replaceAllUsesWith(fresh);
    lifter.lifted[i].first = fresh;
  }
  for (size_t i = 0; i < lifter.lifted.size(); ++i) graph.eraseInput(first_param);

  tg.params.clear();
  for (const auto& [value, named] : lifter.lifted) tg.params.push_back(Param{value, named.first, named.second});
}

}  // namespace torch2onnx::torch_side
