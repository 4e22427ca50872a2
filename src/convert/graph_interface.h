// The exported graph's interface, shared by both frontends: the model
// itself, input and output names (input_names / output_names), dynamic
// dims (dynamic_axes), and the graph outputs.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/model.h"
#include "torch2onnx/options.h"

namespace torch2onnx::convert {

class GraphInterface {
 public:
  explicit GraphInterface(const ExportOptions& options) : options_(options) {}

  // A new model at the options' opset (its IR version, custom opsets) with
  // an empty graph named "main_graph".
  ir::Model new_model() const;

  // The name of flat input `index` (user inputs, then weights): input_names'
  // where it has one, else `fallback`.
  std::string input_name(size_t index, const std::string& fallback) const;
  // input_names may not name more inputs than the model has (Error(Usage)).
  void check_input_names(size_t inputs) const;

  // The name dynamic_axes gives dim `axis` of the input or output `value`
  // (of `rank` dims), if any; `value` counts as named by dynamic_axes.
  std::optional<std::string> axis_name(const std::string& value, int64_t axis, int64_t rank);
  // Names the dims dynamic_axes lists for `value` in `type` (Error(Usage)
  // for an axis out of range; a warning, and the key ignored, when `value`
  // is a default output name); a type without a shape gets `rank` dims. For
  // an input (`type` holding the example's sizes), a name already given to a
  // dim of another size in the example is not reused: ONNX reads one name as
  // one size (and the ONNX passes prove sizes equal by it), so that dim gets
  // a name of its own, with a warning.
  void apply_dynamic_axes(const std::string& value, ir::ValueType& type, int64_t rank, bool default_name = false,
                          bool input = false);
  bool has_dynamic_axes(const std::string& value) const { return options_.dynamic_axes.count(value) != 0; }

  // A graph output: its value, and the rank PyTorch showed (-1: unknown)
  // for a value whose type has no shape yet.
  struct Output {
    ir::Value* value = nullptr;
    int64_t rank = -1;
    // PyTorch's dtype when the output is complex: the value is then its (real,
    // imag) pair tensor, and the graph output is that real view [..., 2]
    // (what torch.view_as_real gives), with a note on stderr.
    ir::DType complex_dtype = ir::DType::Undefined;
  };
  // Adds `outputs` to `g` in order, named by output_names (else "output" or
  // "output_<i>"), an Identity where a value is an input, an initializer or
  // an output already; applies dynamic_axes to them, then checks that every
  // dynamic_axes entry named an input or an output (an error, or a warning
  // as torch.onnx gives: ExportOptions::strict_dynamic_axes).
  void add_outputs(ir::Graph* g, const std::vector<Output>& outputs);

 private:
  void check_unused_dynamic_axes(const ir::Graph* g) const;

  const ExportOptions& options_;
  std::set<std::string> used_dynamic_axes_;
  // dim name -> the example size of the first input dim given it, and where
  std::map<std::string, std::pair<int64_t, std::string>> input_dim_sizes_;
};

}  // namespace torch2onnx::convert
