// Reading what the user hands us: TorchScript archives and example inputs.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include "frontend/record_check.h"

namespace torch2onnx::frontend {

// torch::jit::load with clear errors for a missing, non-zip, corrupt or
// non-TorchScript file (Error::Kind::Load). `for_one_export`: the module goes
// straight to a consuming export and no one else sees it, so its mapped
// weights' pages may be dropped once written (frontend::page_release).
// Every record's CRC-32 is checked: while LibTorch loads when `records` is
// null, else on a thread handed over in `*records`, which the caller waits
// for (RecordCheck::wait) before it trusts the weights.
torch::jit::Module load_archive(const std::string& path, bool for_one_export = false,
                                std::unique_ptr<RecordCheck>* records = nullptr);

// The LibTorch this build is on ("1.13.0").
std::string libtorch_version();

// A value saved with torch.save (Error::Kind::Args on failure).
c10::IValue load_saved_value(const std::string& path);

// Example args from a saved value: a tuple or list gives one arg per element,
// anything else is the single arg.
std::vector<c10::IValue> args_from_value(const c10::IValue& v);

// A tensor from a .npy file.
at::Tensor load_npy(const std::string& path);

// A random tensor from "1x3x224x224[:dtype]" ("scalar[:dtype]" for 0-d).
// Floats are standard normal, integers uniform in [0, 10), bools uniform;
// the generator is seeded, so the same spec gives the same tensor.
at::Tensor random_input(const std::string& spec);

// `--input` value: a .npy path or a shape spec.
at::Tensor input_from_spec(const std::string& spec);

}  // namespace torch2onnx::frontend
