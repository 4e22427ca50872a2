// Constant tensor data of the ONNX-side IR. The bytes are either owned or
// borrowed from somewhere else (a LibTorch tensor's storage) with a keepalive
// handle, so weights are never copied on their way to the file.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torch2onnx/ir/dtype.h"

namespace torch2onnx::ir {

class Tensor {
 public:
  Tensor() = default;

  // Takes ownership of `bytes` (must be numel * dtype_size bytes, little-endian).
  static Tensor owned(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  // Refers to `data` (nbytes long), kept alive by `keepalive`. `release`,
  // when given, lets the bytes leave memory until they are next read (pages
  // of a file mapping that the file can give back: see release_pages).
  using Release = std::function<void()>;
  static Tensor borrowed(DType dtype, std::vector<int64_t> dims, const void* data, size_t nbytes,
                         std::shared_ptr<const void> keepalive, Release release = {});

  // Bytes computed on demand: fill(offset, n, dst) writes bytes [offset,
  // offset + n) to dst (its captures keep its sources alive). The writer
  // streams such a tensor to the file piece by piece, so it is never held
  // whole in memory; data() computes and keeps all of it.
  using Fill = std::function<void(size_t offset, size_t n, uint8_t* dst)>;
  // `release` releases the pages of the tensors fill reads (see release_pages).
  static Tensor computed(DType dtype, std::vector<int64_t> dims, Fill fill, Release release = {});

  static Tensor from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> dims);
  static Tensor from_int64s(const std::vector<int64_t>& values);  // 1-D
  static Tensor from_doubles(DType dtype, const std::vector<double>& values, std::vector<int64_t> dims);
  // A 0-d tensor of `dtype` holding `value` (converted).
  static Tensor scalar(DType dtype, double value);
  static Tensor scalar_int(DType dtype, int64_t value);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return nbytes_; }
  const uint8_t* data() const;  // a computed tensor is computed (once) here
  bool is_computed() const { return fill_ && !data_; }
  // Copies bytes [offset, offset + n) to dst, computing them if need be.
  void read(size_t offset, size_t n, uint8_t* dst) const;
  bool defined() const { return dtype_ != DType::Undefined; }
  // Lets the bytes leave the process's memory until they are read again:
  // called after reading a weight that will not be read again soon (the
  // writer, after writing it). Does nothing unless the tensor was made with a
  // `release` (weights mapped from an archive loaded for one export only,
  // whose pages the archive's file can give back at any time).
  void release_pages() const {
    if (release_) release_();
  }

  // Element access, converting to the requested C++ type.
  int64_t int_at(int64_t i) const;
  double double_at(int64_t i) const;
  std::vector<int64_t> to_int64s() const;
  std::vector<double> to_doubles() const;

  // Same dtype, dims and bytes.
  bool same_content(const Tensor& other) const;
  uint64_t content_hash() const;
  // A cheap hash of dtype, dims and a few sampled bytes: equal content gives
  // equal fingerprints (for bucketing before same_content).
  uint64_t fingerprint() const;

  // The same values converted to another dtype (float->int truncates toward zero).
  Tensor converted(DType to) const;

  // Same data viewed with other dims (numel must match).
  Tensor reshaped(std::vector<int64_t> dims) const;

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  mutable const uint8_t* data_ = nullptr;
  size_t nbytes_ = 0;
  mutable std::shared_ptr<const void> keepalive_;
  std::shared_ptr<const Fill> fill_;  // computed tensors (until data() is asked for)
  Release release_;
};

std::string format_dims(const std::vector<int64_t>& dims);

}  // namespace torch2onnx::ir
