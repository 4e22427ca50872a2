// export_modules_as_functions: each call of a selected submodule (its nodes:
// those whose origin lies in that module path or below it) becomes one node
// `<domain>::<Class>` calling an ONNX model-local function. Innermost calls
// go first, so an outer module's function calls its children's. Values read
// from outside (weights included) are the function's inputs, values read
// after it its outputs. Calls with the same body share a function; bodies
// that differ (other constants) get their own (`Class`, `Class_1`, ...).
//
// A call is left inline when its nodes are not contiguous in data flow (an
// outside node both reads from it and feeds it) or when one of them holds a
// subgraph reading values from outside the call.
#include <algorithm>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

using ir::Node;
using ir::Value;

// "__torch__.pkg.mod.___torch_mangle_3.Cls" -> "pkg.mod.Cls"
std::string python_class(const std::string& qualified) {
  std::string out;
  std::string_view s = qualified;
  if (s.substr(0, 10) == "__torch__.") s.remove_prefix(10);
  while (!s.empty()) {
    size_t dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    if (part.substr(0, 15) != "___torch_mangle") out += (out.empty() ? "" : ".") + std::string(part);
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return out;
}

std::string plain_name(const std::string& cls) {
  size_t dot = cls.rfind('.');
  return dot == std::string::npos ? cls : cls.substr(dot + 1);
}

std::string module_of(const std::string& cls) {
  size_t dot = cls.rfind('.');
  return dot == std::string::npos ? std::string("torch2onnx.modules") : cls.substr(0, dot);
}

bool selected(const std::vector<std::string>& wanted, const std::string& cls) {
  for (const std::string& w : wanted)
    if (w == "*" || w == cls || w == plain_name(cls)) return true;
  return false;
}

bool within(const std::string& path, const std::string& prefix) {
  return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                            path[prefix.size()] == '.');
}

// Values a node reads, its subgraphs' reads of outer values included.
void reads(const Node* n, std::vector<Value*>& out) {
  for (Value* v : n->inputs())
    if (v) out.push_back(v);
  for (ir::Graph* g : n->subgraphs())
    for (const auto& inner : g->nodes()) {
      std::vector<Value*> r;
      reads(inner.get(), r);
      for (Value* v : r)
        if (v->graph() != g) out.push_back(v);
    }
}

// Subgraph reads of values outside `g` (the main graph) by nodes of `n`.
bool subgraph_reads_outside(const Node* n, const std::unordered_set<const Node*>& call) {
  for (ir::Graph* g : n->subgraphs())
    for (const auto& inner : g->nodes()) {
      std::vector<Value*> r;
      reads(inner.get(), r);
      for (Value* v : r)
        if (v->graph() != g && (!v->producer() || !call.count(v->producer()))) return true;
    }
  return false;
}

// The nodes inside `n`'s subgraphs, at any depth.
void inner_nodes(const Node* n, std::unordered_set<const Node*>& out) {
  for (ir::Graph* g : n->subgraphs())
    for (const auto& inner : g->nodes()) {
      out.insert(inner.get());
      inner_nodes(inner.get(), out);
    }
}

std::shared_ptr<ir::Graph> copy_graph(const ir::Graph& g, ir::Graph* parent,
                                      std::unordered_map<const Value*, Value*>& map);

// A copy of `n` at the end of `into`, reading through `map` (filled with its
// outputs); its subgraphs are copied too, their reads of outer values
// remapped: a branch that reads a value of the call reads the body's copy.
Node* copy_node(const Node* n, ir::Graph& into, std::unordered_map<const Value*, Value*>& map) {
  std::vector<Value*> ins;
  for (Value* v : n->inputs()) ins.push_back(v ? map.at(v) : nullptr);
  ir::Attributes attrs = n->attributes();
  for (ir::Attribute& a : attrs)
    if (a.kind == ir::AttrKind::Graph && a.g) a.g = copy_graph(*a.g, &into, map);
  into.set_current_origin(n->origin());
  Node* copy = into.create_node(n->op_type(), ins, n->num_outputs(), std::move(attrs), n->domain());
  copy->set_doc_string(n->doc_string());
  for (size_t o = 0; o < n->num_outputs(); ++o) {
    copy->output(o)->set_type(n->output(o)->type());
    into.rename_unique(copy->output(o), n->output(o)->name());
    map[n->output(o)] = copy->output(o);
  }
  return copy;
}

std::shared_ptr<ir::Graph> copy_graph(const ir::Graph& g, ir::Graph* parent,
                                      std::unordered_map<const Value*, Value*>& map) {
  auto out = std::make_shared<ir::Graph>(parent);
  out->set_name(g.name());
  for (Value* v : g.inputs()) map[v] = out->add_input(v->name(), v->type());
  for (Value* v : g.initializers())
    if (!map.count(v)) map[v] = out->add_initializer(v->name(), *v->initializer());
  for (const auto& n : g.nodes()) copy_node(n.get(), *out, map);
  for (Value* v : g.outputs()) out->add_output(map.at(v));
  return out;
}

// A structural key of a function body: equal keys compute the same thing.
std::string body_key(const ir::Graph& body) {
  std::ostringstream k;
  std::unordered_map<const Value*, std::string> id;
  for (size_t i = 0; i < body.inputs().size(); ++i) id[body.inputs()[i]] = "i" + std::to_string(i);
  size_t n_idx = 0;
  for (const auto& n : body.nodes()) {
    k << n->domain() << "::" << n->op_type() << "(";
    for (const Value* v : n->inputs()) k << (v ? id.at(v) : "-") << ",";
    k << ")[";
    for (const ir::Attribute& a : n->attributes()) {
      k << a.name << ":" << static_cast<int>(a.kind) << "=";
      switch (a.kind) {
        case ir::AttrKind::Float: k << a.f; break;
        case ir::AttrKind::Int: k << a.i; break;
        case ir::AttrKind::String: k << a.s.size() << ":" << a.s; break;
        case ir::AttrKind::Floats:
          for (double f : a.floats) k << f << ",";
          break;
        case ir::AttrKind::Ints:
          for (int64_t i : a.ints) k << i << ",";
          break;
        case ir::AttrKind::Strings:
          for (const auto& s : a.strings) k << s.size() << ":" << s << ",";
          break;
        case ir::AttrKind::Tensor: {
          k << static_cast<int>(a.t->dtype()) << "{";
          for (int64_t d : a.t->dims()) k << d << ",";
          k << "}" << a.t->content_hash();
          break;
        }
        case ir::AttrKind::Graph: k << "graph@" << a.g.get(); break;  // never shared
        case ir::AttrKind::Type: k << ir::type_string(a.type); break;
      }
      k << ";";
    }
    k << "]";
    for (size_t o = 0; o < n->num_outputs(); ++o) id[n->output(o)] = "n" + std::to_string(n_idx) + "." + std::to_string(o);
    ++n_idx;
    k << "\n";
  }
  k << "->";
  for (const Value* v : body.outputs()) k << id.at(v) << ",";
  return k.str();
}

class Outliner {
 public:
  Outliner(ir::Model& model, const PassContext& ctx) : model_(model), g_(*model.graph), ctx_(ctx) {}

  void run() {
    // The calls to outline, deepest first.
    std::vector<std::pair<std::string, std::string>> calls;  // (path, class)
    for (const auto& [path, qualified] : ctx_.module_classes) {
      if (path.empty()) continue;  // the model itself is the graph
      std::string cls = python_class(qualified);
      if (selected(ctx_.options.export_modules_as_functions, cls)) calls.emplace_back(path, cls);
    }
    auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '.'); };
    std::stable_sort(calls.begin(), calls.end(),
                     [&](const auto& a, const auto& b) { return depth(a.first) > depth(b.first); });
    for (const auto& [path, cls] : calls) outline(path, cls);
  }

 private:
  void outline(const std::string& path, const std::string& cls) {
    std::vector<Node*> order;
    std::unordered_map<const Node*, size_t> index;
    for (const auto& n : g_.nodes()) {
      index[n.get()] = order.size();
      order.push_back(n.get());
    }
    std::vector<Node*> members;
    std::unordered_set<const Node*> call;
    for (Node* n : order)
      if (n->origin() && within(n->origin()->module_path, path)) {
        members.push_back(n);
        call.insert(n);
      }
    if (members.empty()) return;
    for (Node* n : members)
      if (subgraph_reads_outside(n, call)) return;

    // Nodes between the first and last member: those that read from the call
    // ("after") must run after it, and must not feed it.
    const size_t first = index[members.front()], last = index[members.back()];
    std::unordered_set<const Node*> after;
    std::vector<Node*> before_nodes, after_nodes;
    for (size_t i = first + 1; i < last; ++i) {
      Node* n = order[i];
      if (call.count(n)) continue;
      std::vector<Value*> r;
      reads(n, r);
      bool reads_call = false;
      for (Value* v : r)
        if (v->producer() && (call.count(v->producer()) || after.count(v->producer()))) reads_call = true;
      if (reads_call) {
        after.insert(n);
        after_nodes.push_back(n);
      } else {
        before_nodes.push_back(n);
      }
    }
    for (Node* n : members) {
      std::vector<Value*> r;
      reads(n, r);
      for (Value* v : r)
        if (v->producer() && after.count(v->producer())) return;  // not convex: leave it inline
    }

    // The function's inputs (read from outside, in first-read order) and
    // outputs (read after the call).
    std::vector<Value*> inputs, outputs;
    std::unordered_set<const Value*> seen;
    std::unordered_set<const Node*> inside = call;  // (and the nodes of the members' subgraphs)
    for (Node* n : members) inner_nodes(n, inside);
    for (Node* n : members)
      for (Value* v : n->inputs())
        if (v && (!v->producer() || !call.count(v->producer())) && seen.insert(v).second) inputs.push_back(v);
    for (Node* n : members)
      for (Value* o : n->outputs()) {
        bool outside = false;
        for (const ir::Use& u : o->uses()) outside = outside || !u.user || !inside.count(u.user);
        if (outside) outputs.push_back(o);
      }
    if (outputs.empty()) return;

    // The body: copies of the members.
    auto body = std::make_unique<ir::Graph>();
    std::unordered_map<const Value*, Value*> map;
    for (Value* v : inputs) map[v] = body->add_input(v->name(), v->type());
    for (Node* n : members) copy_node(n, *body, map);
    for (Value* o : outputs) body->add_output(map.at(o));
    const std::string domain = module_of(cls);
    const std::string name = function_for(domain, plain_name(cls), std::move(body));

    // The call, where the first member was; the nodes that read from it after it.
    for (Node* n : before_nodes) n->move_before(members.front());
    auto origin = std::make_shared<ir::Origin>(members.front()->origin() ? *members.front()->origin() : ir::Origin{});
    origin->module_path = path;
    origin->torch_kind = cls;
    g_.set_current_origin(origin);
    g_.set_insert_point(members.front());
    Node* node = g_.create_node(name, inputs, outputs.size(), {}, domain);
    g_.set_insert_point(nullptr);
    g_.set_current_origin(nullptr);
    for (size_t k = 0; k < outputs.size(); ++k) {
      node->output(k)->set_type(outputs[k]->type());
      outputs[k]->replace_all_uses_with(node->output(k));
    }
    for (auto it = members.rbegin(); it != members.rend(); ++it) (*it)->destroy();
    for (size_t k = 0; k < outputs.size(); ++k) {
      const std::string original = outputs[k]->name();
      g_.rename_unique(outputs[k], original + "__outlined");
      g_.rename(node->output(k), original);
    }
    model_.custom_opsets.emplace(domain, 1);
  }

  // The name of a function in `domain` with this body: an existing one with
  // the same body, or a new one.
  std::string function_for(const std::string& domain, const std::string& base, std::unique_ptr<ir::Graph> body) {
    const std::string key = body_key(*body);
    for (size_t i = 0; i < model_.functions.size(); ++i) {
      const ir::Function& f = model_.functions[i];
      if (f.domain == domain && bases_[i] == base && keys_[i] == key) return f.name;
    }
    std::string name = base;
    for (int k = 1; taken(domain, name); ++k) name = base + "_" + std::to_string(k);
    body->set_name(name);
    model_.functions.push_back(ir::Function{domain, name, std::move(body)});
    keys_.push_back(key);
    bases_.push_back(base);
    return name;
  }

  bool taken(const std::string& domain, const std::string& name) const {
    for (const ir::Function& f : model_.functions)
      if (f.domain == domain && f.name == name) return true;
    return false;
  }

  ir::Model& model_;
  ir::Graph& g_;
  const PassContext& ctx_;
  std::vector<std::string> keys_;   // body_key of model_.functions[i]
  std::vector<std::string> bases_;  // the class model_.functions[i] was made for ("Block" of "Block_2")
};

}  // namespace

void outline_module_functions(ir::Model& model, const PassContext& ctx) {
  if (ctx.options.export_modules_as_functions.empty()) return;
  Outliner(model, ctx).run();
}

}  // namespace torch2onnx::onnx_passes
