#include "serialize/writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include <google/protobuf/arena.h>

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

constexpr uint64_t kAlign = 4096;

// The model file's bytes go to `sink(ptr, len)`; with external data, weights
// go to `data_sink(ptr, len)` (padding included), at the offsets recorded in
// the model.
template <typename Sink, typename DataSink>
void emit(const ir::Model& model, const WriteOptions& options, const std::string& location, Sink&& sink,
          DataSink&& data_sink) {
  ProtoOptions po;
  po.initializers = ProtoOptions::Initializers::Omit;
  po.keep_initializers_as_inputs = options.keep_initializers_as_inputs;
  po.keep_doc_strings = options.keep_doc_strings;
  google::protobuf::Arena arena;  // the graph's messages freed in one piece
  onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  to_model_proto(model, mp, po);
  std::string graph_bytes;
  mp.graph().SerializeToString(&graph_bytes);
  mp.clear_graph();
  std::string head;
  mp.SerializeToString(&head);

  // Each initializer: its header (dims, type, name[, external location]) then,
  // when inline, the raw bytes.
  struct Record {
    std::string prefix;
    const ir::Tensor* data = nullptr;  // inline bytes (nullptr when external)
    size_t nbytes = 0;
  };
  struct External {
    const ir::Tensor* data;
    size_t nbytes;
    uint64_t offset;
  };
  // A tensor's bytes to a sink: straight from its memory, or, for a computed
  // tensor (a BatchNorm-scaled or transposed weight), 1 MiB at a time through
  // one buffer. The writer reads each tensor last: its pages may go once
  // written.
  std::vector<uint8_t> scratch;
  auto stream = [&scratch](const ir::Tensor& t, auto&& to) {
    if (!t.is_computed()) {
      to(t.data(), t.nbytes());
    } else {
      constexpr size_t kPiece = size_t{1} << 20;
      scratch.resize(std::min(kPiece, t.nbytes()));
      for (size_t off = 0; off < t.nbytes(); off += kPiece) {
        const size_t k = std::min(kPiece, t.nbytes() - off);
        t.read(off, k, scratch.data());
        to(scratch.data(), k);
      }
    }
    t.release_pages();
  };
  std::vector<Record> records;
  std::vector<External> externals;
  uint64_t graph_len = graph_bytes.size();
  uint64_t data_end = 0;
  for (const ir::Value* v : model.graph->initializers()) {
    const ir::Tensor& t = *v->initializer();
    onnx::TensorProto tp;
    tensor_to_proto(t, v->name(), tp, false);
    const bool external = options.external_data && t.nbytes() >= options.external_threshold;
    if (external) {
      const uint64_t offset = (data_end + kAlign - 1) / kAlign * kAlign;
      tp.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&tp](const char* k, const std::string& val) {
        auto* e = tp.add_external_data();
        e->set_key(k);
        e->set_value(val);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      add("length", std::to_string(t.nbytes()));
      externals.push_back(External{&t, t.nbytes(), offset});
      data_end = offset + t.nbytes();
    }
    std::string header;
    tp.SerializeToString(&header);
    Record r;
    r.prefix.push_back(static_cast<char>(kInitializerTag));
    if (external) {
      put_varint(r.prefix, header.size());
      r.prefix += header;
    } else {
      const uint64_t body = header.size() + 1 + varint_size(t.nbytes()) + t.nbytes();
      put_varint(r.prefix, body);
      r.prefix += header;
      r.prefix.push_back(static_cast<char>(kRawDataTag));
      put_varint(r.prefix, t.nbytes());
      r.data = &t;
      r.nbytes = t.nbytes();
    }
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
    if (r.data) stream(*r.data, sink);
  }
  static const std::vector<uint8_t> zeros(kAlign, 0);
  uint64_t written = 0;
  for (const External& e : externals) {
    if (e.offset > written) data_sink(zeros.data(), static_cast<size_t>(e.offset - written));
    stream(*e.data, data_sink);
    written = e.offset + e.nbytes;
  }
}

// A file written under a temporary name and renamed into place by commit().
// Small pieces are gathered in a 1 MiB buffer; large ones (the weights) go
// straight from the tensors' memory to write(2).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp-" + std::to_string(::getpid())) {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(Error::Kind::Io, "cannot write '" + path_ + "': " + std::strerror(errno));
    buffer_.reserve(kBuffer);
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) std::remove(tmp_.c_str());
  }
  void write(const uint8_t* p, size_t n) {
    if (buffer_.size() + n <= kBuffer) {
      buffer_.insert(buffer_.end(), p, p + n);
      return;
    }
    flush();
    if (n < kBuffer)
      buffer_.insert(buffer_.end(), p, p + n);
    else
      write_all(p, n);
  }
  void close() {
    flush();
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) fail();
  }
  void commit() {
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
      throw Error(Error::Kind::Io, "cannot write '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
  }

 private:
  static constexpr size_t kBuffer = size_t{1} << 20;
  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_all(const uint8_t* p, size_t n) {
    while (n) {
      const ssize_t k = ::write(fd_, p, std::min(n, size_t{1} << 30));
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) errno = EIO;
      if (k <= 0) fail();
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  [[noreturn]] void fail() { throw Error(Error::Kind::Io, "writing '" + path_ + "' failed: " + std::strerror(errno)); }
  std::string path_, tmp_;
  int fd_ = -1;
  std::vector<uint8_t> buffer_;
  bool committed_ = false;
};

}  // namespace

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

uint64_t initializer_bytes(const ir::Model& model) {
  uint64_t total = 0;
  for (const ir::Value* v : model.graph->initializers()) total += v->initializer()->nbytes();
  return total;
}

bool exceeds_protobuf_limit(const ir::Model& model) {
  // Leave room for the graph itself below 2 GiB - 1.
  return initializer_bytes(model) > (uint64_t{1} << 31) - (uint64_t{64} << 20);
}

void serialize_model_to(const ir::Model& model, const WriteOptions& options,
                        const std::function<void(const uint8_t*, size_t)>& sink) {
  if (options.external_data) throw Error(Error::Kind::Usage, "a model with external data cannot be serialized to one buffer or stream");
  emit(model, options, "", sink, [](const uint8_t*, size_t) {});
}

std::string serialize_model(const ir::Model& model, const WriteOptions& options) {
  std::string out;
  out.reserve(initializer_bytes(model) + (size_t{1} << 20));  // (one allocation, not a copy per doubling)
  serialize_model_to(model, options, [&](const uint8_t* p, size_t n) { out.append(reinterpret_cast<const char*>(p), n); });
  return out;
}

// Writes through `write` in 16 MiB pieces and reports the fraction of the
// weights' bytes written after each.
class ProgressWriter {
 public:
  ProgressWriter(const ir::Model& model, const WriteOptions& options) : report_(options.progress) {
    total_ = initializer_bytes(model);
  }
  template <typename Write>
  void operator()(Write&& write, const uint8_t* p, size_t n) {
    constexpr size_t kPiece = size_t{16} << 20;
    size_t off = 0;
    do {
      const size_t k = std::min(kPiece, n - off);
      write(p + off, k);
      off += k;
      done_ += k;
      if (report_ && total_ && k) report_(std::min(1.0, double(done_) / double(total_)));
    } while (off < n);
  }

 private:
  std::function<void(double)> report_;
  uint64_t total_ = 0, done_ = 0;
};

void write_model(const ir::Model& model, const std::string& path, const WriteOptions& options) {
  ProgressWriter progress(model, options);
  if (!options.external_data) {
    AtomicFile f(path);
    auto to_file = [&](const uint8_t* p, size_t n) { f.write(p, n); };
    emit(model, options, "", [&](const uint8_t* p, size_t n) { progress(to_file, p, n); },
         [](const uint8_t*, size_t) {});
    f.close();
    if (options.before_commit) options.before_commit();
    f.commit();
    return;
  }
  const std::string data_path = path + ".data";
  AtomicFile f(path);
  AtomicFile data(data_path);
  auto to_file = [&](const uint8_t* p, size_t n) { f.write(p, n); };
  auto to_data = [&](const uint8_t* p, size_t n) { data.write(p, n); };
  emit(model, options, base_name(data_path), [&](const uint8_t* p, size_t n) { progress(to_file, p, n); },
       [&](const uint8_t* p, size_t n) { progress(to_data, p, n); });
  data.close();
  f.close();
  if (options.before_commit) options.before_commit();
  data.commit();
  f.commit();
}

}  // namespace torch2onnx::serialize
