// torch2onnx: export options and errors. No LibTorch needed to include this.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch2onnx {

// torch.onnx.TrainingMode
enum class TrainingMode { Eval, Preserve, Training };

// torch.onnx.OperatorExportTypes
enum class OperatorExportType { Onnx, OnnxAten, OnnxAtenFallback, OnnxFallthrough };

// One entry of dynamic_axes: an axis, and its name (empty: the automatic
// "<value>_dynamic_axes_<k>" name).
struct DynamicAxis {
  int64_t axis = 0;
  std::string name;
};

// The options of torch.onnx.export, with the same meaning.
struct ExportOptions {
  // 0: torch.onnx's default for the input: kDefaultOpset (17) for TorchScript
  // modules and archives, default_program_opset() (20) for .pt2 programs.
  int opset_version = 0;
  bool export_params = true;
  bool verbose = false;
  TrainingMode training = TrainingMode::Eval;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  OperatorExportType operator_export_type = OperatorExportType::Onnx;
  bool do_constant_folding = true;
  // torch.onnx's optimize (dynamo=True): false leaves out the ONNX-side
  // optimizations (operator fusions such as Conv+BatchNorm, Attention,
  // RotaryEmbedding, RMSNormalization, Swish; common subexpressions; merged
  // Concat/Unsqueeze/Transpose/shape reads; x*1 and x+0): only what an export
  // needs runs (dead code, constant folding as do_constant_folding says,
  // unused inputs, initializers, names, module functions).
  bool optimize = true;
  // input/output name -> axes (in the order given).
  std::map<std::string, std::vector<DynamicAxis>> dynamic_axes;
  // A dynamic_axes key that names no input or output is an error (the CLI,
  // the C++ API); false: a warning, and the key is ignored, as torch.onnx
  // does (torch2onnx.export, its drop-in).
  bool strict_dynamic_axes = true;
  bool keep_initializers_as_inputs = false;
  std::map<std::string, int64_t> custom_opsets;
  // torch.onnx's strip_doc_string=False: each node's doc_string carries its source line.
  bool keep_doc_strings = false;
  // Weights go to a side file "<model file>.data" (ONNX external data);
  // automatic when the model would pass protobuf's 2 GiB limit.
  bool external_data = false;
  // torch.onnx's export_modules_as_functions: each call of a submodule of
  // one of these classes becomes a node calling an ONNX local function
  // (opset 15 and above). Classes by qualified Python name
  // ("torchvision.models.resnet.BasicBlock") or plain name ("BasicBlock");
  // "*" = every submodule.
  std::vector<std::string> export_modules_as_functions;
  // A picture of the exported graph, written to this path (.svg, .png, .pdf
  // drawn by Graphviz's `dot`, or .dot): nodes grouped by module scope,
  // shapes on the edges.
  std::string graph_picture;
  // A Markdown report of the export written to this path: its stages with
  // time and memory, the PyTorch operators and the ONNX operators each
  // became, opset and IR version, the operators that could not be converted
  // (written when the export fails on them too), and the graph picture
  // (graph_picture, or FILE.svg next to the report when Graphviz is there).
  std::string report;
  // Where the verbose graph goes (std::cout when null).
  std::ostream* verbose_stream = nullptr;
  // Called as the export advances, from the exporting thread: the stage
  // ("loading", "tracing", "converting", "optimizing", "checking", "writing")
  // and the fraction of it done, in [0, 1]. The CLI draws its progress line with it.
  std::function<void(const std::string& stage, double fraction)> progress;
  // Called for each example input the model does not read (an argument
  // forward() ignores, or reads only for a static shape): such an input is
  // not an input of the ONNX graph, as torch.onnx drops it too. `index` counts
  // the graph inputs the example args make (tensors and numbers, tuples and
  // lists flattened), from 0.
  std::function<void(size_t index, const std::string& name)> unused_input;
};

// Every error torch2onnx reports. `kind` tells the CLI which exit code to use.
class Error : public std::runtime_error {
 public:
  enum class Kind { Usage, Load, Args, Unsupported, Conversion, Check, Io, Internal };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// One operator that has no conversion at the target opset.
struct UnsupportedOperator {
  std::string op;                         // "aten::foo"
  int64_t count = 0;                      // occurrences in the model
  std::vector<std::string> locations;     // "module.path (file.py:12)" per occurrence (deduplicated)
  std::optional<int> lowest_opset;        // lowest opset that converts it, if any
};

class UnsupportedOperatorError : public Error {
 public:
  UnsupportedOperatorError(const std::string& message, std::vector<UnsupportedOperator> ops)
      : Error(Kind::Unsupported, message), ops_(std::move(ops)) {}
  const std::vector<UnsupportedOperator>& operators() const { return ops_; }

 private:
  std::vector<UnsupportedOperator> ops_;
};

// The version of torch2onnx ("0.1.0").
const char* version();

}  // namespace torch2onnx
