// torch2onnx::warn: to stderr by default, to the innermost live
// WarningCollector of the thread otherwise; messages a collector did not
// hand out are passed on when it ends.
#include "torch2onnx/warnings.h"

#include <gtest/gtest.h>

#include <thread>

namespace torch2onnx {
namespace {

TEST(Warnings, PrintedWithoutACollector) {
  testing::internal::CaptureStderr();
  warn("first");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "torch2onnx: warning: first\n");
}

TEST(Warnings, CollectedInOrderAndTakenOnce) {
  testing::internal::CaptureStderr();
  {
    WarningCollector c;
    warn("a");
    warn("b");
    EXPECT_EQ(c.take(), (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(c.take().empty());
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Warnings, InnermostCollectorThenPassedOutward) {
  WarningCollector outer;
  {
    WarningCollector inner;
    warn("inner, not taken");
  }  // (not taken: passed on to the outer collector)
  warn("outer");
  EXPECT_EQ(outer.take(), (std::vector<std::string>{"inner, not taken", "outer"}));
}

TEST(Warnings, AnotherThreadIsNotCollected) {
  WarningCollector c;
  testing::internal::CaptureStderr();
  std::thread([] { warn("elsewhere"); }).join();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "torch2onnx: warning: elsewhere\n");
  EXPECT_TRUE(c.take().empty());
}

}  // namespace
}  // namespace torch2onnx
