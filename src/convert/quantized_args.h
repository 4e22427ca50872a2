// Operators on quantized tensors. PyTorch runs many operators directly on
// quantized tensors (relu, max_pool2d, flatten, cat, upsample, ...): each
// keeps its input's scale and zero point or, as sigmoid does, sets fixed ones.
// ONNX operators compute on real numbers: as torch.onnx does, the quantized
// inputs are dequantized, the float symbolic runs, and each output PyTorch
// returned quantized is quantized again: with the first quantized input's
// scale and zero point when the example run saw those on the output, else
// with the ones it saw.
#pragma once

#include <string>
#include <vector>

#include "torch2onnx/symbolic/context.h"

namespace torch2onnx::convert {

class QuantizedCall {
 public:
  // Rewrites `args` and `outs` for the float symbolic of `kind` (dequantized
  // inputs, float outputs). Inactive when no argument is quantized or the
  // symbolic reads quantized tensors itself (dequantize, int_repr, q_scale, ...).
  QuantizedCall(const std::string& kind, std::vector<Arg>& args, std::vector<OutputInfo>& outs, ir::Graph* graph,
                int64_t opset);
  bool active() const { return active_; }
  // Output k as PyTorch returns it: quantized again where PyTorch's was (active calls only).
  ir::Value* result(size_t k, ir::Value* v);
  // What PyTorch's output k is (before the rewrite).
  const OutputInfo& original(size_t k) const { return original_.at(k); }

 private:
  bool active_ = false;
  ir::Graph* graph_;
  int64_t opset_;
  const ir::Quantization* first_ = nullptr;  // of the first quantized input
  std::optional<std::pair<double, int64_t>> first_example_;
  std::vector<OutputInfo> original_;
};

}  // namespace torch2onnx::convert
