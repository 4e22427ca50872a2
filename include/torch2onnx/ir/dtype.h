// Element types of ONNX tensors (values are TensorProto.DataType codes) and
// their mapping from PyTorch's ScalarType codes. No LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace torch2onnx::ir {

enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

// Bytes per element (0 for Undefined/String).
size_t dtype_size(DType t);
// "float32", "int64", ... (numpy-style names, used by the CLI and messages).
const char* dtype_name(DType t);
// "Float", "Long", ... (PyTorch-style names, used by the verbose printer).
const char* dtype_torch_name(DType t);
// Parses numpy/torch names ("float32", "float", "int64", "long", "bool", ...).
// Returns Undefined when unknown.
DType dtype_from_name(const std::string& name);

bool is_floating(DType t);
bool is_integral(DType t);  // signed/unsigned integers, not bool
bool is_signed(DType t);

// c10::ScalarType codes (stable across releases) <-> ONNX codes.
DType dtype_from_scalar_type(int64_t scalar_type);
int64_t scalar_type_from_dtype(DType t);

// PyTorch's promotion lattice for two tensor dtypes of the same category
// order (bool < integers < floating). Mirrors c10::promoteTypes for the
// types ONNX can express.
DType promote_types(DType a, DType b);

}  // namespace torch2onnx::ir
