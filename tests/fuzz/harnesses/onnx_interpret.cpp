/// \file
/// Fuzz harness: ONNX bytes through import, expand-all and the reference
/// interpreter (tests/fuzz/onnx_pipeline.h).

#include "tests/fuzz/onnx_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  weir::fuzz::runOnnx(data, size, weir::fuzz::OnnxBackend::Interpreter);
  return 0;
}
