// Conversion of a torch.export program (.pt2): the second frontend's
// adapter. It reads the program's own nodes and metadata (no LibTorch, no
// example run: dtypes and shapes come from the program) and hands each
// operator to the same symbolic registry as the TorchScript path.
#pragma once

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

}  // namespace torch2onnx::convert
