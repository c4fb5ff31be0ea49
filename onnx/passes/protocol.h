#pragma once
/// \file
/// What `weir-onnx-passes` (onnx/passes/main.cpp) sends the importer
/// (onnx/onnx_passes.cpp) on its standard output: a sequence of records,
/// each a one-byte Tag, a 64-bit little-endian length and that many bytes.
/// A crash cuts the sequence short; the last Pass record names the pass
/// that was running.

#include <cerrno>
#include <cstddef>
#include <unistd.h>

namespace weir::onnx_import::passes {

enum class Tag : char {
  Pass = 'S',        ///< the pass that starts now (named in a crash)
  Note = 'N',        ///< a line for ImportReport::notes
  Unverified = 'U',  ///< a note that also makes the shapes unverified
  Mismatch = 'M',    ///< a declared shape the operators contradict
  /// The model's own initializers (their count, in decimal, is the
  /// record's payload) come first and without their data; those shape
  /// specialization added follow with theirs.
  DataOmitted = 'D',
  Model = 'P',       ///< the model the passes made
  Done = 'E',
};

constexpr std::size_t kHeaderBytes = 9; ///< the tag and the length

/// The helper's command line: the model (serialized) on standard input,
/// then `--original-opset N --target-opset N [--upgrade] [--check]
/// [--fold-constants] [--no-shape-specialization]`.
constexpr const char *kOriginalOpset = "--original-opset";
constexpr const char *kTargetOpset = "--target-opset";
constexpr const char *kUpgrade = "--upgrade";
constexpr const char *kCheck = "--check";
/// Shape specialization folds every small constant computation, not only
/// those that start from a Shape or Size (ImportOptions::foldConstants).
constexpr const char *kFoldConstants = "--fold-constants";
/// No shape specialization (ImportOptions::specializeShapes false).
constexpr const char *kNoSpecialization = "--no-shape-specialization";

/// Writes all `n` bytes to `fd` (both ends write through this: the
/// importer the model, the helper its records). False on an error.
inline bool writeAll(int fd, const char *p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

} // namespace weir::onnx_import::passes
