// torch2onnx::find_mismatch (include/torch2onnx/find_mismatch.h).
#include "torch2onnx/find_mismatch.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "api_internal.h"
#include "torch_passes/origin.h"
#include "verify/onnxruntime.h"
#include "verify/mismatch_parts.h"
#include "verify/values.h"

namespace torch2onnx {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

struct Context {
  std::shared_ptr<Graph> graph;
  std::unordered_map<const Value*, c10::IValue> env;  // what LibTorch computed for each value
  ExportOptions options;
  VerifyOptions compare;
};

Value* tuple_of(Graph& g, const std::vector<Value*>& values) {
  Node* t = g.createTuple(values);
  g.appendNode(t);
  return t->output();
}

// The TorchScript side of a part: exports `nodes` alone and compares ONNX
// Runtime with LibTorch on the values that reach them.
verify_detail::PartVerdict check_part(Context& ctx, const std::vector<Node*>& nodes, const std::string& id) {
  verify_detail::PartVerdict verdict;
  // The values flowing in (computed before, not constants) and out (used after, or graph outputs).
  std::vector<Value*> inputs, outputs;
  {
    std::unordered_set<const Node*> inside(nodes.begin(), nodes.end());
    std::unordered_set<const Value*> defined, seen;
    for (Node* n : nodes)
      for (Value* o : n->outputs()) defined.insert(o);
    for (Node* n : nodes)
      for (Value* v : n->inputs())
        if (!defined.count(v) && v->node()->kind() != c10::prim::Constant && seen.insert(v).second) inputs.push_back(v);
    std::unordered_set<const Value*> graph_outputs(ctx.graph->outputs().begin(), ctx.graph->outputs().end());
    for (Node* n : nodes)
      for (Value* o : n->outputs()) {
        bool used_after = graph_outputs.count(o) != 0;
        for (const auto& u : o->uses()) used_after = used_after || !inside.count(u.user);
        if (used_after) outputs.push_back(o);
      }
  }
  auto g = std::make_shared<Graph>();
  std::unordered_map<Value*, Value*> map;
  for (Value* v : inputs) map[v] = g->addInput()->setType(v->type());
  std::function<Value*(Value*)> lookup = [&](Value* v) -> Value* {
    auto it = map.find(v);
    if (it != map.end()) return it->second;
    Node* c = g->insertNode(g->createClone(v->node(), lookup));  // a constant used here: copied
    return map[v] = c->output();
  };
  for (Node* n : nodes) {
    Node* c = g->insertNode(g->createClone(n, lookup));
    for (size_t i = 0; i < n->outputs().size(); ++i) map[n->output(i)] = c->output(i);
  }
  if (outputs.empty()) return verdict;
  std::vector<Value*> outs;
  for (Value* o : outputs) outs.push_back(map.at(o));
  g->registerOutput(outs.size() == 1 ? outs[0] : tuple_of(*g, outs));

  std::vector<c10::IValue> args;
  for (Value* v : inputs) args.push_back(ctx.env.at(v));
  std::vector<c10::IValue> expected;
  for (Value* o : outputs) verify_detail::flatten(ctx.env.at(o), true, expected);
  try {
    ExportOptions options = verify_detail::part_options(ctx.options);
    std::vector<size_t> unused;
    options.unused_input = [&unused](size_t index, const std::string&) { unused.push_back(index); };
    const std::string bytes = api::export_to_bytes(
        api::module_from_graph(g, "part_" + (id.empty() ? std::string("all") : id)), args, options, {});
    std::vector<c10::IValue> leaves;
    verify_detail::flatten(c10::ivalue::Tuple::create(args), true, leaves);
    std::vector<c10::IValue> fed;
    for (size_t k = 0; k < leaves.size(); ++k)
      if (std::find(unused.begin(), unused.end(), k) == unused.end()) fed.push_back(leaves[k]);
    verdict.mismatch = verify_detail::compare_in_onnx_runtime(bytes, fed, expected, ctx.compare);
  } catch (const std::exception& e) {  // an export or run error is a verdict too
    verdict.set_error(e.what());
  }
  return verdict;
}

}  // namespace

namespace verify_detail {

void PartVerdict::set_error(const std::string& what) {
  export_error = what.substr(0, what.find('\n'));
  mismatch = "could not be checked on its own: " + export_error;
}

ExportOptions part_options(const ExportOptions& user) {
  ExportOptions options = user;
  options.input_names.clear();
  options.output_names.clear();
  options.dynamic_axes.clear();
  options.report.clear();  // (the parts are not the export the user asked a report or picture of)
  options.graph_picture.clear();
  options.unused_input = nullptr;
  return options;
}

std::string compare_in_onnx_runtime(const std::string& model_bytes, const std::vector<c10::IValue>& inputs,
                                    const std::vector<c10::IValue>& expected, const VerifyOptions& compare_options) {
  ort::Session session(model_bytes.data(), model_bytes.size());
  if (inputs.size() != session.inputs().size())
    throw Error(Error::Kind::Check, std::to_string(inputs.size()) + " values for " +
                                        std::to_string(session.inputs().size()) + " graph inputs");
  std::vector<ort::HostTensor> feeds;
  for (size_t k = 0; k < inputs.size(); ++k) feeds.push_back(onnx_input(inputs[k], session.inputs()[k]));
  const auto actual = session.run(feeds);
  if (actual.size() != expected.size())
    throw Error(Error::Kind::Check, "ONNX Runtime gave " + std::to_string(actual.size()) + " outputs, LibTorch " +
                                        std::to_string(expected.size()));
  std::string why;
  for (size_t k = 0; k < expected.size(); ++k) {
    VerifyRow row = compare(k, as_tensor(expected[k]), actual[k], compare_options);
    if (!row.ok) why += (why.empty() ? "" : "; ") + ("output " + std::to_string(k) + ": " + row.why);
  }
  return why;
}

GraphPart bisect(const PartKinds& kind, const PartLabel& label, const PartCheck& check,
                 const std::vector<size_t>& nodes, const std::string& id) {
  GraphPart info;
  info.id = id;
  for (size_t i : nodes) info.node_kinds.push_back(kind(i));
  info.label = nodes.size() == 1 ? label(nodes[0]) : std::to_string(nodes.size()) + " operators";
  const PartVerdict verdict = check(nodes, id);
  info.mismatch = verdict.mismatch;
  info.export_error = verdict.export_error;
  if (!info.has_mismatch() || nodes.size() <= 1 || !info.export_error.empty()) return info;
  const auto half = static_cast<std::ptrdiff_t>(nodes.size() / 2);
  info.upper = std::make_unique<GraphPart>(bisect(kind, label, check, {nodes.begin(), nodes.begin() + half}, id + "0"));
  info.lower = std::make_unique<GraphPart>(bisect(kind, label, check, {nodes.begin() + half, nodes.end()}, id + "1"));
  return info;
}

MismatchTree find_in_parts(size_t count, const PartKinds& kind, const PartLabel& label, const PartCheck& check) {
  std::vector<size_t> all(count);
  for (size_t i = 0; i < count; ++i) all[i] = i;
  MismatchTree tree;
  tree.root = bisect(kind, label, check, all, "");
  return tree;
}

}  // namespace verify_detail

namespace {

void leaves_of(const GraphPart& p, std::vector<const GraphPart*>& out) {
  if (!p.has_mismatch()) return;
  const size_t before = out.size();
  if (p.upper) leaves_of(*p.upper, out);
  if (p.lower) leaves_of(*p.lower, out);
  if (out.size() == before) out.push_back(&p);
}

void tree_lines(const GraphPart& p, int depth, std::string& out) {
  out += std::string(static_cast<size_t>(4 * depth), ' ') + (p.has_mismatch() ? "X" : "\u2713") +
         " id: " + (p.id.empty() ? "(all)" : p.id) + "  " + p.label + "\n";
  if (p.upper) tree_lines(*p.upper, depth + 1, out);
  if (p.lower) tree_lines(*p.lower, depth + 1, out);
}

}  // namespace

std::vector<const GraphPart*> MismatchTree::mismatch_leaves() const {
  std::vector<const GraphPart*> out;
  leaves_of(root, out);
  return out;
}

std::string MismatchTree::tree_text() const {
  std::string out = "Tree:\n";
  tree_lines(root, 0, out);
  return out;
}

std::string MismatchTree::mismatch_text() const {
  const auto leaves = mismatch_leaves();
  std::string ids, kinds_text, details;
  std::map<std::string, int> kinds;
  std::vector<std::string> order;
  for (const GraphPart* leaf : leaves) {
    ids += (ids.empty() ? "'" : ", '") + leaf->id + "'";
    for (const auto& k : std::set<std::string>(leaf->node_kinds.begin(), leaf->node_kinds.end())) {
      if (!kinds.count(k)) order.push_back(k);
      ++kinds[k];
    }
    details += "  " + leaf->id + ": " + leaf->label + ": " + leaf->mismatch + "\n";
  }
  for (const auto& k : order) kinds_text += (kinds_text.empty() ? "'" : ", '") + k + "': " + std::to_string(kinds[k]);
  return "Mismatch leaf subgraphs: [" + ids + "]\nMismatch node kinds: {" + kinds_text + "}\n" + details;
}

MismatchTree find_mismatch(const torch::jit::Module& module_in, const std::vector<c10::IValue>& args,
                           const ExportOptions& options, double rtol) {
  torch::jit::Module module = module_in.clone();
  module.eval();
  torch::jit::Module frozen = torch::jit::freeze(module);
  auto graph = frozen.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);

  // Every value LibTorch computes on args: a copy of the graph returning them all.
  Context ctx;
  ctx.graph = graph;
  ctx.options = options;
  ctx.compare.rtol = rtol;
  auto all = graph->copy();
  std::vector<std::pair<Value*, size_t>> wanted;  // value of `graph` -> position in the tuple
  std::vector<Value*> copies;
  auto n_it = graph->nodes().begin();
  for (Node* c : all->nodes()) {
    Node* n = *n_it;
    ++n_it;
    if (n->kind() == c10::prim::Constant) continue;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      wanted.emplace_back(n->output(i), copies.size());
      copies.push_back(c->output(i));
    }
  }
  while (!all->outputs().empty()) all->eraseOutput(all->outputs().size() - 1);
  all->registerOutput(tuple_of(*all, copies));
  // (the frozen module's `self` is unused: the function takes the args alone)
  const bool drop_self = !graph->inputs().empty() && graph->inputs()[0]->type()->kind() == c10::TypeKind::ClassType &&
                         !graph->inputs()[0]->hasUses();
  if (drop_self) all->eraseInput(0);
  torch::jit::GraphFunction fn("all_values", all, nullptr);
  std::vector<c10::IValue> stack(args.begin(), args.end());
  if (!drop_self && !graph->inputs().empty() && graph->inputs()[0]->type()->kind() == c10::TypeKind::ClassType)
    stack.insert(stack.begin(), frozen._ivalue());
  {
    at::NoGradGuard no_grad;
    fn.run(stack);
  }
  const auto results = stack.at(0).toTupleRef().elements();
  const bool has_self = !graph->inputs().empty() && graph->inputs()[0]->type()->kind() == c10::TypeKind::ClassType;
  if (has_self) ctx.env[graph->inputs()[0]] = frozen._ivalue();
  for (size_t i = has_self ? 1 : 0, k = 0; i < graph->inputs().size() && k < args.size(); ++i, ++k)
    ctx.env[graph->inputs()[i]] = args[k];
  for (const auto& [v, pos] : wanted) ctx.env[v] = results.at(pos);

  torch_side::OriginTable origins(module.type()->name() ? module.type()->name()->name() : "");
  std::vector<Node*> nodes;
  for (Node* n : graph->nodes())
    if (n->kind() != c10::prim::Constant) nodes.push_back(n);
  auto kind = [&](size_t i) { return std::string(nodes[i]->kind().toQualString()); };
  auto label = [&](size_t i) {
    const std::string place = torch_side::describe_origin(*origins.of(nodes[i]));
    return kind(i) + (place.empty() ? "" : " in " + place);
  };
  auto check = [&](const std::vector<size_t>& part, const std::string& id) {
    std::vector<Node*> part_nodes;
    for (size_t i : part) part_nodes.push_back(nodes[i]);
    return check_part(ctx, part_nodes, id);
  };
  return verify_detail::find_in_parts(nodes.size(), kind, label, check);
}

}  // namespace torch2onnx
