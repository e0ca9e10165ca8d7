#include "agent/task_dir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "agent/testing/test_util.h"

namespace berth::agent {
namespace {

// The agent and a task's supervisor both write supervisor.pid, each at its
// own pace: a reader must only ever see the whole content, never a file one
// writer renamed into place while the other was still filling it.
TEST(WriteFileAtomicTest, TwoWritersOfOneFileNeverShowAPartOfIt) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/supervisor.pid";
  const std::string content = "12345 678 0123456789abcdef\n";
  std::atomic<int> failed_writes = 0;
  std::atomic<int> writers_left = 2;
  auto write = [&] {
    for (int i = 0; i < 300; ++i) {
      if (!WriteFileAtomic(path, content).ok()) ++failed_writes;
    }
    --writers_left;
  };
  std::thread first(write);
  std::thread second(write);
  int partial = 0;
  while (writers_left > 0) {
    const Result<std::string> read = ReadWholeFile(path);
    if (read.ok() && *read != content) ++partial;
  }
  first.join();
  second.join();
  EXPECT_EQ(failed_writes, 0) << "each writer renames its own temporary file";
  EXPECT_EQ(partial, 0);
  EXPECT_EQ(ReadWholeFile(path).value(), content);
}

}  // namespace
}  // namespace berth::agent
