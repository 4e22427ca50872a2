// Nodes that compute the same thing from the same values are one node: a
// later node with the same op, the same inputs and the same attributes as an
// earlier one reads the earlier one's outputs instead (the shape arithmetic a
// model repeats per layer: Shape(x), Gather, Unsqueeze, Concat of the batch
// and sequence sizes, the same mask or position ids built again). Each graph
// on its own (a subgraph's nodes are compared with the subgraph's).
//
// Not merged: nodes with subgraphs or tensor attributes (Constant nodes are
// deduplicate_constants' work), random ops, ops of other domains (custom ops
// may keep state); a later node whose output is a graph output stays (its
// name is the caller's).
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "onnx_passes/passes.h"

namespace torch2onnx::onnx_passes {
namespace {

bool mergeable(const ir::Node& n) {
  static const std::unordered_set<std::string> random = {
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  if (n.num_outputs() == 0 || !n.subgraphs().empty() || random.count(n.op_type())) return false;
  for (const ir::Attribute& a : n.attributes())
    if (a.kind == ir::AttrKind::Tensor || a.kind == ir::AttrKind::Graph) return false;
  return true;
}

bool makes_graph_output(const ir::Node& n) {
  for (const ir::Value* out : n.outputs())
    if (is_graph_output(out)) return true;
  return false;
}

void append_bits(std::string& key, const void* p, size_t n) { key.append(static_cast<const char*>(p), n); }

// Everything that decides what the node computes: op, inputs (by identity),
// output count, attributes (exact values).
std::string key_of(const ir::Node& n) {
  std::string key = n.op_type();
  key += '\0';
  for (const ir::Value* in : n.inputs()) append_bits(key, &in, sizeof in);
  const size_t outs = n.num_outputs();
  append_bits(key, &outs, sizeof outs);
  for (const ir::Attribute& a : n.attributes()) {
    key += '\1';
    key += a.name;
    key += '\0';
    const int kind = static_cast<int>(a.kind);
    append_bits(key, &kind, sizeof kind);
    switch (a.kind) {
      case ir::AttrKind::Float: append_bits(key, &a.f, sizeof a.f); break;
      case ir::AttrKind::Int: append_bits(key, &a.i, sizeof a.i); break;
      case ir::AttrKind::String: key += a.s; key += '\0'; break;
      case ir::AttrKind::Floats: for (double f : a.floats) append_bits(key, &f, sizeof f); break;
      case ir::AttrKind::Ints: for (int64_t i : a.ints) append_bits(key, &i, sizeof i); break;
      case ir::AttrKind::Strings:
        for (const auto& s : a.strings) {
          key += s;
          key += '\0';
        }
        break;
      case ir::AttrKind::Type: {
        const int dt = static_cast<int>(a.type.dtype), tk = static_cast<int>(a.type.kind);
        append_bits(key, &dt, sizeof dt);
        append_bits(key, &tk, sizeof tk);
        break;
      }
      case ir::AttrKind::Tensor:
      case ir::AttrKind::Graph: break;  // (not mergeable)
    }
  }
  return key;
}

size_t eliminate(ir::Graph& g) {
  size_t removed = 0;
  std::unordered_map<std::string, ir::Node*> seen;
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  for (ir::Node* n : order) {
    for (ir::Graph* sub : n->subgraphs()) removed += eliminate(*sub);
    if (!mergeable(*n)) continue;
    auto [it, fresh] = seen.emplace(key_of(*n), n);
    if (fresh || makes_graph_output(*n)) continue;  // (a graph output stays: its name is the caller's)
    ir::Node* first = it->second;
    for (size_t k = 0; k < n->num_outputs(); ++k) n->output(k)->replace_all_uses_with(first->output(k));
    n->destroy();
    ++removed;
  }
  return removed;
}

}  // namespace

void eliminate_common_subexpressions(ir::Model& model, const PassContext&) { eliminate(*model.graph); }

}  // namespace torch2onnx::onnx_passes
