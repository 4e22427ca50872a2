// The public API's functions with the pipeline's hooks exposed, for hosts
// that add to the pipeline (the Python package).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline.h"
#include "torch2onnx/torch2onnx.h"

namespace torch2onnx::api {

void export_to_file(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options, const ExportHooks& hooks);
// The same, consuming the module: no one else may use it (or a copy of its
// handle) afterwards (see export_ir_consuming).
// `before_commit` runs when the file is written, before it takes its name.
void export_to_file(torch::jit::Module&& module, const std::vector<c10::IValue>& args, const std::string& path,
                    const ExportOptions& options, const ExportHooks& hooks,
                    const std::function<void()>& before_commit = {});
// A module whose forward() is `graph` (a `self` input is prepended to it), of
// class __torch__.torch2onnx.<class_name>: a ScriptFunction or a graph part exported as a module.
torch::jit::Module module_from_graph(std::shared_ptr<torch::jit::Graph> graph, const std::string& class_name);
// The serialized ModelProto; an Io error when the weights need external data.
std::string export_to_bytes(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                            const ExportOptions& options, const ExportHooks& hooks);
// The same bytes handed to `sink` piece by piece (a Python file-like object's write()).
void export_to_sink(const torch::jit::Module& module, const std::vector<c10::IValue>& args, const ExportOptions& options,
                    const ExportHooks& hooks, const std::function<void(const uint8_t*, size_t)>& sink);
std::string export_to_pretty_string(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                                    const ExportOptions& options, const ExportHooks& hooks);
// The torch-side graph (after the torch passes) and what cannot be converted in it.
std::vector<UnsupportedOperator> unconvertible_ops(const torch::jit::Module& module,
                                                   const std::vector<c10::IValue>& args, int opset,
                                                   const ExportHooks& hooks,
                                                   std::shared_ptr<torch::jit::Graph>* graph = nullptr);

// The .pt2 program at `program` exported to `path`.
void export_program_to_file(const std::string& program, const std::string& path, const ExportOptions& options);
// The same for a program already read (or made in memory: Program::in_memory).
void export_program_to_file(const frontend::pt2::Program& program, const std::string& path,
                            const ExportOptions& options);

// The .pt2 program at `program` exported, as a serialized ModelProto; an Io
// error when the weights need external data.
std::string export_program_to_bytes(const std::string& program, const ExportOptions& options);
// The same for a program already read (or made: find_mismatch's parts).
std::string export_program_to_bytes(const frontend::pt2::Program& program, const ExportOptions& options);

// The program converted (checked, the ONNX passes run) but not serialized,
// for a caller that serializes it later or never (the Python package's
// ONNXProgram, as torch.onnx's holds its in-memory model); not with a report
// or a graph picture, which are written with the model.
ir::Model convert_program(const frontend::pt2::Program& program, const ExportOptions& options);
// A converted model serialized (an Io error when the weights need external
// data), or written to `path` (external data as options.external_data asks,
// or where the weights pass protobuf's 2 GiB: tensors of at least
// `external_threshold` bytes, the writer's default when none).
std::string model_to_bytes(const ir::Model& model, const ExportOptions& options);
void model_to_file(ir::Model& model, const std::string& path, const ExportOptions& options,
                   std::optional<size_t> external_threshold = std::nullopt);

}  // namespace torch2onnx::api
