#include "convert/core.h"
#include "convert/dispatch.h"
#include "convert/program.h"
#include "convert/pt2/converter.h"
#include "convert/unsupported.h"

namespace torch2onnx::convert::pt2 {

bool is_assert(const std::string& op) {
  return op == "aten::_assert_scalar" || op == "aten::sym_constrain_range_for_size" ||
         op == "aten::_assert_tensor_metadata" || op == "aten::sym_constrain_range";
}

namespace {

void collect_unsupported(const Graph& g, const Registry& registry, int opset, OperatorExportType mode,
                         UnsupportedCollector& found) {
  for (const Node& n : g.nodes) {
    for (const NamedArgument& in : n.inputs)  // (higher-order operators' bodies)
      if (in.arg.graph) collect_unsupported(*in.arg.graph, registry, opset, mode, found);
    if (converted_by_frontend(n) || is_higher_order(n)) continue;
    const std::string op = n.op.empty() ? n.target : n.op;
    if (!n.op.empty() && n.op.rfind("higher_order::", 0) != 0 &&
        (resolve(registry, canonical_kind(op), opset) || kept_by_mode(canonical_kind(op), mode)))
      continue;
    found.add(op, where(n), n.op.empty() ? std::nullopt : first_opset(registry, canonical_kind(op)));
  }
}

}  // namespace
}  // namespace torch2onnx::convert::pt2

namespace torch2onnx::convert {

bool converted_by_frontend(const frontend::pt2::Node& n) {
  return n.op == "aten::sym_size" || n.op == "aten::sym_numel" || pt2::is_assert(n.op) ||
         pt2::size_operators().count(n.target);
}

std::vector<UnsupportedOperator> unsupported_operators(const frontend::pt2::Program& program,
                                                       const Registry& registry, int opset,
                                                       OperatorExportType mode) {
  UnsupportedCollector found;
  pt2::collect_unsupported(program.graph, registry, opset, mode, found);
  return found.take();
}

}  // namespace torch2onnx::convert
