// LibTorch's own (C++) meta kernels on the meta device while the example
// runs, in place of the Python ones that `import torch` installs.
#pragma once

#include <memory>

namespace torch {
class Library;
}

namespace torch2onnx::torch_side {

// In a Python process, torch/_meta_registrations.py replaces the C++ meta
// kernels of about 1,300 operators with Python functions: an example run on
// the meta device would go into Python for most operators (slow; the first
// elementwise one imports torch._dynamo, seconds), and through a conversion
// of its arguments that some of them fail. While an instance lives, the C++
// meta kernels that LibTorch still has (`at::meta::*`, about 700 operators,
// cmake/gen_meta_kernels.py) serve the meta device again. Nothing is
// registered where the Python ones are not installed (the command line tool).
// Registering them is not free (about 700 dispatch table updates, and as many
// to undo): one instance covers all the example runs of an export
// (pipeline.cpp's trace_to_torch_graph).
class CppMetaKernels {
 public:
  CppMetaKernels();
  ~CppMetaKernels();
  CppMetaKernels(const CppMetaKernels&) = delete;
  CppMetaKernels& operator=(const CppMetaKernels&) = delete;

 private:
  std::unique_ptr<torch::Library> lib_;
};

}  // namespace torch2onnx::torch_side
