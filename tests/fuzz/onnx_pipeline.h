#pragma once
/// \file
/// ONNX bytes through what `weir run` does with a model: import, expand
/// every operator, random inputs, run. The two ONNX harnesses share it; one
/// runs the interpreter, the other the JIT as well, with the interpreter as
/// its oracle.

#include <cstddef>
#include <cstdint>

namespace weir::fuzz {

enum class OnnxBackend { Interpreter, Jit };

void runOnnx(const std::uint8_t *data, std::size_t size, OnnxBackend backend);

} // namespace weir::fuzz
