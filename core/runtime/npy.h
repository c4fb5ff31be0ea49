#pragma once
/// \file
/// numpy's .npy files (format versions 1.0, 2.0 and 3.0), the exchange
/// format for inputs and reference outputs. Readers treat the file as
/// hostile: every claim in the header is checked before anything is
/// allocated from it, and every problem is a weir::Error naming the file.

#include "core/runtime/tensor.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace weir::runtime {

/// Reads a little- or big-endian, C- or Fortran-ordered array of a numeric
/// or bool dtype into a writable C-ordered tensor. Throws weir::Error naming
/// `path` for anything else (bad magic, malformed header, unsupported dtype,
/// data shorter or longer than the shape needs, more than `maxTensorBytes`).
Tensor readNpy(const std::filesystem::path &path,
               std::uint64_t maxTensorBytes = kDefaultMaxTensorBytes);

/// readNpy on bytes in memory; `name` starts every error message.
Tensor parseNpy(std::string_view bytes, const std::string &name,
                std::uint64_t maxTensorBytes = kDefaultMaxTensorBytes);

/// The bytes numpy.save would write for the same array (format 1.0, or 2.0
/// when the header needs it). Throws weir::Error for bf16, which numpy has
/// no dtype for.
std::string serializeNpy(const Tensor &tensor);

/// serializeNpy into `path`, atomically (ir/atomic_file.h).
void writeNpy(const std::filesystem::path &path, const Tensor &tensor);

} // namespace weir::runtime
