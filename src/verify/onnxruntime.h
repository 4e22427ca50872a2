// ONNX Runtime from C++, without its headers or a link-time dependency: the
// C API library (libonnxruntime.so, as the `onnxruntime` Python package ships
// it) is opened at run time and the few OrtApi functions verification needs
// are called through the API's function table. No LibTorch here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "torch2onnx/ir/dtype.h"

namespace torch2onnx::ort {

// A tensor in host memory (row-major).
struct HostTensor {
  ir::DType dtype = ir::DType::Undefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  int64_t numel() const;
};

// A graph input as the session declares it: a size per dim, -1 for a
// symbolic one (its name in `params`).
struct InputSpec {
  std::string name;
  ir::DType dtype = ir::DType::Undefined;
  std::vector<int64_t> dims;
  std::vector<std::string> params;
};

// Where libonnxruntime.so is looked for: $T2O_ONNXRUNTIME_LIB, the
// onnxruntime Python package the build found, then the loader's search path.
std::string onnxruntime_library();

class Session {
 public:
  explicit Session(const std::string& onnx_path);  // throws Error (Kind::Check) naming what failed
  Session(const void* model_bytes, size_t size);     // a serialized model in memory
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<InputSpec>& inputs() const { return inputs_; }
  size_t num_outputs() const { return output_names_.size(); }
  // The outputs for `inputs` (in the graph's input order).
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs);

 private:
  struct Handles;
  void open(const std::string& what, const std::string& path, const void* bytes, size_t size);
  std::unique_ptr<Handles> h_;
  std::vector<InputSpec> inputs_;
  std::vector<std::string> output_names_;
};

}  // namespace torch2onnx::ort
