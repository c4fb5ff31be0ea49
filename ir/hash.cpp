#include "ir/hash.h"

#include "ir/json.h"
#include "ir/program.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace weir::ir {
namespace {

constexpr std::uint64_t kMul1 = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kMul2 = 0xC2B2AE3D27D4EB4Full;

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= kMul2;
  h ^= h >> 29;
  h *= kMul1;
  h ^= h >> 32;
  return h;
}

std::uint64_t hashBytesOf(const Blob &b);

} // namespace

std::uint64_t hashBytes(const void *data, std::size_t size,
                        std::uint64_t seed) {
  // Word-at-a-time multiply-mix: fast enough to hash a ResNet's weights on
  // every save, and independent of the host's endianness for our targets.
  const auto *p = static_cast<const unsigned char *>(data);
  std::uint64_t h = seed ^ (size * kMul1);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ mix(w)) * kMul1 + 0x632BE59BD9B4E019ull;
  }
  std::uint64_t tail = 0;
  for (std::size_t k = 0; i + k < size; ++k)
    tail |= std::uint64_t(p[i + k]) << (8 * k);
  h = (h ^ mix(tail)) * kMul1;
  return mix(h);
}

std::uint64_t structuralHash(const Program &program) {
  BlobWriter byContent = [](const Blob &b) -> nlohmann::json {
    return {{"bytes", b->size()}, {"hash", hashHex(hashBytesOf(b))}};
  };
  nlohmann::json doc = toJson(program, byContent);
  // Name and metadata describe where the program came from, not what it is.
  std::function<void(nlohmann::json &)> strip = [&](nlohmann::json &j) {
    if (j.is_object()) {
      if (j.contains("states") && j.contains("metadata")) {
        j.erase("metadata");
        j.erase("name");
      }
      for (auto &[k, v] : j.items())
        strip(v);
    } else if (j.is_array()) {
      for (auto &v : j)
        strip(v);
    }
  };
  strip(doc);
  std::string text = doc.dump();
  return hashBytes(text.data(), text.size());
}

std::string hashHex(std::uint64_t h) {
  static const char *kHex = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    s[i] = kHex[h & 15];
  return s;
}

namespace {

/// Constant data is immutable and shared by every version of a program, so
/// its hash is remembered per blob: a workspace hashes each version it
/// makes, and a ResNet-50 carries 100 MB of weights. An entry counts only
/// while its blob is alive (a new blob at a freed address is hashed anew).
std::uint64_t hashBytesOf(const Blob &b) {
  using Entry = std::pair<std::weak_ptr<const std::vector<std::byte>>,
                          std::uint64_t>;
  static std::mutex mutex;
  static std::unordered_map<const void *, Entry> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(b.get());
        it != cache.end() && it->second.first.lock() == b)
      return it->second.second;
  }
  std::uint64_t h = hashBytes(b->data(), b->size());
  std::lock_guard lock(mutex);
  if (cache.size() >= 1 << 14)
    std::erase_if(cache, [](const auto &e) { return e.second.first.expired(); });
  cache[b.get()] = {b, h};
  return h;
}

} // namespace

} // namespace weir::ir
