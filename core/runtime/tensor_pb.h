#pragma once
/// \file
/// Single serialized ONNX TensorProto files: the input_N.pb / output_N.pb of
/// ONNX's test data sets. Files are hostile input: dims are checked before
/// any data is converted, and every problem is a weir::Error naming the
/// file.

#include "core/runtime/tensor.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace weir::runtime {

/// Reads a TensorProto (raw_data or typed fields) into a writable tensor.
/// Throws weir::Error naming `path` for a corrupt protobuf, an element type
/// Weir lacks (string, complex, ...), external or segmented data, negative
/// or overflowing dims, more than `maxTensorBytes`, or data that does not
/// match the dims. Sequence and optional values (SequenceProto,
/// OptionalProto) are not tensors and are rejected too.
Tensor readTensorPb(const std::filesystem::path &path,
                    std::uint64_t maxTensorBytes = kDefaultMaxTensorBytes);

/// Writes `tensor` as a TensorProto called `name` with raw_data, atomically.
/// Throws weir::Error naming `path` when the write fails or the tensor is
/// too large for one protobuf message (2 GiB).
void writeTensorPb(const std::filesystem::path &path, const Tensor &tensor,
                   const std::string &name);

} // namespace weir::runtime
