// The export pipeline: see pipeline.cpp for the ordered list of stages.
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include "ir/model.h"
#include "symbolic/registry.h"
#include "torch2onnx/options.h"
#include "torch_passes/torch_graph.h"

namespace torch2onnx::frontend::pt2 {
struct Program;
}

namespace torch2onnx {

// What a host (the Python package) adds to the pipeline.
struct ExportHooks {
  torch_side::PythonOpHooks python_ops;
};

// Load-side half: the module's forward() as a flat function of its inputs and
// parameters, run once on the example args. The module is only read.
torch_side::TorchGraph trace_to_torch_graph(torch::jit::Module module, const std::vector<c10::IValue>& args,
                                            const ExportOptions& options, const ExportHooks& hooks = {});

// Everything: torch passes, conversion, ONNX passes, checker. The returned
// model's initializers borrow the module's weights.
ir::Model export_ir(torch::jit::Module module, const std::vector<c10::IValue>& args, const ExportOptions& options,
                    const Registry& registry = user_registry(), const ExportHooks& hooks = {});
// The same for a module that is the export's alone (`module` must be its only
// handle: torch::jit::Module has no move constructor, so "moving" one leaves
// a copy behind). The handle is reset once traced, so the module (compiled
// code, graphs) is freed before conversion, and the torch graph once
// converted, before the ONNX passes and the writer run.
ir::Model export_ir_consuming(torch::jit::Module& module, const std::vector<c10::IValue>& args,
                              const ExportOptions& options, const Registry& registry = user_registry(),
                              const ExportHooks& hooks = {});

// A torch.export program (.pt2): read, converted by the .pt2 frontend, then
// the same ONNX passes and checker.
ir::Model export_program_ir(const std::string& pt2_path, const ExportOptions& options,
                            const Registry& registry = user_registry());
// The same for a program already read (or made: find_mismatch's parts).
ir::Model export_program_ir(const frontend::pt2::Program& program, const ExportOptions& options,
                            const Registry& registry = user_registry());

}  // namespace torch2onnx
