// TempDir: a scratch directory for tests, with a random name under the
// system's temp directory, removed with everything in it when it goes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

namespace berth::test_support {

class TempDir {
 public:
  TempDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("berth-test-" + std::to_string(random()) + "-" + std::to_string(random()) + "-" +
             std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  // The path of the file `name` in it.
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

  // Writes `contents` to the file `name` in it; returns the file's path.
  std::string Write(const std::string& name, std::string_view contents) const {
    const std::string path = Path(name);
    std::ofstream out(path, std::ios::binary);
    out << contents;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace berth::test_support
