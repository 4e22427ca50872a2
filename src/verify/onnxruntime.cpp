#include "verify/onnxruntime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "torch2onnx/options.h"

namespace torch2onnx::ort {
namespace {

// The C API's handles are opaque; its functions sit at fixed positions of the
// OrtApi table (the table only ever grows at its end, so the positions hold
// for every ONNX Runtime since API version 1).
using Status = void*;
struct Table {
  const void* const* fn = nullptr;
  template <class F>
  F at(size_t i) const {
    return reinterpret_cast<F>(const_cast<void*>(fn[i]));
  }
};
enum Slot : size_t {
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kCreateSessionFromArray = 8,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetIntraOpNumThreads = 24,
  kSessionGetInputCount = 30,
  kSessionGetOutputCount = 31,
  kSessionGetInputTypeInfo = 33,
  kSessionGetInputName = 36,
  kSessionGetOutputName = 37,
  kCreateTensorWithDataAsOrtValue = 49,
  kGetTensorMutableData = 51,
  kCastTypeInfoToTensorInfo = 55,
  kGetTensorElementType = 60,
  kGetDimensionsCount = 61,
  kGetDimensions = 62,
  kGetSymbolicDimensions = 63,
  kGetTensorTypeAndShape = 65,
  kCreateCpuMemoryInfo = 69,
  kAllocatorFree = 76,
  kGetAllocatorWithDefaultOptions = 78,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseMemoryInfo = 94,
  kReleaseSession = 95,
  kReleaseValue = 96,
  kReleaseTypeInfo = 98,
  kReleaseTensorTypeAndShapeInfo = 99,
  kReleaseSessionOptions = 100,
};
constexpr uint32_t kApiVersion = 10;  // (ONNX Runtime 1.10; every later one serves it)

struct ApiBase {
  const void* const* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};

struct Library {
  void* handle = nullptr;
  Table api;
  std::string error;
};

Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = onnxruntime_library();
    lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
      lib.error = "cannot load ONNX Runtime (" + path + "): " + dlerror() +
                  "; install the onnxruntime Python package or set T2O_ONNXRUNTIME_LIB to its libonnxruntime.so";
      return;
    }
    auto get_base = reinterpret_cast<const ApiBase* (*)()>(dlsym(lib.handle, "OrtGetApiBase"));
    const ApiBase* base = get_base ? get_base() : nullptr;
    lib.api.fn = base ? base->GetApi(kApiVersion) : nullptr;
    if (!lib.api.fn) lib.error = path + " is not an ONNX Runtime C API library this torch2onnx can use";
  });
  if (!lib.api.fn) throw Error(Error::Kind::Check, lib.error);
  return lib;
}

void check(const Table& api, Status s, const char* what) {
  if (!s) return;
  std::string msg = api.at<const char* (*)(const void*)>(kGetErrorMessage)(s);
  api.at<void (*)(Status)>(kReleaseStatus)(s);
  throw Error(Error::Kind::Check, std::string("ONNX Runtime: ") + what + ": " + msg);
}

size_t element_size(ir::DType t) {
  switch (t) {
    case ir::DType::Bool: case ir::DType::UInt8: case ir::DType::Int8: return 1;
    case ir::DType::Float16: case ir::DType::BFloat16: case ir::DType::Int16: case ir::DType::UInt16: return 2;
    case ir::DType::Float: case ir::DType::Int32: case ir::DType::UInt32: return 4;
    case ir::DType::Double: case ir::DType::Int64: case ir::DType::UInt64: case ir::DType::Complex64: return 8;
    case ir::DType::Complex128: return 16;
    default: throw Error(Error::Kind::Check, std::string("ONNX Runtime tensors of ") + ir::dtype_name(t) +
                                                 " cannot be compared");
  }
}

}  // namespace

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string onnxruntime_library() {
  if (const char* env = std::getenv("T2O_ONNXRUNTIME_LIB"); env && *env) return env;
#ifdef T2O_DEFAULT_ONNXRUNTIME_LIB
  if (FILE* f = std::fopen(T2O_DEFAULT_ONNXRUNTIME_LIB, "rb")) {
    std::fclose(f);
    return T2O_DEFAULT_ONNXRUNTIME_LIB;
  }
#endif
  return "libonnxruntime.so.1";
}

struct Session::Handles {
  Table api;
  void* env = nullptr;
  void* options = nullptr;
  void* session = nullptr;
  void* memory = nullptr;
  ~Handles() {
    if (memory) api.at<void (*)(void*)>(kReleaseMemoryInfo)(memory);
    if (session) api.at<void (*)(void*)>(kReleaseSession)(session);
    if (options) api.at<void (*)(void*)>(kReleaseSessionOptions)(options);
    if (env) api.at<void (*)(void*)>(kReleaseEnv)(env);
  }
};

Session::Session(const std::string& onnx_path) : h_(std::make_unique<Handles>()) {
  open("loading " + onnx_path, onnx_path, nullptr, 0);
}

Session::Session(const void* model_bytes, size_t size) : h_(std::make_unique<Handles>()) {
  open("loading the model", "", model_bytes, size);
}

void Session::open(const std::string& what, const std::string& onnx_path, const void* bytes, size_t size) {
  const Table& api = library().api;
  h_->api = api;
  check(api, api.at<Status (*)(int, const char*, void**)>(kCreateEnv)(3 /* errors only */, "torch2onnx", &h_->env),
        "creating the environment");
  check(api, api.at<Status (*)(void**)>(kCreateSessionOptions)(&h_->options), "creating session options");
  check(api, api.at<Status (*)(void*, int)>(kSetIntraOpNumThreads)(h_->options, 1), "setting threads");
  if (bytes)
    check(api, api.at<Status (*)(void*, const void*, size_t, void*, void**)>(kCreateSessionFromArray)(
                   h_->env, bytes, size, h_->options, &h_->session),
          what.c_str());
  else
    check(api, api.at<Status (*)(void*, const char*, void*, void**)>(kCreateSession)(h_->env, onnx_path.c_str(),
                                                                                     h_->options, &h_->session),
          what.c_str());
  check(api, api.at<Status (*)(int, int, void**)>(kCreateCpuMemoryInfo)(0 /* device */, 0 /* default */, &h_->memory),
        "describing CPU memory");
  void* allocator = nullptr;
  check(api, api.at<Status (*)(void**)>(kGetAllocatorWithDefaultOptions)(&allocator), "getting an allocator");
  auto take_name = [&](size_t slot, size_t i) {
    char* name = nullptr;
    check(api, api.at<Status (*)(const void*, size_t, void*, char**)>(slot)(h_->session, i, allocator, &name),
          "reading a name");
    std::string s = name;
    check(api, api.at<Status (*)(void*, void*)>(kAllocatorFree)(allocator, name), "freeing a name");
    return s;
  };
  size_t n_in = 0, n_out = 0;
  check(api, api.at<Status (*)(const void*, size_t*)>(kSessionGetInputCount)(h_->session, &n_in), "counting inputs");
  check(api, api.at<Status (*)(const void*, size_t*)>(kSessionGetOutputCount)(h_->session, &n_out), "counting outputs");
  for (size_t i = 0; i < n_in; ++i) {
    InputSpec spec;
    spec.name = take_name(kSessionGetInputName, i);
    void* type_info = nullptr;
    check(api, api.at<Status (*)(const void*, size_t, void**)>(kSessionGetInputTypeInfo)(h_->session, i, &type_info),
          "reading an input's type");
    const void* tensor_info = nullptr;
    Status s = api.at<Status (*)(const void*, const void**)>(kCastTypeInfoToTensorInfo)(type_info, &tensor_info);
    if (!s && tensor_info) {
      int type = 0;
      size_t rank = 0;
      check(api, api.at<Status (*)(const void*, int*)>(kGetTensorElementType)(tensor_info, &type), "element type");
      check(api, api.at<Status (*)(const void*, size_t*)>(kGetDimensionsCount)(tensor_info, &rank), "rank");
      spec.dtype = static_cast<ir::DType>(type);
      spec.dims.resize(rank);
      std::vector<const char*> params(rank, nullptr);
      check(api, api.at<Status (*)(const void*, int64_t*, size_t)>(kGetDimensions)(tensor_info, spec.dims.data(), rank),
            "dims");
      check(api, api.at<Status (*)(const void*, const char**, size_t)>(kGetSymbolicDimensions)(tensor_info,
                                                                                             params.data(), rank),
            "symbolic dims");
      for (const char* p : params) spec.params.emplace_back(p ? p : "");
    }
    api.at<void (*)(void*)>(kReleaseTypeInfo)(type_info);
    if (s) check(api, s, "an input that is not a tensor");
    inputs_.push_back(std::move(spec));
  }
  for (size_t i = 0; i < n_out; ++i) output_names_.push_back(take_name(kSessionGetOutputName, i));
}

Session::~Session() = default;

std::vector<HostTensor> Session::run(const std::vector<HostTensor>& inputs) {
  const Table& api = h_->api;
  if (inputs.size() != inputs_.size())
    throw Error(Error::Kind::Check, "the ONNX model has " + std::to_string(inputs_.size()) + " inputs, got " +
                                        std::to_string(inputs.size()));
  std::vector<void*> in_values(inputs.size(), nullptr), out_values(output_names_.size(), nullptr);
  auto release = [&] {
    for (void* v : in_values)
      if (v) api.at<void (*)(void*)>(kReleaseValue)(v);
    for (void* v : out_values)
      if (v) api.at<void (*)(void*)>(kReleaseValue)(v);
  };
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const HostTensor& t = inputs[i];
      check(api,
            api.at<Status (*)(const void*, void*, size_t, const int64_t*, size_t, int, void**)>(
                kCreateTensorWithDataAsOrtValue)(h_->memory, const_cast<uint8_t*>(t.data.data()), t.data.size(),
                                                 t.shape.data(), t.shape.size(), static_cast<int>(t.dtype),
                                                 &in_values[i]),
            ("passing input " + inputs_[i].name).c_str());
    }
    std::vector<const char*> in_names, out_names;
    for (const auto& s : inputs_) in_names.push_back(s.name.c_str());
    for (const auto& s : output_names_) out_names.push_back(s.c_str());
    check(api,
          api.at<Status (*)(void*, const void*, const char* const*, const void* const*, size_t, const char* const*,
                            size_t, void**)>(kRun)(h_->session, nullptr, in_names.data(), in_values.data(),
                                                   in_values.size(), out_names.data(), out_names.size(),
                                                   out_values.data()),
          "running the model");
    std::vector<HostTensor> outs;
    for (void* v : out_values) {
      HostTensor t;
      void* info = nullptr;
      check(api, api.at<Status (*)(const void*, void**)>(kGetTensorTypeAndShape)(v, &info),
            "reading an output (only tensor outputs can be compared)");
      int type = 0;
      size_t rank = 0;
      Status s = api.at<Status (*)(const void*, int*)>(kGetTensorElementType)(info, &type);
      if (!s) s = api.at<Status (*)(const void*, size_t*)>(kGetDimensionsCount)(info, &rank);
      t.shape.resize(rank);
      if (!s) s = api.at<Status (*)(const void*, int64_t*, size_t)>(kGetDimensions)(info, t.shape.data(), rank);
      api.at<void (*)(void*)>(kReleaseTensorTypeAndShapeInfo)(info);
      check(api, s, "an output's type");
      t.dtype = static_cast<ir::DType>(type);
      t.data.resize(static_cast<size_t>(t.numel()) * element_size(t.dtype));
      void* data = nullptr;
      check(api, api.at<Status (*)(void*, void**)>(kGetTensorMutableData)(v, &data), "an output's data");
      if (!t.data.empty()) std::memcpy(t.data.data(), data, t.data.size());
      outs.push_back(std::move(t));
    }
    release();
    return outs;
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace torch2onnx::ort
