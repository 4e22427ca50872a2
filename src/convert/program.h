// Conversion of a torch.export program (.pt2): the second frontend's
// adapter. It reads the program's own nodes and metadata (no LibTorch, no
// example run: dtypes and shapes come from the program) and hands each
// operator to the same symbolic registry as the TorchScript path.
#pragma once

#include <vector>

#include "frontend/pt2/program.h"
#include "ir/model.h"
#include "symbolic/registry.h"
#include "torch2onnx/options.h"

namespace torch2onnx::convert {

// Builds the ONNX model of `program` (its weights read from its archive).
// Throws UnsupportedOperatorError listing every operator without a
// conversion, or Error(Conversion) naming the node.
ir::Model convert_program(const frontend::pt2::Program& program, const Registry& registry,
                          const ExportOptions& options);

// Whether the .pt2 converter computes `node` itself (size arithmetic, sym_size,
// getitem, run-time asserts) rather than through a symbolic.
bool converted_by_frontend(const frontend::pt2::Node& node);

// Every operator of `program` (higher-order operators' bodies included)
// that has no conversion at `opset` (nor a fallback node under `mode`), with
// where it occurs: what export refuses.
std::vector<UnsupportedOperator> unsupported_operators(const frontend::pt2::Program& program,
                                                       const Registry& registry, int opset,
                                                       OperatorExportType mode = OperatorExportType::Onnx);

}  // namespace torch2onnx::convert
