#pragma once
/// \file
/// Operator attributes of Library and Primitive nodes: the ONNX attribute
/// kinds (int, float, string, lists of them, tensor, subgraph).

#include "ir/dtype.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace weir::ir {

class Program;

/// Immutable bytes shared between program versions (weights, tensor
/// attributes). Little-endian, densely packed in row-major order.
using Blob = std::shared_ptr<const std::vector<std::byte>>;

/// A constant tensor value held by an attribute.
struct TensorValue {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  Blob data;
};

using AttributeValue =
    std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                 std::vector<double>, std::vector<std::string>, TensorValue,
                 std::shared_ptr<const Program>>;

/// Ordered by name so printing and hashing are deterministic.
using Attributes = std::map<std::string, AttributeValue, std::less<>>;

} // namespace weir::ir
