#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace torch2onnx::cli {

ProgressLine::ProgressLine() : start_(std::chrono::steady_clock::now()) {
  enabled_ = ::isatty(STDERR_FILENO) && !std::getenv("T2O_NO_PROGRESS");
  if (const char* d = std::getenv("T2O_PROGRESS_DELAY_MS")) delay_ = std::chrono::milliseconds(std::atoi(d));
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

void ProgressLine::update(const std::string& stage, double fraction) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = stage;
  fraction_ = fraction;
}

// Redraws every 100 ms once the delay has passed (the elapsed time moves even
// while one long step gives no news).
void ProgressLine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, delay_, [this] { return stop_; })) return;
  while (!stop_) {
    draw();
    wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });
  }
}

void ProgressLine::draw() {
  if (stage_.empty()) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r\033[K[torch2onnx] %-10s %3d%%  %.1fs", stage_.c_str(),
               static_cast<int>(fraction_ * 100.0 + 0.5), seconds);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace torch2onnx::cli
