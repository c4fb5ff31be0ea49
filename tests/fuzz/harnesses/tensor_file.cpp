/// \file
/// Fuzz harness: tensor files given to `weir run --inputs` and
/// `--expected`: `.npy` when the first byte is even, an ONNX TensorProto
/// (`.pb`) otherwise. A tensor read writes back and reads again equal.

#include "core/runtime/npy.h"
#include "core/runtime/tensor_pb.h"
#include "tests/fuzz/harness.h"

using namespace weir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  std::optional<fuzz::Choice> input = fuzz::chooseFormat(data, size);
  if (!input)
    return 0;
  std::string_view body = input->body;
  constexpr std::uint64_t kMax = std::uint64_t(64) << 20;
  runtime::Tensor t;
  try {
    if (!input->second)
      t = runtime::parseNpy(body, "input.npy", kMax);
    else
      t = runtime::readTensorPb(fuzz::scratchFile("input.pb", body), kMax);
  } catch (const Error &) {
    return 0;
  }
  (void)t.describe();
  fuzz::refusable([&] {
    std::string npy = runtime::serializeNpy(t);
    runtime::Tensor back = runtime::parseNpy(npy, "again.npy", kMax);
    fuzz::require(runtime::serializeNpy(back) == npy,
                  "a tensor does not survive writing and reading .npy");
  });
  return 0;
}
