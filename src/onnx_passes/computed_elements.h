// For the fill function of a computed tensor (ir::Tensor::computed) that
// produces whole elements of type T: the byte range the writer or a sampler
// asks for, turned into an element range.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace torch2onnx::onnx_passes {

// Writes bytes [offset, offset + n) of the elements `elements(first, last,
// out)` computes (elements [first, last) into out). Straight into dst when
// the range holds whole elements; through a buffer when it cuts one.
template <typename T, typename Elements>
void fill_elements(size_t offset, size_t n, uint8_t* dst, Elements&& elements) {
  const size_t first = offset / sizeof(T), last = (offset + n + sizeof(T) - 1) / sizeof(T);
  if (offset % sizeof(T) == 0 && n % sizeof(T) == 0) {
    elements(first, last, reinterpret_cast<T*>(dst));
    return;
  }
  std::vector<T> whole(last - first);
  elements(first, last, whole.data());
  std::memcpy(dst, reinterpret_cast<const uint8_t*>(whole.data()) + offset % sizeof(T), n);
}

}  // namespace torch2onnx::onnx_passes
