// The process's memory as Linux reports it in /proc/self/status, for
// T2O_TIMING reports (the pipeline's stages, the CLI's baseline and peak)
// and export reports (ExportOptions::report).
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace torch2onnx {

// `field` ("VmRSS:" now, "VmHWM:" peak) in MB; -1 when not reported.
inline double process_memory_mb(const char* field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field))) / 1024.0;
  return -1;
}

// "183 MB (anon 76, file 106)": resident memory now, split into the heap
// and other private memory vs pages of files (the libraries' code, mapped
// weights).
inline std::string rss_summary() {
  auto mb = [](const char* f) { return std::to_string(static_cast<long>(process_memory_mb(f))); };
  return mb("VmRSS:") + " MB (anon " + mb("RssAnon:") + ", file " + mb("RssFile:") + ")";
}

// One stage of an export, for the report (ExportOptions::report).
struct StageRecord {
  std::string name;
  double ms = 0;      // how long it took
  double rss_mb = 0;  // resident memory after it
};

// The stages of the export running on this thread, while a report is
// being collected (ReportStages); null otherwise.
inline thread_local std::vector<StageRecord>* current_stage_log = nullptr;

// Collects the stages of one export into `log` while it lives.
class ReportStages {
 public:
  explicit ReportStages(std::vector<StageRecord>* log) : previous_(current_stage_log) {
    if (log) current_stage_log = log;
  }
  ~ReportStages() { current_stage_log = previous_; }
  ReportStages(const ReportStages&) = delete;
  ReportStages& operator=(const ReportStages&) = delete;

 private:
  std::vector<StageRecord>* previous_;
};

// A stage done, timed from `since`: the T2O_TIMING line ("[t2o] convert:
// 26.3 ms, RSS ...") and a record for the report being collected, if any.
inline void note_stage(const char* stage, std::chrono::steady_clock::time_point since) {
  const bool print = std::getenv("T2O_TIMING") != nullptr;
  if (!print && !current_stage_log) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
  if (print) std::cerr << "[t2o] " << stage << ": " << ms << " ms, RSS " << rss_summary() << "\n";
  if (current_stage_log) current_stage_log->push_back({stage, ms, process_memory_mb("VmRSS:")});
}

}  // namespace torch2onnx
