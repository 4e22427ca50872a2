#include "ir/dtype.h"

#include <algorithm>
#include <cctype>

namespace torch2onnx::ir {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::UInt16:
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::UInt32:
    case DType::Float: return 4;
    case DType::Int64:
    case DType::UInt64:
    case DType::Double:
    case DType::Complex64: return 8;
    case DType::Complex128: return 16;
    case DType::String:
    case DType::Undefined: return 0;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Undefined: return "undefined";
  }
  return "undefined";
}

const char* dtype_torch_name(DType t) {
  switch (t) {
    case DType::Float: return "Float";
    case DType::UInt8: return "Byte";
    case DType::Int8: return "Char";
    case DType::Int16: return "Short";
    case DType::Int32: return "Int";
    case DType::Int64: return "Long";
    case DType::Bool: return "Bool";
    case DType::Float16: return "Half";
    case DType::Double: return "Double";
    case DType::BFloat16: return "BFloat16";
    case DType::Complex64: return "ComplexFloat";
    case DType::Complex128: return "ComplexDouble";
    default: return dtype_name(t);
  }
}

DType dtype_from_name(const std::string& raw) {
  std::string n(raw);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n.rfind("torch.", 0) == 0) n = n.substr(6);
  if (n == "float32" || n == "float" || n == "f32") return DType::Float;
  if (n == "float64" || n == "double" || n == "f64") return DType::Double;
  if (n == "float16" || n == "half" || n == "f16") return DType::Float16;
  if (n == "bfloat16" || n == "bf16") return DType::BFloat16;
  if (n == "int64" || n == "long" || n == "i64") return DType::Int64;
  if (n == "int32" || n == "int" || n == "i32") return DType::Int32;
  if (n == "int16" || n == "short" || n == "i16") return DType::Int16;
  if (n == "int8" || n == "i8") return DType::Int8;
  if (n == "uint8" || n == "byte" || n == "u8") return DType::UInt8;
  if (n == "bool") return DType::Bool;
  return DType::Undefined;
}

bool is_floating(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integral(DType t) {
  switch (t) {
    case DType::UInt8:
    case DType::Int8:
    case DType::UInt16:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64: return true;
    default: return false;
  }
}

bool is_signed(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64 ||
         is_floating(t);
}

DType dtype_from_scalar_type(int64_t st) {
  switch (st) {
    case 0: return DType::UInt8;       // Byte
    case 1: return DType::Int8;        // Char
    case 2: return DType::Int16;       // Short
    case 3: return DType::Int32;       // Int
    case 4: return DType::Int64;       // Long
    case 5: return DType::Float16;     // Half
    case 6: return DType::Float;       // Float
    case 7: return DType::Double;      // Double
    case 9: return DType::Complex64;   // ComplexFloat
    case 10: return DType::Complex128; // ComplexDouble
    case 11: return DType::Bool;       // Bool
    case 12: return DType::Int8;       // QInt8: quantized tensors as their stored integers
    case 13: return DType::UInt8;      // QUInt8
    case 14: return DType::Int32;      // QInt32
    case 15: return DType::BFloat16;   // BFloat16
    default: return DType::Undefined;
  }
}

int64_t scalar_type_from_dtype(DType t) {
  switch (t) {
    case DType::UInt8: return 0;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    case DType::Float16: return 5;
    case DType::Float: return 6;
    case DType::Double: return 7;
    case DType::Complex64: return 9;
    case DType::Complex128: return 10;
    case DType::Bool: return 11;
    case DType::BFloat16: return 15;
    default: return -1;
  }
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Undefined) return b;
  if (b == DType::Undefined) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  // Both integral. uint8 with a signed type widens to at least int16.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType other = a == DType::UInt8 ? b : a;
    return dtype_size(other) >= 2 ? other : DType::Int16;
  }
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

}  // namespace torch2onnx::ir
