// A custom TorchScript operator, as in PyTorch's "Extending TorchScript with
// Custom C++ Operators": custom_ops::foo_forward(input1, input2, attr1, attr2)
// = input1 * attr1 + input2 * attr2. Built as libcustom_ops.so: Python loads
// it with torch.ops.load_library to script models that call it; the export
// program links it so the operator exists when the archive is loaded.
#include <torch/library.h>
#include <torch/torch.h>

namespace {

at::Tensor foo_forward(const at::Tensor& input1, const at::Tensor& input2, double attr1, int64_t attr2) {
  return input1 * attr1 + input2 * attr2;
}

}  // namespace

TORCH_LIBRARY(custom_ops, m) {
  m.def("foo_forward(Tensor input1, Tensor input2, float attr1, int attr2) -> Tensor");
}

TORCH_LIBRARY_IMPL(custom_ops, CPU, m) { m.impl("foo_forward", foo_forward); }
