#include "convert/core.h"

#include <map>
#include <optional>

#include "convert/dispatch.h"
#include "convert/fallback.h"
#include "convert/quantized_args.h"

namespace torch2onnx::convert {
namespace {

// operator_export_type's conversion of `call`, when it is not the symbolic:
// ONNX_ATEN keeps every aten operator whose outputs are tensors as an ATen
// node (one ONNX node cannot return a list: those convert where they can),
// ONNX_ATEN_FALLBACK the aten operators without a symbolic, ONNX_FALLTHROUGH
// any operator without one as a node of its own namespace. A node on complex
// tensors converts with a complex declaration only (Registry::add_complex):
// without one it falls back as an operator without a symbolic.
SymbolicFn fallback_for(const Call& call, const Registry& registry, const ExportOptions& options, bool has_symbolic) {
  const OperatorExportType mode = options.operator_export_type;
  if (mode == OperatorExportType::Onnx) return {};
  bool tensor_outputs = true, complex = false;
  for (const OutputInfo& o : call.outs) {
    tensor_outputs = tensor_outputs && o.kind == Arg::Kind::Tensor;
    complex = complex || is_complex(o.dtype);
  }
  for (const Arg& a : call.args) complex = complex || (a.kind == Arg::Kind::Tensor && is_complex(a.dtype));
  const std::string& kind = call.kind;
  if (complex && has_symbolic) has_symbolic = has_complex_declaration(registry, kind, options.opset_version);
  const bool aten = kind.rfind("aten::", 0) == 0;
  if (aten && ((mode == OperatorExportType::OnnxAten && (tensor_outputs || !has_symbolic)) ||
               (mode == OperatorExportType::OnnxAtenFallback && !has_symbolic)))
    return aten_node(kind.substr(6), call.overload);
  if (mode == OperatorExportType::OnnxFallthrough && !has_symbolic) {
    const size_t sep = kind.find("::");
    return passthrough_node(kind.substr(0, sep), kind.substr(sep + 2));
  }
  return {};
}

}  // namespace

std::vector<OutputSlot> convert_call(Call call, const Registry& registry, const ExportOptions& options,
                                     ir::Graph* graph, ArgMaterializer* materializer, const SetUpContext& set_up) {
  const SymbolicFn* fn = resolve(registry, call.kind, options.opset_version);
  const SymbolicFn fallback = fallback_for(call, registry, options, fn != nullptr);
  if (fallback) fn = &fallback;
  if (!fn)
    throw Error(Error::Kind::Internal, "no symbolic for " + call.kind + " in " + call.where +
                                           " (should have been reported earlier)");
  std::optional<QuantizedCall> quantized;
  if (!fallback) quantized.emplace(call.kind, call.args, call.outs, graph, options.opset_version);
  if (quantized && !quantized->active()) quantized.reset();
  SymbolicContext ctx(call.kind, std::move(call.args), std::move(call.outs), graph, options.opset_version,
                      materializer);
  if (set_up) set_up(ctx);
  run_symbolic(*fn, ctx, call.kind, call.where);
  std::vector<OutputSlot> results = ctx.results();
  for (size_t i = 0; i < results.size(); ++i) {
    OutputSlot& r = results[i];
    if (!r.set || r.is_sequence) continue;
    if (r.is_list) {
      if (quantized)
        for (ir::Value*& e : r.elements) e = quantized->result(i, e);
      continue;
    }
    if (quantized) r.value = quantized->result(i, r.value);
    if (i < ctx.num_outputs())
      check_dtype(call.kind, call.where, r.value, quantized ? quantized->original(i) : ctx.out_info(i));
  }
  return results;
}

bool kept_by_mode(const std::string& kind, OperatorExportType mode) {
  if (mode == OperatorExportType::OnnxFallthrough) return kind.find("::") != std::string::npos;
  return kind.rfind("aten::", 0) == 0 &&
         (mode == OperatorExportType::OnnxAten || mode == OperatorExportType::OnnxAtenFallback);
}

const std::map<std::string, std::string>& operator_aliases() {
  // (same schema as the operator each names)
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
      {"aten::concatenate", "aten::cat"},    {"aten::ger", "aten::outer"},
      {"aten::row_stack", "aten::vstack"},   {"aten::_unsafe_view", "aten::view"},
      {"aten::inverse", "aten::linalg_inv"}, {"aten::matrix_power", "aten::linalg_matrix_power"},
      {"aten::matrix_exp", "aten::linalg_matrix_exp"}, {"aten::det", "aten::linalg_det"},
      {"aten::adjoint", "aten::mH"},
      // torch.special
      {"aten::special_expit", "aten::sigmoid"},   {"aten::special_xlogy", "aten::xlogy"},
      {"aten::special_sinc", "aten::sinc"},       {"aten::special_logit", "aten::logit"},
      {"aten::special_exp2", "aten::exp2"},       {"aten::special_expm1", "aten::expm1"},
      {"aten::special_log1p", "aten::log1p"},     {"aten::special_log_softmax", "aten::log_softmax"},
      {"aten::special_softmax", "aten::softmax"}, {"aten::special_logsumexp", "aten::logsumexp"},
      {"aten::special_erfinv", "aten::erfinv"},   {"aten::special_erf", "aten::erf"},
      {"aten::special_round", "aten::round"}};
  return aliases;
}

std::string canonical_kind(const std::string& kind) {
  const auto& aliases = operator_aliases();
  if (auto it = aliases.find(kind); it != aliases.end()) return it->second;
  if (is_in_place(kind))
    if (auto it = aliases.find(kind.substr(0, kind.size() - 1)); it != aliases.end()) return it->second + "_";
  return kind;
}

}  // namespace torch2onnx::convert
