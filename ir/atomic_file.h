#pragma once
/// \file
/// Writing a file so that a crash leaves either the old file or the new one,
/// never a truncated mix: write a temporary beside it, fsync, rename, fsync
/// the folder.

#include <filesystem>
#include <string_view>

namespace weir {

/// Throws weir::Error naming the file and the step that failed; the
/// temporary is removed and an existing file at `path` is left untouched.
void writeFileAtomically(const std::filesystem::path &path,
                         std::string_view bytes);

} // namespace weir
