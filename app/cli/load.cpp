#include "app/cli/load.h"

#include "ir/json.h"
#include "workspace/session.h"

#include <filesystem>

namespace weir::cli {

Loaded loadAny(const std::string &path, const ir::Bindings &dims,
               const std::map<std::string, ir::TensorValue, std::less<>>
                   &values) {
  Loaded out;
  if (std::filesystem::path(path).extension() == ".weir") {
    // A session: its model with the recipe replayed (or the program that
    // replay made before, from the cache).
    bool fromCache = false;
    out.program = workspace::openSessionProgram(path, &fromCache);
    out.sessionFromCache = fromCache;
    return out;
  }
  if (std::filesystem::path(path).extension() == ".json") {
    out.program = ir::loadProgram(path);
    return out;
  }
  onnx_import::ImportOptions options;
  options.dims = dims;
  options.values = values;
  onnx_import::ImportResult r = onnx_import::importModel(path, options);
  out.program = std::move(r.program);
  out.report = std::move(r.report);
  out.fromOnnx = true;
  return out;
}

} // namespace weir::cli
