#include "tests/fuzz/harness.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace weir::fuzz {

const std::filesystem::path &scratchDir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("weir-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // Removed when the process exits normally; a crash leaves it for the
    // person reading the finding.
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratchDir(), ignored);
    });
    return d;
  }();
  return dir;
}

std::filesystem::path scratchFile(std::string_view name,
                                  std::string_view bytes) {
  std::filesystem::path path = scratchDir() / std::string(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    std::abort(); // the harness's own failure, not the input's
  return path;
}

void require(bool condition, const std::string &what) {
  if (condition)
    return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

std::filesystem::path bundledModel(std::string_view name) {
  return std::filesystem::path(WEIR_SOURCE_DIR) / "resources" / "models" /
         std::string(name);
}

} // namespace weir::fuzz
