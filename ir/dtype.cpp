#include "ir/dtype.h"

#include <array>

namespace weir::ir {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 13> kInfo{{
    {DType::F32, "f32", 4},
    {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2},
    {DType::F64, "f64", 8},
    {DType::I8, "i8", 1},
    {DType::U8, "u8", 1},
    {DType::I16, "i16", 2},
    {DType::U16, "u16", 2},
    {DType::I32, "i32", 4},
    {DType::U32, "u32", 4},
    {DType::I64, "i64", 8},
    {DType::U64, "u64", 8},
    {DType::Bool, "bool", 1},
}};

const DTypeInfo &info(DType t) { return kInfo[static_cast<std::size_t>(t)]; }

} // namespace

std::string_view dtypeName(DType t) { return info(t).name; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &i : kInfo)
    if (i.name == name)
      return i.type;
  return std::nullopt;
}

std::size_t dtypeSize(DType t) { return info(t).size; }

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

bool isSignedInt(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}

bool isUnsignedInt(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 ||
         t == DType::U64;
}

} // namespace weir::ir
