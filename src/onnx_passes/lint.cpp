#include <unordered_set>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

[[noreturn]] void fail(const char* pass, const std::string& what) {
  throw Error(Error::Kind::Internal, std::string("IR lint after ") + pass + ": " + what);
}

void check(const ir::Graph& g, const char* pass, std::unordered_set<const ir::Value*> visible,
           std::unordered_set<std::string>& names) {
  auto define = [&](const ir::Value* v) {
    if (!names.insert(v->name()).second) fail(pass, "value name '" + v->name() + "' is defined twice");
    visible.insert(v);
  };
  for (const ir::Value* v : g.inputs()) define(v);
  for (const ir::Value* v : g.initializers())
    if (!v->is_graph_input()) define(v);
  for (const auto& n : g.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const ir::Value* in = n->input(i);
      if (!in) continue;
      if (!visible.count(in))
        fail(pass, n->op_type() + " node '" + n->name() + "' reads '" + in->name() + "' before it is defined");
      bool listed = false;
      for (const ir::Use& u : in->uses()) listed = listed || (u.user == n.get() && u.index == i);
      if (!listed) fail(pass, "use list of '" + in->name() + "' misses " + n->name());
    }
    for (ir::Graph* sub : n->subgraphs()) check(*sub, pass, visible, names);
    for (const ir::Value* o : n->outputs()) {
      if (o->producer() != n.get()) fail(pass, "output '" + o->name() + "' has the wrong producer");
      define(o);
    }
  }
  for (const ir::Value* o : g.outputs())
    if (!visible.count(o)) fail(pass, "graph output '" + o->name() + "' is not defined");
}

}  // namespace

void lint(const ir::Model& model, const char* after_pass) {
  std::unordered_set<std::string> names;
  check(*model.graph, after_pass, {}, names);
}

}  // namespace torch2onnx::onnx_passes
