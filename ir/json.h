#pragma once
/// \file
/// Versioned JSON form of a program. The JSON holds the structure; constant
/// data (weights, tensor attributes) lives out of line in a binary section,
/// referenced by offset, length and content hash. On disk the section is a
/// sidecar next to the JSON file (`program.json` + `program.json.bin`).
/// Reading what was written yields an equal program: toJson(fromJson(j)) == j.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <vector>

#include "ir/atomic_file.h"
#include "ir/attribute.h"

namespace weir::ir {

class Program;

/// Current format version; readers accept this one and reject newer ones.
inline constexpr int kJsonFormatVersion = 1;

/// Receives each distinct blob while writing and returns the JSON that stands
/// for it in the document.
using BlobWriter = std::function<nlohmann::json(const Blob &)>;
/// Turns such JSON back into the blob while reading.
using BlobReader = std::function<Blob(const nlohmann::json &)>;

nlohmann::json toJson(const Program &program, const BlobWriter &writeBlob);
/// Throws weir::Error naming the offending key or value.
Program fromJson(const nlohmann::json &doc, const BlobReader &readBlob);

/// JSON + binary section in memory.
struct SerializedProgram {
  std::string json;              ///< pretty-printed, deterministic
  std::vector<std::byte> binary; ///< 64-byte aligned blobs, deduplicated
};
SerializedProgram serialize(const Program &program);
Program deserialize(const std::string &json,
                    const std::vector<std::byte> &binary);

/// Write `path` and, when the program has constant data, `path` + ".bin"
/// (an old one goes when it has none). Each file is written to a
/// temporary and renamed into place, flushed to disk first unless
/// `durability` says otherwise (caches: see ir/atomic_file.h).
void saveProgram(const Program &program, const std::filesystem::path &path,
                 Durability durability = Durability::Synced);
/// Throws weir::Error naming the file and the problem.
Program loadProgram(const std::filesystem::path &path);

} // namespace weir::ir
