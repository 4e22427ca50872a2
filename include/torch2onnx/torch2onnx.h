// torch2onnx C++ API: export TorchScript modules to ONNX.
//
//   torch::jit::Module m = torch::jit::load("model.pt");
//   torch2onnx::ExportOptions options;
//   options.input_names = {"input"};
//   torch2onnx::export_model(m, {torch::randn({1, 3, 224, 224})}, "model.onnx", options);
#pragma once

#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <onnx/onnx_pb.h>
#include <torch/csrc/jit/api/module.h>

#include "torch2onnx/options.h"
#include "torch2onnx/symbolic/registry.h"
#include "torch2onnx/warnings.h"  // (an export's warnings: stderr, or a WarningCollector)

namespace torch2onnx {

// Exports `module`'s forward() called with `args` to an ONNX file at `path`.
// Throws torch2onnx::Error (UnsupportedOperatorError for unconvertible
// operators); on failure no file is left at `path`.
void export_model(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const std::string& path,
                  const ExportOptions& options = {});
// Loads the TorchScript archive at `archive` (as load_archive) and exports
// it to `path`. The loaded module is private to the export, so it is freed
// once traced, and its weights are streamed from the archive's mapping and
// leave memory once written: memory holds at most one copy of the weights.
// What the CLI runs.
void export_archive(const std::string& archive, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options = {});

// Exports the torch.export program (.pt2, as torch.export.save writes it;
// torch 2.9 to 2.15) at `program` to `path`: no Python and no example
// inputs (dtypes and shapes, symbolic ones included, come from the program).
void export_program(const std::string& program, const std::string& path, const ExportOptions& options = {});

// The same model, returned as a ModelProto (weights included).
onnx::ModelProto export_to_model_proto(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                       const ExportOptions& options = {});

// The exported graph as readable text (what verbose=True prints).
std::string export_to_pretty_string(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                    const ExportOptions& options = {});

// Every operator that cannot be converted at `opset`, all at once.
std::vector<UnsupportedOperator> unconvertible_ops(const torch::jit::Module& module,
                                                   const std::vector<c10::IValue>& args, int opset = 17);

// Custom symbolic functions: `fn` converts operator `op` ("custom_ops::foo",
// "aten::relu" to override a built-in) from opset `opset` on, with the same
// SymbolicContext the built-in symbolics use (torch2onnx/symbolic/context.h,
// building blocks in torch2onnx/symbolic/helpers.h). Nodes of a custom domain
// ("custom_domain::Foo" via ctx.node(type, inputs, n, attrs, domain)) take
// their opset version from ExportOptions::custom_opsets (default 1).
void register_symbolic(const std::string& op, int opset, SymbolicFn fn);
// Removes what register_symbolic declared for (op, opset); true if there was one.
bool unregister_symbolic(const std::string& op, int opset);

// Loads a TorchScript archive, with clear errors (Error::Kind::Load).
torch::jit::Module load_archive(const std::string& path);
// Example args from a torch.save()d value (a tuple/list is one arg per element).
std::vector<c10::IValue> load_example_args(const std::string& path);

}  // namespace torch2onnx
