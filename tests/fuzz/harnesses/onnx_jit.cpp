/// \file
/// Fuzz harness: ONNX bytes through import, expand-all and the JIT, with the
/// interpreter as the oracle for bounds and results
/// (tests/fuzz/onnx_pipeline.h).

#include "tests/fuzz/onnx_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  weir::fuzz::runOnnx(data, size, weir::fuzz::OnnxBackend::Jit);
  return 0;
}
