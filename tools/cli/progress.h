// The CLI's progress line: "[torch2onnx] converting  42%  3.1s" redrawn in
// place on stderr for exports that take more than a couple of seconds, and
// silent when stderr is not a terminal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace torch2onnx::cli {

class ProgressLine {
 public:
  // Draws on stderr if it is a terminal (and T2O_NO_PROGRESS is unset),
  // starting `delay` after construction (T2O_PROGRESS_DELAY_MS overrides).
  ProgressLine();
  ~ProgressLine();  // erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Thread-safe: the stage and the fraction of it done.
  void update(const std::string& stage, double fraction);

 private:
  void loop();
  void draw();

  bool enabled_ = false;
  std::chrono::milliseconds delay_{2000};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;
  std::string stage_;
  double fraction_ = 0;
  std::thread thread_;
};

}  // namespace torch2onnx::cli
