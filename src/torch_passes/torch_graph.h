// The PyTorch-side state that the torch passes transform, from the loaded
// module to the graph the converter reads: a flat function of
// (user tensor inputs..., parameters...) with what the example run saw.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include "torch2onnx/options.h"

namespace torch2onnx::torch_side {

// A tensor attribute of the module (parameter or buffer) used by the graph.
struct Param {
  torch::jit::Value* value = nullptr;  // graph input standing for it
  std::string name;                    // "features.0.weight"
  at::Tensor tensor;
};

// What the example run saw for one value.
struct ExampleInfo {
  enum class Kind { Tensor, Int, Float, Bool, None, String, Device, List, Tuple, Other };
  Kind kind = Kind::Other;
  at::ScalarType dtype = at::ScalarType::Undefined;  // tensors
  std::vector<int64_t> sizes;                        // tensors
  c10::IValue scalar;                                // Int/Float/Bool/String/Device values
  at::Tensor small_value;                            // tensors of at most 64 elements: the value
  std::optional<std::pair<double, int64_t>> qparams;  // per-tensor quantized tensors: scale, zero point
  std::vector<ExampleInfo> elements;                 // List/Tuple
  bool shape_static = false;  // tensors: the same sizes for every input the export accepts (fold_static_values)
  // Tensors: which sizes vary with the dynamic axes (mark_dynamic_dims; empty: not known).
  std::vector<bool> dynamic_dims;
  // The result of an op that returns a view or a copy (returns_view_or_copy)
  // when it was a copy: a write into it does not reach its input.
  bool copied = false;
};

// Ops that return their input's storage when they can and a copy when they
// must (contiguous, reshape, reshape_as, flatten): whether they copied is the
// example's to tell (ExampleInfo::copied).
bool returns_view_or_copy(const torch::jit::Node* n);

struct TorchGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::string root_class;  // "AlexNet"
  // forward()'s parameters (after self): names and default values.
  std::vector<std::string> input_arg_names;
  std::vector<std::optional<c10::IValue>> input_defaults;

  // Graph inputs: the user's flattened tensor inputs, then the parameters.
  std::vector<torch::jit::Value*> user_inputs;
  std::vector<std::string> user_input_names;  // from the forward() signature
  // What each user input stands for in a scripted forward(), as torch.onnx
  // makes them. Optional: an Optional[Tensor] parameter; it stays an input,
  // and from opset 15 its value keeps the Optional type (an ONNX optional
  // input the caller may leave unfed). NumberList: a List[int] / List[float]
  // parameter; its example is the 1-D tensor of the numbers, read through
  // prim::tolist, and the ONNX input is a sequence of 0-d tensors.
  enum class InputForm { Tensor, Optional, NumberList };
  std::vector<InputForm> user_input_forms;
  // Per user input: it stays a graph input even when folding leaves nothing
  // that reads it (the forms above, and inputs whose value enters a list the
  // graph indexes or measures: torch.onnx never folds those ONNX sequences).
  std::vector<bool> user_input_kept;
  std::vector<at::Tensor> example_inputs;     // aligned with user_inputs
  std::vector<Param> params;                  // state_dict order

  std::unordered_map<const torch::jit::Value*, ExampleInfo> info;  // filled by the example run
  // Where the run at other sizes (mark_dynamic_dims) stopped, and why; empty
  // when it ran through. The values after it have no dynamic_dims.
  std::string dynamic_run_stopped;
};

// Set by the Python package, about prim::PythonOp nodes (torch.autograd.Function calls).
struct PythonOpHooks {
  // True: the node goes to the converter whole (its Function has a
  // `symbolic`, or inlining is off); false: it is replaced by its body.
  std::function<bool(const torch::jit::Node&)> keep;
  // The Function's name if it has no `symbolic`, else "".
  std::function<std::string(const torch::jit::Node&)> missing_symbolic;
};

// A kept node that cannot be converted carries this string attribute: the
// name the unsupported-operator report gives it.
inline const c10::Symbol kUnconvertibleAttr = c10::Symbol::attr("t2o_unconvertible");

// Options and state shared by the torch passes.
struct TorchContext {
  const ExportOptions& options;
  // Run the example for real on the CPU instead of on the meta device.
  bool real_example_run = false;
  PythonOpHooks python_ops = {};
};

}  // namespace torch2onnx::torch_side
