#pragma once
/// \file
/// Progress of long work on a terminal: one line on stderr, rewritten in
/// place ("compiling  212/437 pieces") and erased when the work is done.
/// Nothing is written when stderr is not a terminal (a pipe, a log file,
/// the test suite), so output stays what scripts parse.

#include <chrono>
#include <string>

namespace weir::cli {

class Progress {
public:
  /// `what` begins the line ("compiling", "optimizing").
  explicit Progress(std::string what);
  ~Progress(); ///< erases the line

  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// Shows `done` of `total` `unit` ("pieces", "steps"), at most ten times a
  /// second; `detail` follows (the step's name).
  void update(long done, long total, const char *unit,
              const std::string &detail = "");

private:
  std::string what_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

} // namespace weir::cli
