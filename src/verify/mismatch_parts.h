// What find_mismatch's two frontends share (find_mismatch.cpp): the
// bisection of a graph's operators into parts, and a part's check in ONNX
// Runtime. Each frontend says what its operators are and how a part of them
// is exported alone (TorchScript: find_mismatch.cpp; .pt2 programs:
// find_mismatch_program.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "torch2onnx/find_mismatch.h"
#include "torch2onnx/verify.h"

namespace torch2onnx::verify_detail {

struct PartVerdict {
  std::string mismatch;      // "" when the part matches
  std::string export_error;  // when it could not be exported or run alone
  void set_error(const std::string& what);
};

using PartKinds = std::function<std::string(size_t)>;  // operator i's kind ("aten::tanh")
using PartLabel = std::function<std::string(size_t)>;  // "aten::tanh in blocks.7.act (model.py:12)"
using PartCheck = std::function<PartVerdict(const std::vector<size_t>& operators, const std::string& id)>;

// The part of `operators` with `id`, checked, and where it mismatches its
// halves, recursively, down to single operators.
GraphPart bisect(const PartKinds& kind, const PartLabel& label, const PartCheck& check,
                 const std::vector<size_t>& operators, const std::string& id);

// The tree of all `count` operators.
MismatchTree find_in_parts(size_t count, const PartKinds& kind, const PartLabel& label, const PartCheck& check);

// The user's export options for a part: no names, dynamic axes, report or picture.
ExportOptions part_options(const ExportOptions& user);

// Runs the serialized model on `inputs` (the graph's, in order) in ONNX
// Runtime and compares each output with `expected`: "" when all match, else
// what differs ("output 0: ..."). Throws when the model cannot be run.
std::string compare_in_onnx_runtime(const std::string& model_bytes, const std::vector<c10::IValue>& inputs,
                                    const std::vector<c10::IValue>& expected, const VerifyOptions& compare_options);

}  // namespace torch2onnx::verify_detail
