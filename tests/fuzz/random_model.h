#pragma once
/// \file
/// Random small ONNX models for differential fuzzing (NNSmith's idea, in
/// miniature): a chain of 2 to 9 operators that CNN and MLP exports use —
/// convolutions (grouped and depthwise too), pooling, batch norm,
/// elementwise ops with broadcast, residual adds, concatenation,
/// transposes, flatten, Gemm and MatMul, softmax — with random shapes,
/// attributes and weights that are valid by construction.

#include <cstdint>
#include <string>

namespace weir::fuzz {

/// The serialized ModelProto (opset 13) of the model `seed` selects; its
/// one input is `x`.
std::string randomModel(std::uint64_t seed);

} // namespace weir::fuzz
