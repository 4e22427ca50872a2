#include "ir/printer.h"

#include <iomanip>
#include <sstream>

namespace torch2onnx::ir {
namespace {

std::string dim_string(const Dim& d) {
  if (d.is_static()) return std::to_string(d.value);
  if (d.is_symbolic()) return d.param;
  return "*";
}

std::string tensor_string(const Tensor& t) {
  std::ostringstream s;
  if (t.numel() > 16) {
    s << "<" << dtype_torch_name(t.dtype()) << " tensor (" << format_dims(t.dims()) << ")>";
    return s.str();
  }
  const bool brackets = t.rank() > 0;
  s << "{";
  if (brackets) s << "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) s << ", ";
    if (is_floating(t.dtype()))
      s << std::setprecision(8) << t.double_at(i);
    else
      s << t.int_at(i);
  }
  if (brackets) s << "]";
  s << "}";
  return s.str();
}

std::string attr_string(const Attribute& a, int indent);

void print_graph_body(std::ostream& out, const Graph& g, int indent);

std::string attr_string(const Attribute& a, int indent) {
  std::ostringstream s;
  s << a.name << "=";
  switch (a.kind) {
    case AttrKind::Float: s << std::setprecision(8) << a.f; break;
    case AttrKind::Int: s << a.i; break;
    case AttrKind::String: s << '"' << a.s << '"'; break;
    case AttrKind::Tensor: s << tensor_string(*a.t); break;
    case AttrKind::Graph: s << "<graph " << a.g->name() << ">"; break;
    case AttrKind::Floats:
      s << "[";
      for (size_t i = 0; i < a.floats.size(); ++i) s << (i ? ", " : "") << std::setprecision(8) << a.floats[i];
      s << "]";
      break;
    case AttrKind::Ints: s << "[" << format_dims(a.ints) << "]"; break;
    case AttrKind::Type: s << type_string(a.type); break;
    case AttrKind::Strings:
      s << "[";
      for (size_t i = 0; i < a.strings.size(); ++i) s << (i ? ", " : "") << '"' << a.strings[i] << '"';
      s << "]";
      break;
  }
  (void)indent;
  return s.str();
}

void print_node(std::ostream& out, const Node& n, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  out << pad;
  for (size_t i = 0; i < n.num_outputs(); ++i)
    out << (i ? ", " : "") << "%" << n.output(i)->name() << " : " << type_string(n.output(i)->type());
  out << " = " << (n.domain().empty() ? std::string("onnx") : n.domain()) << "::" << n.op_type();
  std::vector<const Attribute*> plain;
  for (const Attribute& a : n.attributes())
    if (a.kind != AttrKind::Graph) plain.push_back(&a);
  if (!plain.empty()) {
    out << "[";
    for (size_t i = 0; i < plain.size(); ++i) out << (i ? ", " : "") << attr_string(*plain[i], indent);
    out << "]";
  }
  out << "(";
  for (size_t i = 0; i < n.num_inputs(); ++i)
    out << (i ? ", " : "") << (n.input(i) ? "%" + n.input(i)->name() : std::string("None"));
  out << ")";
  if (n.origin()) {
    out << ", scope: " << n.origin()->module_trace;
    const std::string& src = n.origin()->source;
    if (!src.empty()) out << " # " << src;
  }
  out << "\n";
  for (const Attribute& a : n.attributes()) {
    if (a.kind != AttrKind::Graph) continue;
    out << pad << "  " << a.name << "(";
    const Graph& g = *a.g;
    for (size_t i = 0; i < g.inputs().size(); ++i)
      out << (i ? ", " : "") << "%" << g.inputs()[i]->name() << " : " << type_string(g.inputs()[i]->type());
    out << "):\n";
    print_graph_body(out, g, indent + 4);
  }
}

void print_graph_body(std::ostream& out, const Graph& g, int indent) {
  for (const auto& n : g.nodes()) print_node(out, *n, indent);
  out << std::string(static_cast<size_t>(indent), ' ') << (indent > 2 ? "-> (" : "return (");
  for (size_t i = 0; i < g.outputs().size(); ++i) out << (i ? ", " : "") << "%" << g.outputs()[i]->name();
  out << ")\n";
}

}  // namespace

std::string type_string(const ValueType& t) {
  const bool wrapped = t.kind != ValueType::Kind::Tensor;
  std::string s = t.kind == ValueType::Kind::Sequence ? "Sequence(" : t.kind == ValueType::Kind::Optional ? "Optional(" : "";
  if (t.dtype == DType::Undefined) return s + "Tensor" + (wrapped ? ")" : "");
  s += dtype_torch_name(t.dtype);
  if (t.has_shape) {
    s += "(";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + dim_string(t.shape[i]);
    s += ")";
  }
  if (wrapped) s += ")";
  return s;
}

void print_model(std::ostream& out, const Model& model) {
  const Graph& g = *model.graph;
  out << "graph(";
  std::vector<const Value*> params;
  for (const Value* v : g.inputs()) params.push_back(v);
  for (const Value* v : g.initializers())
    if (!v->is_graph_input()) params.push_back(v);
  for (size_t i = 0; i < params.size(); ++i)
    out << (i ? ",\n      " : "") << "%" << params[i]->name() << " : " << type_string(params[i]->type());
  out << "):\n";
  print_graph_body(out, g, 2);
}

}  // namespace torch2onnx::ir
