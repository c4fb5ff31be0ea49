/// \file
/// libFuzzer's hook for the ONNX harnesses: three mutations in four are
/// structure-aware (onnx_mutator.h), the rest libFuzzer's own byte-level
/// ones, which also reach inputs that no longer parse.

#include "tests/fuzz/onnx_mutator.h"

#include <cstring>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t *data, std::size_t size,
                                        std::size_t maxSize);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t *data,
                                               std::size_t size,
                                               std::size_t maxSize,
                                               unsigned int seed) {
  if (seed % 4 != 0) {
    std::optional<std::string> mutated = weir::fuzz::mutateModel(
        {reinterpret_cast<const char *>(data), size}, seed);
    if (mutated && mutated->size() <= maxSize) {
      std::memcpy(data, mutated->data(), mutated->size());
      return mutated->size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}
