#include "ir/tensor.h"

#include <stdexcept>

namespace torch2onnx::ir {
namespace {

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      x = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

float bf16_to_float(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

void store_double(DType dtype, uint8_t* p, double v) {
  switch (dtype) {
    case DType::Float: store<float>(p, static_cast<float>(v)); break;
    case DType::Double: store<double>(p, v); break;
    case DType::Float16: store<uint16_t>(p, float_to_half(static_cast<float>(v))); break;
    case DType::BFloat16: store<uint16_t>(p, float_to_bf16(static_cast<float>(v))); break;
    case DType::Int64: store<int64_t>(p, static_cast<int64_t>(v)); break;
    case DType::Int32: store<int32_t>(p, static_cast<int32_t>(v)); break;
    case DType::Int16: store<int16_t>(p, static_cast<int16_t>(v)); break;
    case DType::Int8: store<int8_t>(p, static_cast<int8_t>(v)); break;
    case DType::UInt8: store<uint8_t>(p, static_cast<uint8_t>(v)); break;
    case DType::UInt16: store<uint16_t>(p, static_cast<uint16_t>(v)); break;
    case DType::UInt32: store<uint32_t>(p, static_cast<uint32_t>(v)); break;
    case DType::UInt64: store<uint64_t>(p, static_cast<uint64_t>(v)); break;
    case DType::Bool: store<uint8_t>(p, v != 0.0 ? 1 : 0); break;
    default: throw std::runtime_error(std::string("cannot store a number as ") + dtype_name(dtype));
  }
}

void store_int(DType dtype, uint8_t* p, int64_t v) {
  switch (dtype) {
    case DType::Int64: store<int64_t>(p, v); break;
    case DType::Int32: store<int32_t>(p, static_cast<int32_t>(v)); break;
    case DType::Int16: store<int16_t>(p, static_cast<int16_t>(v)); break;
    case DType::Int8: store<int8_t>(p, static_cast<int8_t>(v)); break;
    case DType::UInt8: store<uint8_t>(p, static_cast<uint8_t>(v)); break;
    case DType::UInt16: store<uint16_t>(p, static_cast<uint16_t>(v)); break;
    case DType::UInt32: store<uint32_t>(p, static_cast<uint32_t>(v)); break;
    case DType::UInt64: store<uint64_t>(p, static_cast<uint64_t>(v)); break;
    case DType::Bool: store<uint8_t>(p, v != 0 ? 1 : 0); break;
    default: store_double(dtype, p, static_cast<double>(v)); break;
  }
}

}  // namespace

Tensor Tensor::owned(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
  auto holder = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.data_ = holder->data();
  t.nbytes_ = holder->size();
  t.keepalive_ = std::shared_ptr<const void>(holder, holder.get());
  if (static_cast<size_t>(t.numel()) * dtype_size(dtype) != t.nbytes_)
    throw std::logic_error("Tensor::owned: byte size does not match dims");
  return t;
}

Tensor Tensor::computed(DType dtype, std::vector<int64_t> dims, Fill fill, Release release) {
  Tensor t;
  t.release_ = std::move(release);
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.nbytes_ = static_cast<size_t>(t.numel()) * dtype_size(dtype);
  t.fill_ = std::make_shared<const Fill>(std::move(fill));
  return t;
}

const uint8_t* Tensor::data() const {
  if (is_computed()) {
    auto holder = std::make_shared<std::vector<uint8_t>>(nbytes_);
    if (nbytes_) (*fill_)(0, nbytes_, holder->data());
    data_ = holder->data();
    keepalive_ = std::shared_ptr<const void>(holder, holder.get());
  }
  return data_;
}

void Tensor::read(size_t offset, size_t n, uint8_t* dst) const {
  if (offset + n > nbytes_) throw std::out_of_range("Tensor::read past the end");
  if (!n) return;
  if (is_computed())
    (*fill_)(offset, n, dst);
  else
    std::memcpy(dst, data_ + offset, n);
}

Tensor Tensor::borrowed(DType dtype, std::vector<int64_t> dims, const void* data, size_t nbytes,
                        std::shared_ptr<const void> keepalive, Release release) {
  Tensor t;
  t.release_ = std::move(release);
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.data_ = static_cast<const uint8_t*>(data);
  t.nbytes_ = nbytes;
  t.keepalive_ = std::move(keepalive);
  if (static_cast<size_t>(t.numel()) * dtype_size(dtype) != t.nbytes_)
    throw std::logic_error("Tensor::borrowed: byte size does not match dims");
  return t;
}

Tensor Tensor::from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> dims) {
  std::vector<uint8_t> bytes(values.size() * 8);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return owned(DType::Int64, std::move(dims), std::move(bytes));
}

Tensor Tensor::from_int64s(const std::vector<int64_t>& values) {
  return from_int64s(values, {static_cast<int64_t>(values.size())});
}

Tensor Tensor::from_doubles(DType dtype, const std::vector<double>& values, std::vector<int64_t> dims) {
  const size_t es = dtype_size(dtype);
  std::vector<uint8_t> bytes(values.size() * es);
  for (size_t i = 0; i < values.size(); ++i) store_double(dtype, bytes.data() + i * es, values[i]);
  return owned(dtype, std::move(dims), std::move(bytes));
}

Tensor Tensor::scalar(DType dtype, double value) { return from_doubles(dtype, {value}, {}); }

Tensor Tensor::scalar_int(DType dtype, int64_t value) {
  std::vector<uint8_t> bytes(dtype_size(dtype));
  store_int(dtype, bytes.data(), value);
  return owned(dtype, {}, std::move(bytes));
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Tensor::int_at(int64_t i) const {
  const uint8_t* p = data() + static_cast<size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Int64: return load<int64_t>(p);
    case DType::Int32: return load<int32_t>(p);
    case DType::Int16: return load<int16_t>(p);
    case DType::Int8: return load<int8_t>(p);
    case DType::UInt8: return load<uint8_t>(p);
    case DType::UInt16: return load<uint16_t>(p);
    case DType::UInt32: return load<uint32_t>(p);
    case DType::UInt64: return static_cast<int64_t>(load<uint64_t>(p));
    case DType::Bool: return load<uint8_t>(p) ? 1 : 0;
    default: return static_cast<int64_t>(double_at(i));
  }
}

double Tensor::double_at(int64_t i) const {
  const uint8_t* p = data() + static_cast<size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Float: return load<float>(p);
    case DType::Double: return load<double>(p);
    case DType::Float16: return half_to_float(load<uint16_t>(p));
    case DType::BFloat16: return bf16_to_float(load<uint16_t>(p));
    case DType::UInt64: return static_cast<double>(load<uint64_t>(p));
    default:
      if (dtype_ == DType::Undefined || dtype_ == DType::String || dtype_ == DType::Complex64 ||
          dtype_ == DType::Complex128)
        throw std::runtime_error(std::string("cannot read a number from a ") + dtype_name(dtype_) +
                                 " tensor");
      return static_cast<double>(int_at(i));
  }
}

std::vector<int64_t> Tensor::to_int64s() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = int_at(static_cast<int64_t>(i));
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = double_at(static_cast<int64_t>(i));
  return out;
}

bool Tensor::same_content(const Tensor& o) const {
  return dtype_ == o.dtype_ && dims_ == o.dims_ && nbytes_ == o.nbytes_ &&
         (nbytes_ == 0 || data() == o.data() || std::memcmp(data(), o.data(), nbytes_) == 0);
}

uint64_t Tensor::content_hash() const {
  // FNV-1a over dtype, dims and bytes (8 bytes at a time for speed).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<uint64_t>(dtype_));
  for (int64_t d : dims_) mix(static_cast<uint64_t>(d));
  const uint8_t* bytes = data();
  size_t i = 0;
  for (; i + 8 <= nbytes_; i += 8) mix(load<uint64_t>(bytes + i));
  for (; i < nbytes_; ++i) mix(bytes[i]);
  return h;
}

uint64_t Tensor::fingerprint() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<uint64_t>(dtype_));
  for (int64_t d : dims_) mix(static_cast<uint64_t>(d));
  // 64 bytes at 16 evenly spread places (read without computing all of a
  // computed tensor).
  if (nbytes_ <= 1024) {
    uint8_t small[1024];
    read(0, nbytes_, small);
    for (size_t i = 0; i < nbytes_; ++i) mix(small[i]);
    return h;
  }
  for (size_t k = 0; k < 16; ++k) {
    size_t at = (nbytes_ - 64) * k / 15;
    uint8_t piece[64];
    read(at, 64, piece);
    for (size_t i = 0; i + 8 <= 64; i += 8) mix(load<uint64_t>(piece + i));
  }
  return h;
}

Tensor Tensor::converted(DType to) const {
  if (to == dtype_) return *this;
  const size_t es = dtype_size(to);
  const int64_t n = numel();
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * es);
  const bool exact_int = !is_floating(dtype_) && dtype_ != DType::Complex64 && dtype_ != DType::Complex128;
  for (int64_t k = 0; k < n; ++k) {
    uint8_t* p = bytes.data() + static_cast<size_t>(k) * es;
    if (exact_int && !is_floating(to))
      store_int(to, p, int_at(k));
    else if (!is_floating(to))
      store_int(to, p, to == DType::Bool ? (double_at(k) != 0.0) : static_cast<int64_t>(double_at(k)));
    else
      store_double(to, p, double_at(k));
  }
  return owned(to, dims_, std::move(bytes));
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  if (t.numel() != numel()) throw std::logic_error("Tensor::reshaped: element count differs");
  return t;
}

std::string format_dims(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s;
}

}  // namespace torch2onnx::ir
