// Shared by verify.cpp and find_mismatch.cpp: values between LibTorch and
// ONNX Runtime, and the comparison of one output.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "torch2onnx/verify.h"
#include "verify/onnxruntime.h"

namespace torch2onnx::verify_detail {

// The leaves of (nested) values in order: tensors, and with numbers=true
// Python numbers too (what a graph's inputs and outputs are).
void flatten(const c10::IValue& v, bool numbers, std::vector<c10::IValue>& out);
// A tensor (or number) as the ONNX input declared as `spec` takes it.
ort::HostTensor onnx_input(const c10::IValue& v, const ort::InputSpec& spec);
at::Tensor as_tensor(const c10::IValue& v);  // a number as a 0-d tensor
// Output k: floats within atol + rtol * (1 + max |expected|), integers and bools exactly.
VerifyRow compare(size_t k, const at::Tensor& expected, const ort::HostTensor& actual, const VerifyOptions& opt);

// verify's runs for any torch side: `torch_side` computes the outputs of the
// args (a tuple's elements); `misfit` (may be empty) says why it cannot take
// a run's inputs ("" when it can): that run is skipped, with the reason.
using TorchSide = std::function<c10::IValue(const std::vector<c10::IValue>&)>;
using Misfit = std::function<std::string(const std::vector<c10::IValue>&)>;
VerifyResult verify_runs(const c10::IValue& args_tuple, const TorchSide& torch_side, const std::string& onnx_path,
                         const VerifyOptions& options, const Misfit& misfit);

}  // namespace torch2onnx::verify_detail
