#include "frontend/mapped_archive.h"

#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/import.h>

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/zip.h"
#include "torch2onnx/options.h"

namespace torch2onnx::frontend {
namespace {

// Records at least this large are mapped; smaller ones are read as usual.
constexpr uint64_t kMapThreshold = 64 * 1024;
constexpr size_t kStubSize = 8;

void put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
void put32(std::string& s, uint32_t v) {
  put16(s, static_cast<uint16_t>(v & 0xffff));
  put16(s, static_cast<uint16_t>(v >> 16));
}

// The archive file, mapped private and writable: should anything write to a
// weight (a training-mode run updating BatchNorm statistics), that page is
// copied, never the file changed.
struct Mapping {
  uint8_t* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(base, size);
  }
};

// A zip entry and where its bytes are.
struct Entry {
  const ZipEntry* zip;
  uint64_t data = 0;  // offset of the record's bytes in the file
  int stub = -1;      // index among the mapped records, or -1
};

// The fields a zip's local header and its central directory entry share,
// from "compression method" to "file name length" (extra field: none).
void put_entry_fields(std::string& s, const ZipEntry& e, uint32_t crc, uint32_t csize, uint32_t usize) {
  put16(s, e.method);
  put16(s, e.time);
  put16(s, e.date);
  put32(s, crc);
  put32(s, csize);
  put32(s, usize);
  put16(s, static_cast<uint16_t>(e.name.size()));
  put16(s, 0);  // extra field length
}

// A zip with the same entries, in which each mapped record is an 8-byte stub
// (its index). Pieces are synthesized bytes or ranges of the file.
class StubbedArchive final : public caffe2::serialize::ReadAdapterInterface {
 public:
  StubbedArchive(std::shared_ptr<const ZipFile> file, const std::vector<Entry>& entries) : file_(std::move(file)) {
    std::string central;
    for (const Entry& item : entries) {
      const ZipEntry& e = *item.zip;
      const uint64_t header_at = size_;
      std::string stub;
      uint32_t crc = e.crc, csize = e.csize, usize = e.usize;
      if (item.stub >= 0) {
        for (size_t k = 0; k < kStubSize; ++k) stub.push_back(static_cast<char>((uint64_t(item.stub) >> (8 * k)) & 0xff));
        crc = static_cast<uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(stub.data()), kStubSize));
        csize = usize = kStubSize;
      }
      std::string local;
      put32(local, 0x04034b50);
      put16(local, 20);  // version needed
      put16(local, 0);   // flags
      put_entry_fields(local, e, crc, csize, usize);
      local += e.name;
      add_bytes(std::move(local));
      if (item.stub >= 0)
        add_stub(std::move(stub), item.stub);
      else
        add_range(item.data, e.csize);

      put32(central, 0x02014b50);
      put16(central, 20);  // made by
      put16(central, 20);  // needed
      put16(central, 0);   // flags
      put_entry_fields(central, e, crc, csize, usize);
      put16(central, 0);  // comment
      put16(central, 0);  // disk
      put16(central, 0);  // internal attributes
      put32(central, 0);  // external attributes
      put32(central, static_cast<uint32_t>(header_at));
      central += e.name;
    }
    const uint64_t cd_at = size_;
    const size_t cd_size = central.size();
    add_bytes(std::move(central));
    std::string end;
    put32(end, 0x06054b50);
    put16(end, 0);
    put16(end, 0);
    put16(end, static_cast<uint16_t>(entries.size()));
    put16(end, static_cast<uint16_t>(entries.size()));
    put32(end, static_cast<uint32_t>(cd_size));
    put32(end, static_cast<uint32_t>(cd_at));
    put16(end, 0);
    add_bytes(std::move(end));
  }

  size_t size() const override { return size_; }

  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    if (pos >= size_) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - pos));
    auto it = std::upper_bound(pieces_.begin(), pieces_.end(), pos,
                               [](uint64_t p, const Piece& piece) { return p < piece.start; });
    --it;
    if (it->stub >= 0 && pos == it->start && n == kStubSize) {
      std::lock_guard<std::mutex> lock(mutex_);
      stub_buffers_[buf] = it->stub;  // where LibTorch keeps this record: a storage's data
    }
    auto* out = static_cast<uint8_t*>(buf);
    size_t done = 0;
    while (done < n && it != pieces_.end()) {
      const uint64_t off = pos + done - it->start;
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n - done, it->length - off));
      if (!it->in_file)
        std::memcpy(out + done, it->bytes.data() + off, k);
      else if (!file_->read(it->file_offset + off, out + done, k))
        break;
      done += k;
      ++it;
    }
    return done;
  }

  // Storage data pointers that received a stub, and which stub.
  std::unordered_map<const void*, int> stub_buffers() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stub_buffers_;
  }

 private:
  struct Piece {
    uint64_t start = 0, length = 0;
    bool in_file = false;      // a range of the file, or
    uint64_t file_offset = 0;
    std::string bytes;         // synthesized bytes
    int stub = -1;
  };
  void add(Piece p) {
    p.start = size_;
    size_ += p.length;
    if (p.length) pieces_.push_back(std::move(p));
  }
  void add_bytes(std::string b) {
    Piece p;
    p.length = b.size();
    p.bytes = std::move(b);
    add(std::move(p));
  }
  void add_stub(std::string b, int index) {
    Piece p;
    p.length = b.size();
    p.bytes = std::move(b);
    p.stub = index;
    add(std::move(p));
  }
  void add_range(uint64_t offset, uint64_t length) {
    Piece p;
    p.length = length;
    p.in_file = true;
    p.file_offset = offset;
    add(std::move(p));
  }

  std::shared_ptr<const ZipFile> file_;
  std::vector<Piece> pieces_;
  uint64_t size_ = 0;
  mutable std::mutex mutex_;
  mutable std::unordered_map<const void*, int> stub_buffers_;
};

// Calls f on every tensor reachable from v (module attributes, lists,
// tuples, dicts, objects).
template <typename F>
void for_each_tensor(const c10::IValue& v, F& f, std::unordered_set<const void*>& seen) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) for_each_tensor(e, f, seen);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) for_each_tensor(e, f, seen);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) for_each_tensor(e.value(), f, seen);
  } else if (v.isObject()) {
    const auto& obj = v.toObjectRef();
    if (!seen.insert(&obj).second) return;
    for (const auto& slot : obj.slots()) for_each_tensor(slot, f, seen);
  }
}


// One record's bytes in the mapping, owned by one storage: when the storage
// goes (a weight folded into another, or dropped), its pages leave the
// process too, though the rest of the file stays mapped.
struct Record {
  std::shared_ptr<Mapping> file;
  uint8_t* start;
  size_t length;
  bool exclusive;  // loaded for one export: nothing writes to these pages
};

void release(void* ctx) {
  auto* r = static_cast<Record*>(ctx);
  drop_pages(r->start, r->length);
  delete r;
}

}  // namespace

std::function<void()> page_release(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage() || t.nbytes() == 0) return {};
  const c10::DataPtr& ptr = t.storage().data_ptr();
  if (ptr.get_deleter() != &release) return {};
  const auto* r = static_cast<const Record*>(ptr.get_context());
  if (!r->exclusive) return {};
  const auto* start = static_cast<const uint8_t*>(t.data_ptr());
  const size_t length = t.nbytes();
  return [start, length] { drop_pages(start, length); };
}

std::optional<torch::jit::Module> load_mapped(std::shared_ptr<const ZipFile> zip, const std::string& path,
                                              bool exclusive) {
  if (zip->layout() != ZipFile::Layout::Plain || zip->entries().empty() || zip->size() == 0) return std::nullopt;
  auto file = std::make_shared<Mapping>();
  void* base = ::mmap(nullptr, static_cast<size_t>(zip->size()), PROT_READ | PROT_WRITE, MAP_PRIVATE, zip->fd(), 0);
  if (base == MAP_FAILED) return std::nullopt;
  file->base = static_cast<uint8_t*>(base);
  file->size = static_cast<size_t>(zip->size());
  // "<archive>/data/<key>": the module's tensor records (constants stay read).
  const std::vector<ZipEntry>& zip_entries = zip->entries();
  const std::string archive = zip_entries[0].name.substr(0, zip_entries[0].name.find('/') + 1);
  const std::string data_dir = archive + "data/";
  std::vector<Entry> entries;
  std::vector<const Entry*> stubs;
  entries.reserve(zip_entries.size());
  for (const ZipEntry& z : zip_entries) {
    if ((z.flags & 1) || z.zip64()) return std::nullopt;  // encrypted, zip64
    std::optional<uint64_t> data = zip->data_offset(z);
    if (!data || *data > zip->size() || z.csize > zip->size() - *data) return std::nullopt;
    entries.push_back(Entry{&z, *data, -1});
    Entry& e = entries.back();
    // PyTorch's writer aligns records to 64 bytes; an unaligned one (another
    // zip tool) is read as usual, so that every weight is aligned for its type.
    if (z.name.rfind(data_dir, 0) == 0 && z.method == 0 && z.csize == z.usize && z.usize >= kMapThreshold &&
        e.data % 64 == 0) {
      e.stub = static_cast<int>(stubs.size());
      stubs.push_back(&e);
    }
  }
  if (stubs.empty()) return std::nullopt;
  auto view = std::make_shared<StubbedArchive>(zip, entries);
  if (view->size() > 0xFFFFFFFFull) return std::nullopt;

  torch::jit::Module m = torch::jit::load(std::static_pointer_cast<caffe2::serialize::ReadAdapterInterface>(view),
                                          c10::Device(c10::kCPU));

  const auto buffers = view->stub_buffers();
  size_t fixed = 0;
  auto point_at_file = [&](const at::Tensor& t) {
    if (!t.defined() || !t.has_storage()) return;
    c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
    auto it = buffers.find(impl->data());
    if (it == buffers.end()) return;
    const Entry& e = *stubs[static_cast<size_t>(it->second)];
    if (impl->nbytes() > e.zip->usize)
      throw Error(Error::Kind::Load, "'" + path + "' is corrupt: a tensor's storage claims " +
                                         std::to_string(impl->nbytes()) + " bytes but its record '" + e.zip->name +
                                         "' holds " + std::to_string(e.zip->usize));
    impl->set_data_ptr_noswap(c10::DataPtr(file->base + e.data, new Record{file, file->base + e.data, e.zip->usize, exclusive},
                                           &release, c10::Device(c10::kCPU)));
    ++fixed;
  };
  std::unordered_set<const void*> seen;
  for_each_tensor(c10::IValue(m._ivalue()), point_at_file, seen);
  // A stub storage not reachable from the module would keep an 8-byte buffer
  // under a larger size: never hand such a module out.
  if (fixed != buffers.size()) return std::nullopt;
  return m;
}

}  // namespace torch2onnx::frontend
