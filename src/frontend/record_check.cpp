#include "frontend/record_check.h"

#include <zlib.h>

#include <algorithm>

namespace torch2onnx::frontend {

std::string record_problem(const ZipFile& zip, const ZipEntry& e, const std::atomic<bool>* stop) {
  const std::string fails = "record '" + e.name + "' fails its CRC check";
  if (e.method != 0) {  // compressed (PyTorch stores records; other writers may not)
    std::string why;
    std::optional<std::vector<unsigned char>> data = zip.contents(e, &why);
    if (!data) return why;
    return ::crc32(0L, data->data(), static_cast<uInt>(data->size())) == e.crc ? "" : fails;
  }
  std::string why = zip.size_problem(e);
  if (!why.empty()) return why;
  std::optional<uint64_t> at = zip.data_offset(e, &why);
  if (!at) return why;
  constexpr size_t kPiece = size_t{1} << 20;
  std::vector<unsigned char> buf(static_cast<size_t>(std::min<uint64_t>(kPiece, e.size)));
  uLong crc = ::crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < e.size;) {
    if (stop && stop->load(std::memory_order_relaxed)) return "";
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, e.size - done));
    if (!zip.read(*at + done, buf.data(), n)) return "record '" + e.name + "' runs past the end of the file";
    crc = ::crc32(crc, buf.data(), static_cast<uInt>(n));
    done += n;
  }
  return crc == e.crc ? "" : fails;
}

RecordCheck::RecordCheck(std::shared_ptr<const ZipFile> zip, std::vector<ZipEntry> entries, std::string path,
                         std::string what, Error::Kind kind, bool background)
    : zip_(std::move(zip)), entries_(std::move(entries)), path_(std::move(path)), what_(std::move(what)), kind_(kind) {
  if (background && !entries_.empty()) {
    thread_ = std::thread([this] { run(); });
  } else {
    run();
    wait();
  }
}

RecordCheck::~RecordCheck() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void RecordCheck::run() {
  for (const ZipEntry& e : entries_) {
    if (stop_) return;
    problem_ = record_problem(*zip_, e, &stop_);
    if (!problem_.empty()) return;
  }
}

void RecordCheck::wait() {
  if (thread_.joinable()) thread_.join();
  if (!problem_.empty())
    throw Error(kind_, "cannot load " + what_ + " '" + path_ + "': it is corrupt (" + problem_ + ")");
}

}  // namespace torch2onnx::frontend
