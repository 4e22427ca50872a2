#include "onnx_passes/transposed.h"

#include "onnx_passes/computed_elements.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace torch2onnx::onnx_passes {
namespace {

// How to read the output: its dims, and for each output axis the input's
// stride (in elements) along it.
struct Layout {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

// Output elements [first, last) into dst, for elements of type T.
template <typename T>
void gather(const T* in, const Layout& l, size_t first, size_t last, T* dst) {
  const size_t rank = l.dims.size();
  if (rank == 2 && l.strides[1] != 1) {
    // out[r][c] = in[c * R + r]: 32 x 32 tiles, so that both sides stay in
    // cache (a row of the output is a strided column of the input).
    const size_t cols = static_cast<size_t>(l.dims[1]);
    const size_t stride = static_cast<size_t>(l.strides[1]);
    constexpr size_t kTile = 32;
    const size_t r0 = first / cols, r1 = (last + cols - 1) / cols;
    for (size_t rb = r0; rb < r1; rb += kTile)
      for (size_t cb = 0; cb < cols; cb += kTile)
        for (size_t r = rb; r < std::min(rb + kTile, r1); ++r) {
          const size_t c_from = std::max(cb, first > r * cols ? first - r * cols : 0);
          const size_t c_to = std::min({cb + kTile, cols, last - r * cols});
          for (size_t c = c_from; c < c_to; ++c) dst[r * cols + c - first] = in[c * stride + r];
        }
    return;
  }
  // Any rank: walk the output in order, keeping the input offset.
  std::vector<int64_t> index(rank, 0);
  size_t rem = first;
  int64_t at = 0;
  for (size_t i = rank; i-- > 0;) {
    index[i] = static_cast<int64_t>(rem % static_cast<size_t>(l.dims[i]));
    rem /= static_cast<size_t>(l.dims[i]);
    at += index[i] * l.strides[i];
  }
  for (size_t e = first; e < last; ++e) {
    dst[e - first] = in[at];
    for (size_t i = rank; i-- > 0;) {
      at += l.strides[i];
      if (++index[i] < l.dims[i]) break;
      at -= l.strides[i] * l.dims[i];
      index[i] = 0;
    }
  }
}

template <typename T>
void fill_as(const ir::Tensor& x, const Layout& l, size_t offset, size_t n, uint8_t* dst) {
  const auto* in = reinterpret_cast<const T*>(x.data());
  fill_elements<T>(offset, n, dst, [&](size_t first, size_t last, T* out) { gather<T>(in, l, first, last, out); });
}

}  // namespace

ir::Tensor transposed(const ir::Tensor& x, const std::vector<int64_t>& perm) {
  const size_t rank = static_cast<size_t>(x.rank());
  if (perm.size() != rank) throw std::invalid_argument("Transpose: perm has the wrong length");
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * x.dims()[i];
  auto layout = std::make_shared<Layout>();
  std::vector<bool> used(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || used[static_cast<size_t>(p)])
      throw std::invalid_argument("Transpose: perm is not a permutation");
    used[static_cast<size_t>(p)] = true;
    layout->dims.push_back(x.dims()[static_cast<size_t>(p)]);
    layout->strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  const size_t es = ir::dtype_size(x.dtype());
  if (es != 1 && es != 2 && es != 4 && es != 8) throw std::invalid_argument("Transpose: unsupported element size");
  std::vector<int64_t> dims = layout->dims;
  return ir::Tensor::computed(
      x.dtype(), std::move(dims),
      [x, layout, es](size_t offset, size_t n, uint8_t* dst) {
        switch (es) {
          case 1: fill_as<uint8_t>(x, *layout, offset, n, dst); break;
          case 2: fill_as<uint16_t>(x, *layout, offset, n, dst); break;
          case 4: fill_as<uint32_t>(x, *layout, offset, n, dst); break;
          default: fill_as<uint64_t>(x, *layout, offset, n, dst); break;
        }
      },
      [x] { x.release_pages(); });
}

}  // namespace torch2onnx::onnx_passes
