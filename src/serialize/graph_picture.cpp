#include "serialize/graph_picture.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "torch2onnx/options.h"

extern char** environ;

namespace torch2onnx::serialize {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string short_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::Float: return "";
    case ir::DType::Double: return "f64 ";
    case ir::DType::Float16: return "f16 ";
    case ir::DType::BFloat16: return "bf16 ";
    case ir::DType::Int64: return "i64 ";
    case ir::DType::Int32: return "i32 ";
    case ir::DType::Int8: return "i8 ";
    case ir::DType::UInt8: return "u8 ";
    case ir::DType::Bool: return "bool ";
    case ir::DType::Undefined: return "? ";
    default: return std::string(ir::dtype_name(t)) + " ";
  }
}

// "1×64×56×56", "i64 [3]", "batch×3×224×224", "seq<f32>".
std::string short_type(const ir::ValueType& t) {
  if (t.kind == ir::ValueType::Kind::Sequence) return "sequence " + short_dtype(t.dtype);
  std::string s = short_dtype(t.dtype);
  if (!t.has_shape) return s + "?";
  if (t.shape.empty()) return s + "scalar";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const ir::Dim& d = t.shape[i];
    if (i) s += "×";
    s += d.is_static() ? std::to_string(d.value) : d.is_symbolic() ? d.param : "?";
  }
  return s;
}

// A weight or constant a node takes, as listed inside it: its dims, or the
// values of a small one ("[1]", "0.5").
std::string constant_text(const ir::Tensor& t) {
  if (t.numel() <= 4) {
    std::ostringstream s;
    const bool integral = !ir::is_floating(t.dtype());
    if (!t.dims().empty()) s << "[";
    bool first = true;
    for (double v : t.to_doubles()) {
      if (!first) s << ", ";
      first = false;
      if (integral) s << static_cast<int64_t>(v);
      else s << v;
    }
    if (!t.dims().empty()) s << "]";
    return s.str();
  }
  std::string s = short_dtype(t.dtype());
  for (size_t i = 0; i < t.dims().size(); ++i) s += (i ? "×" : "") + std::to_string(t.dims()[i]);
  return s;
}

// The scope a module path sits in, from the outermost: "layer1.0.conv1" ->
// {"layer1", "layer1.0", "layer1.0.conv1"}.
std::vector<std::string> scope_chain(const std::string& path) {
  std::vector<std::string> out;
  for (size_t i = 0; i <= path.size(); ++i)
    if ((i == path.size() || path[i] == '.') && i > 0) out.push_back(path.substr(0, i));
  return out;
}

// "ResNet/Sequential[layer1]/Bottleneck[0]" -> the class at depth `depth` ("Bottleneck" at 2).
std::string class_at(const std::string& trace, size_t depth) {
  size_t start = 0;
  for (size_t d = 0; d < depth; ++d) {
    start = trace.find('/', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  std::string part = trace.substr(start, trace.find('/', start) - start);
  return part.substr(0, part.find('['));
}

struct Scope {
  std::string label;
  size_t nodes = 0;  // drawn nodes in it and below
  std::vector<std::string> children;
  std::vector<std::string> members;  // dot ids of the nodes directly in it
  std::set<std::string> kinds;        // their op types
};

class DotWriter {
 public:
  explicit DotWriter(const ir::Model& model) : model_(model) {}

  std::string run() {
    const ir::Graph& g = *model_.graph;
    out_ << "digraph onnx {\n  rankdir=TB; nodesep=0.25; ranksep=0.3;\n"
         << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"Helvetica\", fontsize=11];\n"
         << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
    out_ << "  label=<<b>" << escape(g.name().empty() ? "graph" : g.name()) << "</b>  opset " << model_.opset
         << ", " << g.num_nodes() << " nodes>; labelloc=t; fontname=\"Helvetica\";\n";
    for (const ir::Value* v : g.inputs()) {
      if (v->is_initializer()) continue;
      const std::string id = "in" + std::to_string(ids_.size());
      ids_[v] = id;
      out_ << "  " << id << " [shape=oval, fillcolor=\"#dff0d8\", label=<<b>" << escape(v->name()) << "</b><br/>"
           << escape(short_type(v->type())) << ">];\n";
    }
    // The nodes drawn (Constant nodes are listed inside their users instead).
    std::vector<const ir::Node*> drawn;
    for (const auto& n : g.nodes()) {
      if (n->op_type() == "Constant" && n->domain().empty()) continue;
      const std::string id = "n" + std::to_string(drawn.size());
      for (const ir::Value* o : n->outputs()) ids_[o] = id;
      node_ids_[n.get()] = id;
      drawn.push_back(n.get());
      place(n.get(), id);
    }
    count("");
    write_scope("", 1);
    for (const ir::Node* n : drawn) edges_into(n);
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const ir::Value* v = g.outputs()[i];
      const std::string id = "out" + std::to_string(i);
      out_ << "  " << id << " [shape=oval, fillcolor=\"#fcf0d4\", label=<<b>" << escape(v->name()) << "</b><br/>"
           << escape(short_type(v->type())) << ">];\n";
      auto from = ids_.find(v);
      if (from != ids_.end()) out_ << "  " << from->second << " -> " << id << edge_class(from->second, id) << ";\n";
    }
    out_ << "}\n";
    return out_.str();
  }

 private:
  // Puts a node into the scope of its module and writes its label.
  void place(const ir::Node* n, const std::string& id) {
    const ir::Origin* o = n->origin().get();
    const std::string path = o ? o->module_path : std::string();
    std::vector<std::string> chain = scope_chain(path);
    for (size_t d = 0; d < chain.size(); ++d) {
      Scope& s = scopes_[chain[d]];
      if (s.label.empty()) {
        const std::string cls = o ? class_at(o->module_trace, d + 1) : std::string();
        s.label = chain[d] + (cls.empty() ? "" : " (" + cls + ")");
      }
      const std::string parent = d ? chain[d - 1] : std::string();
      auto& siblings = scopes_[parent].children;
      if (std::find(siblings.begin(), siblings.end(), chain[d]) == siblings.end()) siblings.push_back(chain[d]);
    }
    scopes_[path].members.push_back(id);
    scopes_[path].kinds.insert(n->op_type());
    node_scope_[id] = path;

    std::string label = "<b>" + escape(n->op_type()) + "</b>";
    if (!n->domain().empty()) label += " <font point-size=\"8\">" + escape(n->domain()) + "</font>";
    const std::vector<ir::Graph*> subs = n->subgraphs();
    if (!subs.empty()) {
      size_t inner = 0;
      for (const ir::Graph* s : subs) inner += s->num_nodes();
      label += "<br/><font point-size=\"9\">" + std::to_string(subs.size()) + (subs.size() == 1 ? " body, " : " bodies, ") +
               std::to_string(inner) + " nodes</font>";
    }
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const ir::Value* v = n->inputs()[i];
      const ir::Tensor* c = v ? v->constant() : nullptr;
      if (!c) continue;
      // (a weight by its name; a constant the exporter made by its value or dims)
      std::string name = v->is_initializer() && !v->is_derived() ? v->name() + " " : std::string();
      if (name.size() > 30) name = "…" + name.substr(name.size() - 29);
      label += "<br/><font point-size=\"8\" color=\"#555555\">" + escape(name + constant_text(*c)) + "</font>";
    }
    label_[id] = label;
  }

  // How many nodes each scope holds, its subscopes' included.
  size_t count(const std::string& key) {
    Scope& s = scopes_[key];
    s.nodes = s.members.size();
    for (const std::string& c : s.children) s.nodes += count(c);
    return s.nodes;
  }

  // The scope classes of a node: every enclosing drawn scope, "s<index>".
  std::string classes_of(const std::string& path) {
    std::string out;
    for (const std::string& s : scope_chain(path)) {
      auto it = scope_index_.find(s);
      if (it != scope_index_.end()) out += (out.empty() ? "" : " ") + std::string("s") + std::to_string(it->second);
    }
    return out;
  }

  void write_node(const std::string& id, const std::string& path) {
    std::string label = label_[id];
    if (!path.empty() && !scope_index_.count(path)) {  // a module of its own: named in the node, from its box
      std::string box;
      for (const std::string& sc : scope_chain(path))
        if (scope_index_.count(sc)) box = sc;
      const std::string name = box.empty() ? path : path.substr(box.size() + 1);
      label += "<br/><font point-size=\"8\" color=\"#3060a0\">" + escape(name) + "</font>";
    }
    out_ << "  " << id << " [label=<" << label << ">, class=\"" << classes_of(path) << "\"];\n";
  }

  void write_scope(const std::string& key, int depth) {
    Scope& s = scopes_[key];
    // (a small module without submodules (Linear: MatMul, Add) is no box,
    // nor is one whose nodes are all of one kind, as ResNet's ReLU, called
    // three times per block: a box would pull the calls together out of the
    // data flow. Their nodes carry the module's name.)
    const bool boxed = !key.empty() && s.nodes >= 2 && (!s.children.empty() || (s.nodes >= 4 && s.kinds.size() > 1));
    if (boxed) {
      const size_t index = scope_index_.size();
      const std::string ancestors = classes_of(key);
      scope_index_[key] = index;
      out_ << "  subgraph cluster_" << index << " {\n    id=\"scope" << index << "\"; class=\"" << ancestors
           << "\"; label=<" << escape(s.label) << ">; labeljust=l; fontsize=10; style=\"rounded,filled\"; "
           << "fillcolor=\"" << (depth % 2 ? "#fafafa" : "#f0f0f0") << "\"; color=\"#bbbbbb\";\n";
    }
    for (const std::string& id : s.members) write_node(id, key);
    for (const std::string& c : s.children) write_scope(c, boxed ? depth + 1 : depth);
    if (boxed) out_ << "  }\n";
  }

  std::string edge_class(const std::string& from, const std::string& to) {
    std::set<std::string> cls;
    for (const std::string& id : {from, to}) {
      auto it = node_scope_.find(id);
      if (it == node_scope_.end()) continue;
      std::istringstream s(classes_of(it->second));
      for (std::string c; s >> c;) cls.insert(c);
    }
    if (cls.empty()) return "";
    std::string out = " [class=\"";
    for (const std::string& c : cls) out += c + " ";
    out.back() = '"';
    return out + "]";
  }

  void edges_into(const ir::Node* n) {
    const std::string& to = node_ids_[n];
    std::set<std::string> seen;
    for (const ir::Value* v : n->inputs()) {
      if (!v || v->constant()) continue;
      auto from = ids_.find(v);
      if (from == ids_.end() || !seen.insert(from->second + v->name()).second) continue;
      std::string cls = edge_class(from->second, to);
      const std::string label = "label=\"" + escape(short_type(v->type())) + "\"";
      cls = cls.empty() ? " [" + label + "]" : cls.substr(0, cls.size() - 1) + ", " + label + "]";
      out_ << "  " << from->second << " -> " << to << cls << ";\n";
    }
  }

  const ir::Model& model_;
  std::ostringstream out_;
  std::unordered_map<const ir::Value*, std::string> ids_;  // value -> the dot id of what produces it
  std::unordered_map<const ir::Node*, std::string> node_ids_;
  std::map<std::string, Scope> scopes_;  // module path -> scope ("" the top)
  std::unordered_map<std::string, std::string> node_scope_;  // dot id -> module path
  std::unordered_map<std::string, std::string> label_;
  std::map<std::string, size_t> scope_index_;  // drawn scopes
};

// Folding: a click on a scope's title hides what is inside it (its nodes,
// the edges that touch them, the scopes nested in it), a second shows it.
const char* kFoldScript = R"(<script type="text/ecmascript"><![CDATA[
(function () {
  function refresh() {
    var folded = {};
    document.querySelectorAll('g.cluster.folded').forEach(function (c) { folded['s' + c.id.slice(5)] = true; });
    document.querySelectorAll('g.node, g.edge, g.cluster').forEach(function (e) {
      var hide = false;
      e.classList.forEach(function (k) { if (folded[k]) hide = true; });
      e.style.display = hide ? 'none' : '';
    });
  }
  document.querySelectorAll('g.cluster').forEach(function (c) {
    var title = c.querySelector('text');
    if (!title) return;
    title.style.cursor = 'pointer';
    title.addEventListener('click', function () { c.classList.toggle('folded'); refresh(); });
  });
})();
]]></script>
)";

void remove_quietly(const std::string& path) { std::remove(path.c_str()); }

}  // namespace

std::string graph_dot(const ir::Model& model) { return DotWriter(model).run(); }

void write_graph_picture(const ir::Model& model, const std::string& path) {
  const std::string dot_path = path + ".dot.tmp", svg_tmp = path + ".tmp";
  std::string format = path.substr(path.rfind('.') + 1);
  for (char& ch : format) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (path.rfind('.') == std::string::npos || (format != "svg" && format != "png" && format != "pdf" && format != "dot"))
    throw Error(Error::Kind::Usage, "the graph picture '" + path + "' must end in .svg, .png, .pdf or .dot");
  {
    std::ofstream out(dot_path);
    out << graph_dot(model);
    if (!out) {
      remove_quietly(dot_path);
      throw Error(Error::Kind::Io, "cannot write the graph picture next to '" + path + "'");
    }
  }
  if (format == "dot") {  // the layout's input itself
    if (std::rename(dot_path.c_str(), path.c_str()) != 0) {
      remove_quietly(dot_path);
      throw Error(Error::Kind::Io, "cannot write the graph picture '" + path + "'");
    }
    return;
  }
  std::vector<std::string> argv_s = {"dot", "-T" + format, "-o", svg_tmp, dot_path};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  const int spawned = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  if (spawned == 0) waitpid(pid, &status, 0);
  remove_quietly(dot_path);
  if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    remove_quietly(svg_tmp);
    throw Error(Error::Kind::Io, spawned != 0 ? "drawing the graph needs Graphviz's `dot` on the PATH "
                                                "(Debian: apt install graphviz)"
                                              : "Graphviz's dot failed to draw the graph for '" + path + "'");
  }
  if (format != "svg") {
    if (std::rename(svg_tmp.c_str(), path.c_str()) != 0) {
      remove_quietly(svg_tmp);
      throw Error(Error::Kind::Io, "cannot write the graph picture '" + path + "'");
    }
    return;
  }
  // The folding script, inside the SVG.
  std::ifstream in(svg_tmp);
  std::stringstream svg;
  svg << in.rdbuf();
  in.close();
  std::string text = svg.str();
  const size_t end = text.rfind("</svg>");
  if (end != std::string::npos) text.insert(end, kFoldScript);
  {
    std::ofstream out(svg_tmp, std::ios::trunc);
    out << text;
    if (!out) {
      remove_quietly(svg_tmp);
      throw Error(Error::Kind::Io, "cannot write the graph picture '" + path + "'");
    }
  }
  if (std::rename(svg_tmp.c_str(), path.c_str()) != 0) {
    remove_quietly(svg_tmp);
    throw Error(Error::Kind::Io, "cannot write the graph picture '" + path + "'");
  }
}

}  // namespace torch2onnx::serialize
