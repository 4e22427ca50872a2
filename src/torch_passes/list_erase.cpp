#include "torch_passes/list_erase.h"

#include <torch/csrc/jit/runtime/custom_operator.h>

#include <stdexcept>
#include <string>

namespace torch2onnx::torch_side {

void register_list_erase() {
  static const torch::jit::RegisterOperators registered({torch::jit::Operator(
      "t2o::list_erase(t[] self, int idx) -> t[]",
      [](torch::jit::Stack& stack) {
        const int64_t idx = torch::jit::pop(stack).toInt();
        c10::impl::GenericList list = torch::jit::pop(stack).toList().copy();
        const int64_t n = static_cast<int64_t>(list.size());
        const int64_t i = idx < 0 ? idx + n : idx;
        if (i < 0 || i >= n)
          throw std::out_of_range("list index " + std::to_string(idx) + " out of range for a list of " +
                                  std::to_string(n));
        list.erase(list.begin() + i);
        torch::jit::push(stack, std::move(list));
      },
      c10::AliasAnalysisKind::FROM_SCHEMA)});
}

}  // namespace torch2onnx::torch_side
