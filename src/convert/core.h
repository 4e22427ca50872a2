// The conversion core both frontends feed. A frontend reads its own node (a
// TorchScript node, a .pt2 program node) into a Call: the operator, its
// overload, its arguments bound to the schema by name and what PyTorch
// returned. convert_call does the rest the same way for both: resolve the
// symbolic at the opset, apply operator_export_type's fallback (an ATen or a
// passthrough node), dequantize around the float symbolic of a quantized
// call, run it with errors naming the operator and its place, quantize the
// results again and check each result's dtype against PyTorch's. The
// frontend then binds the results to its own values (sequence outputs are
// slots marked is_sequence).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "symbolic/registry.h"
#include "torch2onnx/options.h"
#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::convert {

struct Call {
  std::string kind;      // "aten::add", "aten::relu_", "mylib::op" (aliases resolved: canonical_kind)
  std::string overload;  // the schema's overload name: "Tensor", "" for the default
  std::vector<Arg> args;
  std::vector<OutputInfo> outs;
  std::string where;     // the module and source line, for messages
};

// The frontend's part of the context the symbolic runs in: its example-run
// facts, its dynamic-dims policy, its source node.
using SetUpContext = std::function<void(SymbolicContext&)>;

// The results of `call` (ctx.results(), each tensor value quantized again
// where PyTorch's output was quantized and its dtype checked). Throws
// Error(Conversion) naming the operator and call.where when the symbolic
// fails, Error(Internal) when there is no symbolic (the frontends report
// unsupported operators before converting).
std::vector<OutputSlot> convert_call(Call call, const Registry& registry, const ExportOptions& options,
                                     ir::Graph* graph, ArgMaterializer* materializer, const SetUpContext& set_up);

// Whether operator_export_type keeps `kind` as one node where it has no
// symbolic: the frontends' unsupported-operator checks ask this.
bool kept_by_mode(const std::string& kind, OperatorExportType mode);

// One table of operator aliases for both frontends ("aten::swapaxes" ->
// "aten::transpose", "aten::absolute_" -> "aten::abs_"); other kinds as given.
std::string canonical_kind(const std::string& kind);
const std::map<std::string, std::string>& operator_aliases();  // alias -> operator

}  // namespace torch2onnx::convert
