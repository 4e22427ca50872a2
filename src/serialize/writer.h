// Writes a model file. Initializers are streamed from the tensors' own memory
// into the file (never copied into a protobuf buffer); the rest of the model
// is serialized by protobuf. The file is written to a temporary name next to
// the target and renamed when complete, so a failure leaves nothing behind.
#pragma once

#include <functional>
#include <string>

#include "ir/model.h"
#include "serialize/to_proto.h"

namespace torch2onnx::serialize {

struct WriteOptions {
  bool keep_initializers_as_inputs = false;
  bool keep_doc_strings = false;
  // Weights of at least `external_threshold` bytes go to "<path>.data"
  // (ONNX external data, each at a 4096-byte aligned offset).
  bool external_data = false;
  size_t external_threshold = 1024;
  // Called with the fraction of the bytes written so far.
  std::function<void(double)> progress;
  // Called once everything is written, before the files take their final
  // names: throwing leaves no output behind.
  std::function<void()> before_commit;
};

// The bytes of the model's initializers (its weights).
uint64_t initializer_bytes(const ir::Model& model);
// Whether the model is too large for one protobuf file (2 GiB).
bool exceeds_protobuf_limit(const ir::Model& model);

void write_model(const ir::Model& model, const std::string& path, const WriteOptions& options);
// "dir/m.onnx" -> "m.onnx".
std::string base_name(const std::string& path);

// The same bytes as write_model, in memory.
std::string serialize_model(const ir::Model& model, const WriteOptions& options);
// The same bytes handed to `sink` piece by piece (weights straight from their
// tensors): no copy of the whole model in memory.
void serialize_model_to(const ir::Model& model, const WriteOptions& options,
                        const std::function<void(const uint8_t*, size_t)>& sink);

}  // namespace torch2onnx::serialize
