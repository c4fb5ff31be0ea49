#pragma once
/// \file
/// What `weir-onnx-passes` (onnx/passes/main.cpp) sends the importer
/// (onnx/onnx_passes.cpp) on its standard output: a sequence of records,
/// each a one-byte Tag, a 64-bit little-endian length and that many bytes.
/// A crash cuts the sequence short; the last Pass record names the pass
/// that was running.

#include <cstddef>

namespace weir::onnx_import::passes {

enum class Tag : char {
  Pass = 'S',        ///< the pass that starts now (named in a crash)
  Note = 'N',        ///< a line for ImportReport::notes
  Unverified = 'U',  ///< a note that also makes the shapes unverified
  Mismatch = 'M',    ///< a declared shape the operators contradict
  DataOmitted = 'D', ///< the model's initializers come without their data
  Model = 'P',       ///< the model the passes made
  Done = 'E',
};

constexpr std::size_t kHeaderBytes = 9; ///< the tag and the length

/// The helper's command line: the model (serialized) on standard input,
/// then `--original-opset N --target-opset N [--upgrade] [--check]`.
constexpr const char *kOriginalOpset = "--original-opset";
constexpr const char *kTargetOpset = "--target-opset";
constexpr const char *kUpgrade = "--upgrade";
constexpr const char *kCheck = "--check";

} // namespace weir::onnx_import::passes
