#include "serialize/writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "torch2onnx/options.h"

namespace torch2onnx::serialize {
namespace {

// Protobuf wire format pieces.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

constexpr uint8_t kGraphTag = (7 << 3) | 2;        // ModelProto.graph
constexpr uint8_t kInitializerTag = (5 << 3) | 2;  // GraphProto.initializer
constexpr uint8_t kRawDataTag = (9 << 3) | 2;      // TensorProto.raw_data

// Emits the model as a sequence of byte chunks; `sink(ptr, len)` receives them.
template <typename Sink>
void emit(const ir::Model& model, const WriteOptions& options, Sink&& sink) {
  ProtoOptions po;
  po.initializers = ProtoOptions::Initializers::Omit;
  po.keep_initializers_as_inputs = options.keep_initializers_as_inputs;
  po.keep_doc_strings = options.keep_doc_strings;
  onnx::ModelProto mp;
  to_model_proto(model, mp, po);
  std::string graph_bytes;
  mp.graph().SerializeToString(&graph_bytes);
  mp.clear_graph();
  std::string head;
  mp.SerializeToString(&head);

  // Each initializer: its header (dims, type, name) then the raw bytes.
  struct Record {
    std::string prefix;  // tag, length, header, raw_data tag and length
    const uint8_t* data;
    size_t nbytes;
  };
  std::vector<Record> records;
  uint64_t graph_len = graph_bytes.size();
  for (const ir::Value* v : model.graph->initializers()) {
    const ir::Tensor& t = *v->initializer();
    onnx::TensorProto tp;
    tensor_to_proto(t, v->name(), tp, false);
    std::string header;
    tp.SerializeToString(&header);
    const uint64_t body = header.size() + 1 + varint_size(t.nbytes()) + t.nbytes();
    Record r;
    r.prefix.push_back(static_cast<char>(kInitializerTag));
    put_varint(r.prefix, body);
    r.prefix += header;
    r.prefix.push_back(static_cast<char>(kRawDataTag));
    put_varint(r.prefix, t.nbytes());
    r.data = t.data();
    r.nbytes = t.nbytes();
    graph_len += r.prefix.size() + r.nbytes;
    records.push_back(std::move(r));
  }
  std::string graph_prefix;
  graph_prefix.push_back(static_cast<char>(kGraphTag));
  put_varint(graph_prefix, graph_len);

  sink(reinterpret_cast<const uint8_t*>(head.data()), head.size());
  sink(reinterpret_cast<const uint8_t*>(graph_prefix.data()), graph_prefix.size());
  sink(reinterpret_cast<const uint8_t*>(graph_bytes.data()), graph_bytes.size());
  for (const Record& r : records) {
    sink(reinterpret_cast<const uint8_t*>(r.prefix.data()), r.prefix.size());
    sink(r.data, r.nbytes);
  }
}

}  // namespace

std::string serialize_model(const ir::Model& model, const WriteOptions& options) {
  std::string out;
  emit(model, options, [&](const uint8_t* p, size_t n) { out.append(reinterpret_cast<const char*>(p), n); });
  return out;
}

void write_model(const ir::Model& model, const std::string& path, const WriteOptions& options) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(Error::Kind::Io, "cannot write '" + path + "': " + std::strerror(errno));
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  try {
    emit(model, options, [&](const uint8_t* p, size_t n) {
      if (n && std::fwrite(p, 1, n, f) != n)
        throw Error(Error::Kind::Io, "writing '" + path + "' failed: " + std::strerror(errno));
    });
    if (std::fflush(f) != 0) throw Error(Error::Kind::Io, "writing '" + path + "' failed: " + std::strerror(errno));
    if (std::fclose(f) != 0) {
      f = nullptr;
      throw Error(Error::Kind::Io, "writing '" + path + "' failed: " + std::strerror(errno));
    }
    f = nullptr;
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(Error::Kind::Io, "cannot write '" + path + "': " + std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace torch2onnx::serialize
