// A whole ONNX model in the IR: the main graph plus what the ModelProto header carries.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "torch2onnx/ir/graph.h"

namespace torch2onnx::ir {

// An ONNX model-local function (export_modules_as_functions): called by
// nodes of type `name` in `domain`; its body's inputs and outputs are the
// function's (the body has no initializers).
struct Function {
  std::string domain;
  std::string name;
  std::unique_ptr<Graph> body;
};

struct Model {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  int64_t opset = 17;
  int64_t ir_version = 8;
  std::map<std::string, int64_t> custom_opsets;  // domain -> version (besides ai.onnx)
  std::string producer_name = "torch2onnx";
  std::string producer_version;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<Function> functions;
};

// The IR version an opset was introduced with (ONNX's versioning table).
int64_t ir_version_for_opset(int64_t opset);

}  // namespace torch2onnx::ir
