// Verification: a TorchScript module run in LibTorch against its exported
// ONNX model run in ONNX Runtime, on the example args and on random inputs
// along every dynamic axis (symbolic dims of the ONNX model's inputs), every
// output compared. ONNX Runtime is the C API library the `onnxruntime` Python
// package ships (libonnxruntime.so), opened at run time
// ($T2O_ONNXRUNTIME_LIB names another).
//
//   auto module = torch2onnx::load_archive("model.pt");
//   torch2onnx::export_model(module, args, "model.onnx", options);
//   torch2onnx::VerifyResult r = torch2onnx::verify(module, args, "model.onnx");
//   std::cout << r.markdown();
//   if (!r.ok()) ...
//
//   torch2onnx::export_program("model.pt2", "model.onnx");
//   r = torch2onnx::verify_program("model.pt2", "model.onnx");  // its stored sample inputs
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

namespace torch2onnx {

struct VerifyOptions {
  double rtol = 1e-4;  // floats match within atol + rtol * (1 + max |torch|); integers and bools exactly
  double atol = 0.0;
  // The size each symbolic dim takes in the runs after the example's: -1 is
  // the example's size + 3.
  std::vector<int64_t> sizes = {-1, 1};
  uint64_t seed = 0;  // for the random inputs
  // Example inputs (flattened) the ONNX graph does not read (the export
  // reports them: ExportOptions::unused_input): PyTorch gets them, ONNX Runtime not.
  std::vector<size_t> unused_inputs;
};

// One output of one run.
struct VerifyRow {
  size_t output = 0;
  std::vector<int64_t> shape;  // PyTorch's
  std::string dtype;
  double max_abs = 0, max_rel = 0, bound = 0;
  bool ok = true;
  std::string why;  // what differs, when not ok
};

struct VerifyRun {
  std::string label;  // "example", or the sizes of the symbolic dims ("batch=5, seq=8")
  std::vector<VerifyRow> rows;
  // Why the run was not made (its sizes are outside a .pt2 program's ranges), if so.
  std::string skipped;
};

struct VerifyResult {
  std::vector<VerifyRun> runs;
  bool ok() const;
  std::string markdown() const;  // a table per run
  std::string failures() const;  // "run: output k: why; ..." (empty when ok)
};

// The module's flattened tensor inputs (tuples and lists flattened; numbers,
// None and strings are not inputs) must be the ONNX model's inputs, in order.
// Throws Error (Kind::Check) when ONNX Runtime cannot be loaded or run the model.
VerifyResult verify(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                    const std::string& onnx_path, const VerifyOptions& options = {});

// The same for a torch.export program (.pt2): torch2onnx runs it in LibTorch
// itself (no Python; each node's operator through LibTorch's dispatcher) on
// `inputs` (its args: their tensors, tuples and lists flattened, are its user
// inputs, in order), or when none are given on the
// sample inputs torch.export.save stored in the archive. Runs at sizes
// outside the program's ranges are skipped, with the reason. Throws Error
// (Usage) when the inputs do not fit the program.
VerifyResult verify_program(const std::string& program_path, const std::string& onnx_path,
                            const VerifyOptions& options = {}, const std::vector<c10::IValue>& inputs = {});

}  // namespace torch2onnx
