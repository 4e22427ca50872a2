#include "frontend/zip.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>

#include <sys/mman.h>
#include <unistd.h>

namespace torch2onnx::frontend {
namespace {

uint16_t u16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const unsigned char* p) { return static_cast<uint32_t>(u16(p)) | (static_cast<uint32_t>(u16(p + 2)) << 16); }
uint64_t u64(const unsigned char* p) { return static_cast<uint64_t>(u32(p)) | (static_cast<uint64_t>(u32(p + 4)) << 32); }

constexpr uint32_t kEndRecord = 0x06054b50, kCentralHeader = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr uint32_t kEnd64Record = 0x06064b50, kEnd64Locator = 0x07064b50;
constexpr uint32_t kFull32 = 0xFFFFFFFF;

// An entry's 64-bit values: a field at 0xFFFFFFFF takes the next 8 bytes of
// the zip64 extra field (id 1), in the order size, packed size, offset.
bool resolve_zip64(ZipEntry& z, const unsigned char* extra, size_t n) {
  const std::pair<uint32_t, uint64_t*> fields[] = {{z.usize, &z.size}, {z.csize, &z.packed}, {z.local, &z.offset}};
  for (const auto& [raw, value] : fields) *value = raw;
  if (!z.zip64()) return true;
  for (size_t at = 0; at + 4 <= n;) {
    const uint16_t id = u16(extra + at), len = u16(extra + at + 2);
    if (at + 4 + len > n) return false;
    if (id == 1) {
      size_t k = 0;
      for (const auto& [raw, value] : fields) {
        if (raw != kFull32) continue;
        if (k + 8 > len) return false;
        *value = u64(extra + at + 4 + k);
        k += 8;
      }
      return true;
    }
    at += 4 + len;
  }
  return false;
}

}  // namespace

std::shared_ptr<const ZipFile> ZipFile::open(const std::string& path) {
  std::shared_ptr<ZipFile> z(new ZipFile());
  z->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (z->fd_ < 0) return nullptr;
  struct stat st {};
  if (::fstat(z->fd_, &st) != 0 || st.st_size < 0) return nullptr;
  z->size_ = static_cast<uint64_t>(st.st_size);
  z->read_directory();
  return z;
}

ZipFile::~ZipFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool ZipFile::read(uint64_t offset, void* dst, size_t n) const {
  if (offset > size_ || n > size_ - offset) return false;
  auto* out = static_cast<unsigned char*>(dst);
  while (n) {
    const ssize_t k = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    out += k;
    offset += static_cast<uint64_t>(k);
    n -= static_cast<size_t>(k);
  }
  return true;
}

void ZipFile::read_directory() {
  // The end of central directory record: within the last 64 KiB + 22 bytes.
  if (size_ < 22) return;
  const uint64_t tail_at = size_ > 22 + 65535 ? size_ - 22 - 65535 : 0;
  std::vector<unsigned char> tail(static_cast<size_t>(size_ - tail_at));
  if (!read(tail_at, tail.data(), tail.size())) return;
  size_t end = tail.size() - 22;
  while (u32(&tail[end]) != kEndRecord) {
    if (end == 0) return;
    --end;
  }
  const unsigned char* e = &tail[end];
  uint64_t count = u16(e + 10), cd_size = u32(e + 12), cd_offset = u32(e + 16);
  Layout layout = Layout::Plain;
  layout_ = Layout::Damaged;
  if (count == 0xFFFF || cd_size == kFull32 || cd_offset == kFull32) {
    // The zip64 end record, found through the locator just before this one.
    layout = Layout::Zip64;
    unsigned char loc[20], rec[56];
    const uint64_t end_at = tail_at + end;
    if (end_at < 20 || !read(end_at - 20, loc, sizeof loc) || u32(loc) != kEnd64Locator ||
        !read(u64(loc + 8), rec, sizeof rec) || u32(rec) != kEnd64Record) {
      problem_ = "damaged zip64 end of central directory";
      return;
    }
    count = u64(rec + 32);
    cd_size = u64(rec + 40);
    cd_offset = u64(rec + 48);
  }
  if (cd_size > size_ || count > cd_size / 46) {
    problem_ = "a zip record points past the end of the file";
    return;
  }
  std::vector<unsigned char> cd(static_cast<size_t>(cd_size));
  if (!read(cd_offset, cd.data(), cd.size())) {
    problem_ = "a zip record points past the end of the file";
    return;
  }
  size_t pos = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (pos + 46 > cd.size() || u32(&cd[pos]) != kCentralHeader) {
      problem_ = "damaged zip central directory";
      return;
    }
    const unsigned char* c = &cd[pos];
    ZipEntry z;
    z.flags = u16(c + 8);
    z.method = u16(c + 10);
    z.time = u16(c + 12);
    z.date = u16(c + 14);
    z.crc = u32(c + 16);
    z.csize = u32(c + 20);
    z.usize = u32(c + 24);
    z.local = u32(c + 42);
    const uint16_t name_len = u16(c + 28), extra_len = u16(c + 30), comment_len = u16(c + 32);
    if (pos + 46 + name_len > cd.size()) {
      problem_ = "damaged zip central directory";
      return;
    }
    z.name.assign(reinterpret_cast<const char*>(c + 46), name_len);
    const size_t extra_at = pos + 46 + name_len;
    if (extra_at + extra_len > cd.size() || !resolve_zip64(z, cd.data() + extra_at, extra_len)) {
      problem_ = "damaged zip64 fields for '" + z.name + "'";
      return;
    }
    pos += 46 + name_len + extra_len + comment_len;
    entries_.push_back(std::move(z));
  }
  layout_ = layout;
}

std::optional<uint64_t> ZipFile::data_offset(const ZipEntry& e, std::string* why) const {
  unsigned char lh[30];
  if (!read(e.offset, lh, sizeof lh)) {
    if (why) *why = "a zip record points past the end of the file";
    return std::nullopt;
  }
  if (u32(lh) != kLocalHeader) {
    if (why) *why = "damaged zip entry header for '" + e.name + "'";
    return std::nullopt;
  }
  return e.offset + 30 + u16(lh + 26) + u16(lh + 28);
}

std::string ZipFile::size_problem(const ZipEntry& e) const {
  if (e.packed > size_ || (e.method == 0 && e.size != e.packed) || (e.method == 8 && e.size / 1032 > e.packed + 1))
    return "entry '" + e.name + "' claims " + std::to_string(e.size) + " bytes, which its " +
           std::to_string(e.packed) + " stored bytes in a file of " + std::to_string(size_) + " cannot hold";
  return "";
}

std::optional<std::vector<unsigned char>> ZipFile::contents(const ZipEntry& e, std::string* why) const {
  std::string problem = e.method == 0 || e.method == 8 ? size_problem(e) : "entry '" + e.name + "' cannot be decompressed";
  if (!problem.empty()) {
    if (why) *why = problem;
    return std::nullopt;
  }
  std::optional<uint64_t> at = data_offset(e, why);
  if (!at) return std::nullopt;
  std::vector<unsigned char> data(static_cast<size_t>(e.packed));
  if (!read(*at, data.data(), data.size())) {
    if (why) *why = "a zip record points past the end of the file";
    return std::nullopt;
  }
  if (e.method == 0) return data;
  std::vector<unsigned char> raw(static_cast<size_t>(e.size));
  if (!inflate_entry(data.data(), data.size(), raw)) {
    if (why) *why = "entry '" + e.name + "' cannot be decompressed";
    return std::nullopt;
  }
  return raw;
}

bool inflate_entry(const unsigned char* src, size_t n, std::vector<unsigned char>& out) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return false;
  zs.next_in = const_cast<unsigned char*>(src);
  zs.avail_in = static_cast<uInt>(n);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&zs, Z_FINISH);
  const bool complete = rc == Z_STREAM_END && zs.total_out == out.size();
  inflateEnd(&zs);
  return complete;
}

void drop_pages(const void* start, size_t length) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(start) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(start) + length) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace torch2onnx::frontend
