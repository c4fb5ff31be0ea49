/// \file
/// Fuzz harness: a session file (`.weir`), opened as `weir open` and the
/// GUI do: the model it names is the bundled CNN, copied next to it as
/// `model.onnx`, which is what the seed sessions name.

#include "workspace/session.h"
#include "ir/validate.h"
#include "tests/fuzz/harness.h"
#include "workspace/workspace.h"

#include <filesystem>

using namespace weir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  static const bool copied = [] {
    std::filesystem::copy_file(
        fuzz::bundledModel("cnn.onnx"), fuzz::scratchDir() / "model.onnx",
        std::filesystem::copy_options::overwrite_existing);
    return true;
  }();
  (void)copied;
  std::filesystem::path path =
      fuzz::scratchFile("session.weir", fuzz::text(data, size));
  for (bool useSnapshot : {false, true}) {
    fuzz::refusable([&] {
      workspace::OpenOptions options;
      options.useSnapshot = useSnapshot;
      std::unique_ptr<workspace::Workspace> ws =
          workspace::openSession(path, options);
      fuzz::require(!ir::hasErrors(ir::validate(ws->program())),
                    "an opened session holds an invalid program");
    });
  }
  return 0;
}
