// t2o::list_erase(t[] self, int idx) -> t[]: `self` without its element at
// `idx` (negative counts from the end; out of range raises, as `del l[i]`
// does), a new list. The value-returning form functionalize gives `del l[i]`
// and `l.pop(i)` when i is only known at run time; registered with LibTorch's
// JIT as an operator (list_erase.cpp) so that the example runs and the JIT's
// passes treat it like any other, and converted to ONNX's SequenceErase.
#pragma once

#include <ATen/core/interned_strings.h>

namespace torch2onnx::torch_side {

inline c10::Symbol list_erase_symbol() { return c10::Symbol::fromQualString("t2o::list_erase"); }

// Makes sure the operator is registered (a no-op after the first call).
void register_list_erase();

}  // namespace torch2onnx::torch_side
