#pragma once
/// \file
/// Element types of containers and tasklet values.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace weir::ir {

enum class DType : std::uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  Bool,
};

/// Short lower-case name: "f32", "bf16", "i64", "bool", ...
std::string_view dtypeName(DType t);
/// Inverse of dtypeName; nullopt for an unknown name.
std::optional<DType> parseDType(std::string_view name);
/// Storage size of one element in bytes.
std::size_t dtypeSize(DType t);
bool isFloat(DType t);
bool isSignedInt(DType t);
bool isUnsignedInt(DType t);
inline bool isInteger(DType t) { return isSignedInt(t) || isUnsignedInt(t); }

} // namespace weir::ir
