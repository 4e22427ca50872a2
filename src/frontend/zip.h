// A zip archive read with pread(2): its central directory and its entries'
// bytes. Plain C++ (no LibTorch). One reader serves the archive check and the
// mapped loader, so a load parses the directory once and never touches the
// weights' mapping for anything else.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torch2onnx::frontend {

struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0, time = 0, date = 0;
  uint32_t crc = 0, csize = 0, usize = 0;
  uint32_t local = 0;  // offset of its local header
  // Any field at 0xFFFFFFFF: its real value is in a zip64 extra field.
  bool zip64() const { return csize == 0xFFFFFFFF || usize == 0xFFFFFFFF || local == 0xFFFFFFFF; }
  // The values, from the zip64 extra field where it holds them.
  uint64_t size = 0, packed = 0, offset = 0;
};

class ZipFile {
 public:
  // nullptr when the file cannot be opened. Reads the directory: see
  // directory_problem() for what it found.
  static std::shared_ptr<const ZipFile> open(const std::string& path);
  ~ZipFile();
  ZipFile(const ZipFile&) = delete;
  ZipFile& operator=(const ZipFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // false when [offset, offset + n) is not all in the file or cannot be read.
  bool read(uint64_t offset, void* dst, size_t n) const;

  // Plain: the directory was read (entries()). Zip64: so was it, through the
  // zip64 end record (the mapped loader leaves such archives to LibTorch).
  // NoEnd: no end of central directory record, nothing was read. Damaged:
  // see directory_problem().
  enum class Layout { Plain, Zip64, NoEnd, Damaged };
  Layout layout() const { return layout_; }
  const std::string& directory_problem() const { return problem_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }

  // Where an entry's bytes start (after its local header); an empty result
  // and `why` set when its local header is not one.
  std::optional<uint64_t> data_offset(const ZipEntry& e, std::string* why = nullptr) const;
  // "" when an entry's sizes are possible in this file, else why not: its
  // packed bytes past the file's size, a stored entry whose two sizes differ,
  // a deflated one claiming more than deflate's ratio (1032:1) allows.
  // Readers allocate the claimed size: this bounds it by the file.
  std::string size_problem(const ZipEntry& e) const;
  // An entry's bytes, inflated if deflated; an empty result and `why` set
  // when they cannot be read or decoded (the CRC is not checked here).
  std::optional<std::vector<unsigned char>> contents(const ZipEntry& e, std::string* why = nullptr) const;

 private:
  ZipFile() = default;
  void read_directory();
  int fd_ = -1;
  uint64_t size_ = 0;
  Layout layout_ = Layout::NoEnd;
  std::string problem_;
  std::vector<ZipEntry> entries_;
};

// Drops the pages only [start, start + length) uses (its page-aligned
// interior) from a file mapping of the process (MADV_DONTNEED): the next read
// faults them in again from the file. Only for pages no one wrote to.
void drop_pages(const void* start, size_t length);

// Inflates a raw-deflate zip entry (method 8) of `n` bytes into `out`, which
// holds the entry's uncompressed size: false unless exactly that much comes out.
bool inflate_entry(const unsigned char* src, size_t n, std::vector<unsigned char>& out);

}  // namespace torch2onnx::frontend
