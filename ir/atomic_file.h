#pragma once
/// \file
/// Writing a file so that a crash leaves either the old file or the new one,
/// never a truncated mix: write a temporary beside it, fsync, rename, fsync
/// the folder.

#include <filesystem>
#include <functional>
#include <string_view>

namespace weir {

/// Synced: the data and the rename reach the disk before the call returns
/// (what a user's files need). Unsynced skips both fsyncs, for caches whose
/// entries are checked when read: after a crash such a file may be empty or
/// partial, but a reader never sees one being written.
enum class Durability { Synced, Unsynced };

/// Throws weir::Error naming the file and the step that failed; the
/// temporary is removed and an existing file at `path` is left untouched.
void writeFileAtomically(const std::filesystem::path &path,
                         std::string_view bytes,
                         Durability durability = Durability::Synced);

/// Appends bytes to the file being written.
using FileAppend = std::function<void(std::string_view)>;

/// The same, for contents too large to build in memory first: `fill` is
/// called once and appends them piece by piece. What `fill` throws is
/// passed on, after the temporary is removed.
void writeFileAtomically(const std::filesystem::path &path,
                         const std::function<void(const FileAppend &)> &fill,
                         Durability durability = Durability::Synced);

} // namespace weir
