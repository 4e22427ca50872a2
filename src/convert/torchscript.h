// The TorchScript frontend's conversion: every node of the torch graph, in order, through the symbolic
// registered for its operator, into the ONNX-side IR.
#pragma once

#include <vector>

#include "convert/unsupported.h"
#include "ir/model.h"
#include "symbolic/registry.h"
#include "torch2onnx/options.h"
#include "torch_passes/torch_graph.h"

namespace torch2onnx::convert {

// Every operator of the graph without a symbolic at `opset` (empty if none),
// except those `mode` keeps as nodes (operator_export_type).
std::vector<UnsupportedOperator> find_unsupported(const torch_side::TorchGraph& tg, const Registry& registry,
                                                  int opset, OperatorExportType mode = OperatorExportType::Onnx);

// Builds the ONNX model. Throws UnsupportedOperatorError listing every
// unconvertible operator, or Error(Conversion) with the operator's origin.
ir::Model convert(torch_side::TorchGraph& tg, const Registry& registry, const ExportOptions& options);

}  // namespace torch2onnx::convert
