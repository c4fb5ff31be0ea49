#pragma once
// A fresh, empty folder per test, removed with everything in it on
// destruction; named after the process, a counter and the running test.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace weir::workspace_testing {

class TempDir {
public:
  explicit TempDir(const std::string &prefix = "weir-test") {
    static std::atomic<unsigned> counter{0};
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++) + "-" + (info ? info->name() : "none"));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }
  std::filesystem::path operator/(const std::string &name) const {
    return path_ / name;
  }

private:
  std::filesystem::path path_;
};

} // namespace weir::workspace_testing
