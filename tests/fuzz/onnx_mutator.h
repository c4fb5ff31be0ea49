#pragma once
/// \file
/// A structure-aware mutator for ONNX models: it parses the model and
/// changes what a byte flip rarely reaches intact (a dimension, an
/// attribute, an initializer's size or type, a node's inputs or operator),
/// then serializes it again. libFuzzer calls it through
/// LLVMFuzzerCustomMutator (onnx_custom_mutator.cpp); the suite calls it
/// directly (onnx_mutator_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::fuzz {

/// One mutation of the model in `bytes`, chosen by `seed`; nullopt when the
/// bytes do not parse as a model.
std::optional<std::string> mutateModel(std::string_view bytes,
                                       std::uint32_t seed);

} // namespace weir::fuzz
