#include "agent/wakeup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/task_dir.h"
#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;

class WakeupTest : public ::testing::Test {
 protected:
  std::string TaskDir(const std::string& name) {
    const std::string dir = dir_.path() + "/" + name;
    std::filesystem::create_directories(dir);
    return dir;
  }
  static void Exit(const std::string& dir) {
    ASSERT_TRUE(WriteFileAtomic(dir + "/" + task_files::kExit, "{}").ok());
  }

  TempDir dir_;
  std::unique_ptr<Wakeup> wakeup_ = Wakeup::Create().value();
};

TEST_F(WakeupTest, WaitsTheWholeTimeForNothing) {
  wakeup_->WatchTaskDirs({TaskDir("1-0-1")});
  EXPECT_FALSE(wakeup_->Wait(milliseconds(30)));
}

TEST_F(WakeupTest, ANotifyBeforeTheWaitIsNotLost) {
  wakeup_->Notify();
  wakeup_->Notify();
  EXPECT_TRUE(wakeup_->Wait(milliseconds(10'000)));
  EXPECT_FALSE(wakeup_->Wait(milliseconds(10)));  // both were taken by one wait
}

TEST_F(WakeupTest, ANotifyFromAnotherThreadEndsTheWait) {
  std::thread notifier([this] {
    std::this_thread::sleep_for(milliseconds(20));
    wakeup_->Notify();
  });
  EXPECT_TRUE(wakeup_->Wait(milliseconds(10'000)));
  notifier.join();
}

TEST_F(WakeupTest, AWatchedTaskThatExitsEndsTheWait) {
  const std::string dir = TaskDir("1-0-1");
  wakeup_->WatchTaskDirs({dir});
  std::thread task([&dir] {
    std::this_thread::sleep_for(milliseconds(20));
    Exit(dir);
  });
  EXPECT_TRUE(wakeup_->Wait(milliseconds(10'000)));
  task.join();
}

TEST_F(WakeupTest, OtherFilesOfATaskDoNotWake) {
  const std::string dir = TaskDir("1-0-1");
  wakeup_->WatchTaskDirs({dir});
  std::ofstream(dir + "/log") << "output\n";
  ASSERT_TRUE(WriteFileAtomic(dir + "/" + task_files::kStop, "5000").ok());
  EXPECT_FALSE(wakeup_->Wait(milliseconds(30)));
}

TEST_F(WakeupTest, ATaskThatExitedBeforeItsWatchWakesAtOnce) {
  const std::string dir = TaskDir("1-0-1");
  Exit(dir);
  wakeup_->WatchTaskDirs({dir});
  EXPECT_TRUE(wakeup_->Wait(milliseconds(10'000)));
}

TEST_F(WakeupTest, ADirNoLongerListedIsNotWatched) {
  const std::string first = TaskDir("1-0-1");
  const std::string second = TaskDir("2-0-1");
  wakeup_->WatchTaskDirs({first, second});
  wakeup_->WatchTaskDirs({second});
  Exit(first);
  EXPECT_FALSE(wakeup_->Wait(milliseconds(30)));
  Exit(second);
  EXPECT_TRUE(wakeup_->Wait(milliseconds(10'000)));
}

}  // namespace
}  // namespace berth::agent
