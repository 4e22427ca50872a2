// Writes through views, functionalized. torch.export's programs keep
// in-place ops: `z[:, :2].fill_(1)` is a slice (a view of z) and a fill_ of
// it, which also changes z. ONNX values never change, so a write into a view
// becomes the view's new value scattered back into the tensor it views
// (slice_scatter, select_scatter, diagonal_scatter, a reshape or transpose
// back), up to the root, which then holds the new value; a view read after
// a write into its root is computed again from the new root (a root's
// version counts its writes).
#include <algorithm>

#include "convert/core.h"
#include "convert/dispatch.h"
#include "convert/pt2/converter.h"

namespace torch2onnx::convert::pt2 {
namespace {

// View ops whose inverse is a reshape of the new view to its parent's shape.
bool reshapes(const std::string& op) {
  static const char* ops[] = {"aten::view",     "aten::reshape", "aten::_unsafe_view", "aten::unsqueeze",
                              "aten::squeeze",  "aten::flatten", "aten::unflatten",    "aten::view_as",
                              "aten::reshape_as"};
  return std::any_of(std::begin(ops), std::end(ops), [&](const char* o) { return op == o; });
}

}  // namespace

Arg ProgramConverter::value_arg(ir::Value* v, const std::string& meta_name, const Node& at) {
  Arg a = tensor_arg(meta_name, &at);
  a.value = v;
  a.id = -1;
  return a;
}

ir::Value* ProgramConverter::call_symbolic(const std::string& op, std::vector<Arg> args, const std::string& out_name,
                                           const Node& at) {
  const SymbolicFn* fn = resolve(registry_, op, options_.opset_version);
  if (!fn) fail(&at, "writing through its view needs " + op + ", which has no conversion at this opset");
  OutputInfo out;
  out.dtype = meta(out_name, &at).dtype;
  SymbolicContext ctx(op, std::move(args), {out}, graph_, options_.opset_version, this);
  run_symbolic(*fn, ctx, op, where(at));
  if (ctx.results().empty() || !ctx.results()[0].set) fail(&at, op + " produced nothing");
  return ctx.results()[0].value;
}

// The new value of `v.parent` once view `name` (made by v.node) holds `src`.
ir::Value* ProgramConverter::unview(const Scope::View& v, const std::string& name, ir::Value* parent, ir::Value* src,
                                    const Node& at) {
  const Node& n = *v.node;
  const std::string op = canonical_kind(n.op);
  if (v.element >= 0) return unview_element(v, name, parent, src, at);
  if (op == "aten::alias" || op == "aten::detach" || op == "aten::lift_fresh") return src;
  if (reshapes(op)) {
    SymbolicContext ctx(op, {}, {}, graph_, options_.opset_version, this);
    return ctx.op("Reshape", {src, ctx.op("Shape", {parent})});
  }
  std::vector<Arg> args = schema_args(n);  // the view's own arguments (its parent now fresh)
  args.at(0) = value_arg(parent, v.parent, at);
  const Arg source = value_arg(src, name, at);
  if (op == "aten::slice" || op == "aten::select" || op == "aten::diagonal") {
    args.insert(args.begin() + 1, source);
    return call_symbolic(op + "_scatter", std::move(args), v.parent, at);
  }
  if (op == "aten::transpose" || op == "aten::t") {  // its own inverse
    args.at(0) = source;
    return call_symbolic(op, std::move(args), v.parent, at);
  }
  if (op == "aten::permute") {
    std::vector<Arg> inverse = args.at(1).elements;
    for (size_t k = 0; k < args[1].elements.size(); ++k) {
      int64_t d = args[1].elements[k].i;
      if (d < 0) d += static_cast<int64_t>(args[1].elements.size());
      inverse.at(static_cast<size_t>(d)) = constant_int(static_cast<int64_t>(k));
    }
    args.at(0) = source;
    args[1].elements = inverse;
    return call_symbolic(op, std::move(args), v.parent, at);
  }
  fail(&at, "it writes into a view made by " + n.op + " (in " + where(n) +
                "), which the .pt2 frontend does not write back yet: save the functional program instead "
                "(ep = ep.run_decompositions({}) before torch.export.save)");
}

// An element of split / split_with_sizes / unbind: a slice or a select of the parent.
ir::Value* ProgramConverter::unview_element(const Scope::View& v, const std::string& name, ir::Value* parent,
                                            ir::Value* src, const Node& at) {
  const Node& n = *v.node;
  const std::string op = canonical_kind(n.op);
  std::vector<Arg> args = schema_args(n);
  const int64_t rank = static_cast<int64_t>(meta(v.parent, &at).sizes.size());
  auto dim_of = [&](size_t i) {
    int64_t d = i < args.size() && args[i].constant ? args[i].i : 0;
    return d < 0 ? d + rank : d;
  };
  const Arg self = value_arg(parent, v.parent, at), source = value_arg(src, name, at);
  const int64_t e = v.element;
  if (op == "aten::unbind")
    return call_symbolic("aten::select_scatter", {self, source, constant_int(dim_of(1)), constant_int(e)}, v.parent, at);
  if ((op == "aten::split" || op == "aten::split_with_sizes") && args.size() >= 2) {
    int64_t start = 0, size = 0;
    if (args[1].constant && args[1].kind == Arg::Kind::Int) {
      size = args[1].i;
      start = e * size;
    } else if (args[1].constant && args[1].is_list() && static_cast<size_t>(e) < args[1].elements.size()) {
      for (int64_t k = 0; k < e; ++k) start += args[1].elements[static_cast<size_t>(k)].i;
      size = args[1].elements[static_cast<size_t>(e)].i;
    } else {
      fail(&at, "it writes into an element of " + n.op + " whose sizes are computed at run time");
    }
    return call_symbolic("aten::slice_scatter",
                         {self, source, constant_int(dim_of(2)), constant_int(start), constant_int(start + size),
                          constant_int(1)},
                         v.parent, at);
  }
  fail(&at, "it writes into an element of " + n.op + "'s result (in " + where(n) +
                "), which the .pt2 frontend does not write back yet: save the functional program instead "
                "(ep = ep.run_decompositions({}) before torch.export.save)");
}

void ProgramConverter::write_back(const std::string& written, ir::Value* value, const Node& n) {
  std::string current = written;
  ir::Value* v = value;
  for (auto it = scope_->views.find(current); it != scope_->views.end(); it = scope_->views.find(current)) {
    const Scope::View view = it->second;
    refresh(view.parent);
    v = unview(view, current, scope_->tensors.at(view.parent), v, n);
    current = view.parent;
  }
  scope_->tensors[current] = v;  // the root's new value
  const uint64_t version = ++scope_->versions[current];
  scope_->tensors[written] = value;
  if (auto it = scope_->views.find(written); it != scope_->views.end()) it->second.version = version;
}

void ProgramConverter::refresh(const std::string& name) {
  auto it = scope_->views.find(name);
  if (it == scope_->views.end()) return;
  const uint64_t now = scope_->versions[root_of(name)];
  if (it->second.version == now) return;
  const Scope::View view = it->second;
  const Node& n = *view.node;
  refresh(view.parent);
  // Its node again, on the parent's new value (schema_args registers its
  // views anew, at the root's current version).
  set_outputs(n, node_results(n));
}

}  // namespace torch2onnx::convert::pt2
