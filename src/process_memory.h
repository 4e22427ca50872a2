// The process's memory as Linux reports it in /proc/self/status, for
// T2O_TIMING reports (the pipeline's stages, the CLI's baseline and peak).
#pragma once

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

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

// The T2O_TIMING line of a stage: "[t2o] convert: 26.3 ms, RSS ...", the
// time since `since`.
inline void print_stage(const char* stage, std::chrono::steady_clock::time_point since) {
  std::cerr << "[t2o] " << stage << ": "
            << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count()
            << " ms, RSS " << rss_summary() << "\n";
}

}  // namespace torch2onnx
