#pragma once
/// \file
/// Sessions on disk: the source model's path and SHA-256, the recipe up to
/// the current version, the program hash it must reproduce, and optionally
/// a snapshot of the current program. One JSON file, written atomically
/// (temporary, fsync, rename, fsync the folder), so a crash mid-save leaves
/// the old file or the new one, never a truncated one.
///
///     {"format": "weir-session", "version": 1,
///      "model": {"path": "cnn.onnx", "sha256": "9f86..."},
///      "recipe": {...}, "hash": "0123456789abcdef",
///      "snapshot": {"program": {...}, "binary": "<base64>"}}
///
/// A relative model path is relative to the session file's folder.

#include "workspace/workspace.h"

#include <filesystem>
#include <memory>
#include <string>

namespace weir::workspace {

struct SaveOptions {
  /// Embed the current program (weights included, base64) so the session
  /// opens without the model file.
  bool snapshot = false;
};

void saveSession(const Workspace &ws, const std::filesystem::path &path,
                 const SaveOptions &options = {});

struct OpenOptions {
  /// When the model is missing or changed and the session has a snapshot,
  /// open the snapshot (a workspace with one version) instead of failing.
  bool useSnapshot = false;
};

/// Imports the model, checks its SHA-256, replays the recipe and checks the
/// resulting hash. Throws weir::Error naming the session and the problem: a
/// missing or changed model ("model 'x.onnx' changed since the session was
/// saved"), a malformed file, a step that no longer applies.
std::unique_ptr<Workspace> openSession(const std::filesystem::path &path,
                                       const OpenOptions &options = {});

/// The session's current program alone (no history), for running it: when
/// the model is the one the session was saved on and the program of the
/// recorded hash is in the cache (workspace/program_cache.h), that program,
/// checked against the hash; else openSession's, which is then cached.
/// `fromCache` (may be null) says which.
ir::Program openSessionProgram(const std::filesystem::path &path,
                               bool *fromCache = nullptr);

/// A workspace on a model file (ONNX, or a Weir program `.json`), with the
/// file's path and digest as its source. `specializeShapes` false imports
/// without shape specialization, as Weir did before it existed.
std::unique_ptr<Workspace> openModel(const std::filesystem::path &path,
                                     bool specializeShapes = true);

} // namespace weir::workspace
