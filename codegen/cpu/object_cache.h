#pragma once
/// \file
/// The compile cache on disk: machine code of compiled pieces, by key.
///
/// A key names everything the code depends on: the piece's generated LLVM
/// IR (hashed), the target CPU and its features, LLVM's version and the
/// build of Weir that generated it (see compileKey in piece_compiler.h).
/// Each entry is one file, `<key>.wobj`, in the cache folder:
///
///     magic "WEIROBJ1", u64 payload bytes, u64 payload hash, payload
///     payload: the key, the optimized IR text (may be empty), the object
///
/// An entry whose magic, length, hash or key does not match is ignored
/// (and replaced when the piece is compiled again): a corrupt or truncated
/// file is never trusted. Entries are written to a temporary file and
/// renamed into place, so processes filling one cache at once never see a
/// partial entry. Past the size limit the least recently used files in
/// the folder go (a hit refreshes an entry's time); the workspace keeps
/// sessions' programs there too (workspace/program_cache.h).
///
/// The folder is $WEIR_CACHE_DIR when set (`off` disables the cache), else
/// $XDG_CACHE_HOME/weir/objects, else ~/.cache/weir/objects. The limit is
/// $WEIR_CACHE_MB megabytes (default 1024). Commands check it with
/// trimIfDue(), at most every kTrimEvery: a check reads every file's size
/// and time, which on a full cache (some 50,000 files) took 0.3 s of each
/// `weir optimize` and `weir run`.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace weir::codegen::cpu {

struct CachedObject {
  std::string object;      ///< the relocatable object file
  std::string optimizedIR; ///< empty unless it was kept
};

class ObjectCache {
public:
  /// A cache in `folder`, created when first written; an empty path is a
  /// cache that holds nothing.
  ObjectCache(std::filesystem::path folder, std::uint64_t limitBytes);

  /// The cache the environment configures (see the file comment).
  static ObjectCache fromEnvironment();

  bool enabled() const { return !folder_.empty(); }
  const std::filesystem::path &folder() const { return folder_; }

  /// The entry for `key`, when one is present and intact.
  std::optional<CachedObject> load(const std::string &key) const;
  /// Stores an entry; a failure to write (a full disk, a read-only folder)
  /// only loses the entry.
  void store(const std::string &key, const CachedObject &entry) const;
  /// Removes the least recently used entries until the folder is within
  /// the limit.
  void trim() const;
  /// trim(), unless some process did within kTrimEvery (the time of the
  /// folder's `trim.stamp`, which this touches when it trims).
  void trimIfDue() const;
  static constexpr std::chrono::minutes kTrimEvery{10};

private:
  std::filesystem::path file(const std::string &key) const;
  std::filesystem::path folder_;
  std::uint64_t limit_;
};

} // namespace weir::codegen::cpu
