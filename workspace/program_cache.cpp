/// \file
/// Programs on disk by structural hash (see program_cache.h).

#include "workspace/program_cache.h"

#include "codegen/cpu/object_cache.h"
#include "ir/hash.h"
#include "ir/json.h"

#include <filesystem>

namespace weir::workspace {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> entry(const std::string &hashHex) {
  codegen::cpu::ObjectCache cache =
      codegen::cpu::ObjectCache::fromEnvironment();
  if (!cache.enabled() || hashHex.size() != 16 ||
      hashHex.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  return cache.folder() / (hashHex + ".wprog");
}

} // namespace

std::optional<ir::Program> cachedProgram(const std::string &hashHex) {
  std::optional<fs::path> file = entry(hashHex);
  std::error_code ec;
  if (!file || !fs::exists(*file, ec))
    return std::nullopt;
  try {
    ir::Program p = ir::loadProgram(*file);
    if (ir::hashHex(ir::structuralHash(p)) != hashHex)
      return std::nullopt;
    fs::last_write_time(*file, fs::file_time_type::clock::now(), ec);
    fs::path bin = fs::path(file->string() + ".bin");
    if (fs::exists(bin, ec))
      fs::last_write_time(bin, fs::file_time_type::clock::now(), ec);
    return p;
  } catch (const std::exception &) {
    return std::nullopt; // damaged: replayed and written again
  }
}

void cacheProgram(const ir::Program &program, const std::string &hashHex) {
  std::optional<fs::path> file = entry(hashHex);
  if (!file)
    return;
  try {
    std::error_code ec;
    fs::create_directories(file->parent_path(), ec);
    // Each file is written to a temporary and renamed; two writers of one
    // hash write the same bytes, so any pairing of their files is whole.
    // Not flushed to disk: a file a crash left partial fails its checks
    // when read and is written again.
    ir::saveProgram(program, *file, weir::Durability::Unsynced);
    codegen::cpu::ObjectCache::fromEnvironment().trimIfDue();
  } catch (const std::exception &) {
  }
}

} // namespace weir::workspace
