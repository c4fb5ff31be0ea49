#pragma once
/// \file
/// Resource limits for reading untrusted models. Every check happens before
/// anything is allocated from the model's claims.

#include <cstdint>

namespace weir::onnx_import {

struct ImportLimits {
  /// Largest model file (the protobuf itself).
  std::uint64_t maxModelFileBytes = std::uint64_t(4) << 30;
  /// Largest single tensor (initializer, constant or external data).
  std::uint64_t maxTensorBytes = std::uint64_t(4) << 30;
  /// Sum over all tensors.
  std::uint64_t maxTotalBytes = std::uint64_t(16) << 30;
  /// Deepest nesting of subgraphs (If/Loop/Scan bodies).
  int maxGraphNesting = 16;
};

} // namespace weir::onnx_import
