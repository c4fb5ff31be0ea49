#pragma once
/// \file
/// What every fuzz harness shares (tests/fuzz/harnesses/*.cpp).
///
/// A harness is one function, LLVMFuzzerTestOneInput, that feeds bytes to one
/// of Weir's readers and then through what a user would do next. Weir may
/// refuse an input with weir::Error, which is the expected answer to garbage;
/// anything else that escapes (another exception, a crash, a sanitizer
/// report, a broken invariant) is a finding. The same harness links either
/// with libFuzzer (the `fuzz` preset, scripts/fuzz.sh) or with replay_main.cpp,
/// which runs saved inputs in the normal and ASan suites.

#include "ir/error.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace weir::fuzz {

/// The input as text.
inline std::string_view text(const std::uint8_t *data, std::size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// For harnesses that read two formats: the first byte picks one (even:
/// the first, odd: the second), the rest is the input. Nullopt for no bytes.
struct Choice {
  bool second;
  std::string_view body;
};
inline std::optional<Choice> chooseFormat(const std::uint8_t *data,
                                          std::size_t size) {
  if (size == 0)
    return std::nullopt;
  return Choice{data[0] % 2 == 1, text(data + 1, size - 1)};
}

/// A folder of this process's own, made once and reused: readers that take a
/// path get the input written there.
const std::filesystem::path &scratchDir();

/// Writes `bytes` to `scratchDir() / name` and returns the path.
std::filesystem::path scratchFile(std::string_view name,
                                  std::string_view bytes);

/// Aborts with `what` when `condition` is false: an invariant the harness
/// checks beyond "no crash" (libFuzzer then saves the input).
void require(bool condition, const std::string &what);

/// Runs `body`; a weir::Error is a clean refusal and is swallowed.
template <typename F> void refusable(F &&body) {
  try {
    body();
  } catch (const Error &) {
  }
}

/// A bundled model by file name (resources/models), for harnesses that need
/// a program to act on.
std::filesystem::path bundledModel(std::string_view name);

} // namespace weir::fuzz
