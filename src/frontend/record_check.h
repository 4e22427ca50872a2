// The CRC-32 check of an archive's records that the archive check leaves out
// (tensor data: the bulk of the file). LibTorch's loader never checks them,
// so a damaged weight would be exported as if it were right. The check runs
// on a thread of its own while the export goes on, reading the file with
// pread(2) 1 MiB at a time (the page cache, never the process's memory), and
// the export waits for it before its output takes its final name. Plain C++
// (no LibTorch).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "frontend/zip.h"
#include "torch2onnx/options.h"

namespace torch2onnx::frontend {

// "" when `e`'s bytes match its CRC-32, else why not. `stop` (if given) is
// polled between pieces: "" when it was set.
std::string record_problem(const ZipFile& zip, const ZipEntry& e, const std::atomic<bool>* stop = nullptr);

class RecordCheck {
 public:
  // Checks `entries` of `zip` (the archive at `path`, reported as `what`),
  // on a thread when `background`, else before returning (throwing
  // Error(kind) then).
  RecordCheck(std::shared_ptr<const ZipFile> zip, std::vector<ZipEntry> entries, std::string path, std::string what,
              Error::Kind kind, bool background);
  ~RecordCheck();  // stops a check still running
  RecordCheck(const RecordCheck&) = delete;
  RecordCheck& operator=(const RecordCheck&) = delete;

  // Waits for the check; throws Error naming the first damaged record.
  void wait();

 private:
  void run();
  std::shared_ptr<const ZipFile> zip_;
  std::vector<ZipEntry> entries_;
  std::string path_, what_;
  Error::Kind kind_;
  std::atomic<bool> stop_{false};
  std::string problem_;
  std::thread thread_;
};

}  // namespace torch2onnx::frontend
