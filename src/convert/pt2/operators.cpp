#include "convert/dispatch.h"
#include "convert/program.h"
#include "convert/pt2/converter.h"
#include "convert/unsupported.h"

namespace torch2onnx::convert::pt2 {

bool is_assert(const std::string& op) {
  return op == "aten::_assert_scalar" || op == "aten::sym_constrain_range_for_size" ||
         op == "aten::_assert_tensor_metadata" || op == "aten::sym_constrain_range";
}

std::string canonical(const std::string& op) {
  static const std::map<std::string, std::string> aliases{
      {"aten::swapaxes", "aten::transpose"}, {"aten::swapdims", "aten::transpose"},
      {"aten::moveaxis", "aten::movedim"},   {"aten::absolute", "aten::abs"},
      {"aten::arccos", "aten::acos"},        {"aten::arcsin", "aten::asin"},
      {"aten::arctan", "aten::atan"},        {"aten::arccosh", "aten::acosh"},
      {"aten::arcsinh", "aten::asinh"},      {"aten::arctanh", "aten::atanh"},
      {"aten::arctan2", "aten::atan2"},      {"aten::clip", "aten::clamp"},
      {"aten::greater", "aten::gt"},         {"aten::greater_equal", "aten::ge"},
      {"aten::less", "aten::lt"},            {"aten::less_equal", "aten::le"},
      {"aten::not_equal", "aten::ne"},       {"aten::multiply", "aten::mul"},
      {"aten::divide", "aten::div"},         {"aten::true_divide", "aten::div"},
      {"aten::subtract", "aten::sub"},       {"aten::negative", "aten::neg"},
      {"aten::fix", "aten::trunc"},          {"aten::concat", "aten::cat"},
      {"aten::concatenate", "aten::cat"},    {"aten::special_expit", "aten::sigmoid"},
      {"aten::ger", "aten::outer"},          {"aten::row_stack", "aten::vstack"},
      {"aten::_unsafe_view", "aten::view"},  {"aten::inverse", "aten::linalg_inv"},
      {"aten::matrix_power", "aten::linalg_matrix_power"}, {"aten::matrix_exp", "aten::linalg_matrix_exp"}};
  if (auto it = aliases.find(op); it != aliases.end()) return it->second;
  if (is_in_place(op))
    if (auto it = aliases.find(op.substr(0, op.size() - 1)); it != aliases.end()) return it->second + "_";
  return op;
}

namespace {

void collect_unsupported(const Graph& g, const Registry& registry, int opset, UnsupportedCollector& found) {
  for (const Node& n : g.nodes) {
    for (const NamedArgument& in : n.inputs)  // (higher-order operators' bodies)
      if (in.arg.graph) collect_unsupported(*in.arg.graph, registry, opset, found);
    if (converted_by_frontend(n) || is_higher_order(n)) continue;
    const std::string op = n.op.empty() ? n.target : n.op;
    if (!n.op.empty() && n.op.rfind("higher_order::", 0) != 0 && resolve(registry, canonical(op), opset)) continue;
    found.add(op, where(n), n.op.empty() ? std::nullopt : first_opset(registry, canonical(op)));
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
                                                       const Registry& registry, int opset) {
  UnsupportedCollector found;
  pt2::collect_unsupported(program.graph, registry, opset, found);
  return found.take();
}

}  // namespace torch2onnx::convert
