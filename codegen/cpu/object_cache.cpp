/// \file
/// The compile cache on disk (see object_cache.h).

#include "codegen/cpu/object_cache.h"

#include "ir/hash.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace weir::codegen::cpu {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'W', 'E', 'I', 'R', 'O', 'B', 'J', '1'};
constexpr const char *kExtension = ".wobj";

void putU64(std::string &out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool getU64(const std::string &in, std::size_t &at, std::uint64_t &v) {
  if (at > in.size() || in.size() - at < 8)
    return false;
  v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i]))
         << (8 * i);
  at += 8;
  return true;
}

void putString(std::string &out, const std::string &s) {
  putU64(out, s.size());
  out += s;
}

bool getString(const std::string &in, std::size_t &at, std::string &s) {
  std::uint64_t n = 0;
  if (!getU64(in, at, n) || n > in.size() - at)
    return false;
  s.assign(in, at, n);
  at += n;
  return true;
}

std::uint64_t megabytes(const char *text, std::uint64_t fallback) {
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0' || v == 0)
    return fallback;
  return static_cast<std::uint64_t>(v) << 20;
}

} // namespace

ObjectCache::ObjectCache(std::filesystem::path folder, std::uint64_t limitBytes)
    : folder_(std::move(folder)), limit_(limitBytes) {}

ObjectCache ObjectCache::fromEnvironment() {
  std::uint64_t limit = megabytes(std::getenv("WEIR_CACHE_MB"), 1024ull << 20);
  if (const char *dir = std::getenv("WEIR_CACHE_DIR"); dir && *dir) {
    if (std::string(dir) == "off")
      return ObjectCache({}, limit);
    return ObjectCache(dir, limit);
  }
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return ObjectCache(fs::path(xdg) / "weir" / "objects", limit);
  if (const char *home = std::getenv("HOME"); home && *home)
    return ObjectCache(fs::path(home) / ".cache" / "weir" / "objects", limit);
  return ObjectCache({}, limit);
}

fs::path ObjectCache::file(const std::string &key) const {
  return folder_ / (key + kExtension);
}

std::optional<CachedObject> ObjectCache::load(const std::string &key) const {
  if (!enabled())
    return std::nullopt;
  std::ifstream in(file(key), std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = std::move(buffer).str();
  if (bytes.size() < sizeof kMagic + 16 ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  std::size_t at = sizeof kMagic;
  std::uint64_t length = 0, hash = 0;
  getU64(bytes, at, length);
  getU64(bytes, at, hash);
  if (length != bytes.size() - at ||
      ir::hashBytes(bytes.data() + at, length) != hash)
    return std::nullopt;
  std::string storedKey;
  CachedObject entry;
  if (!getString(bytes, at, storedKey) || storedKey != key ||
      !getString(bytes, at, entry.optimizedIR) ||
      !getString(bytes, at, entry.object) || at != bytes.size() ||
      entry.object.empty())
    return std::nullopt;
  // A hit makes the entry the most recently used.
  std::error_code ignored;
  fs::last_write_time(file(key), fs::file_time_type::clock::now(), ignored);
  return entry;
}

void ObjectCache::store(const std::string &key,
                        const CachedObject &entry) const {
  if (!enabled())
    return;
  std::string payload;
  putString(payload, key);
  putString(payload, entry.optimizedIR);
  putString(payload, entry.object);
  std::string bytes(kMagic, sizeof kMagic);
  putU64(bytes, payload.size());
  putU64(bytes, ir::hashBytes(payload.data(), payload.size()));
  bytes += payload;

  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec)
    return;
  // A name no other writer uses: the process and a per-process counter.
  static std::atomic<std::uint64_t> counter{0};
  fs::path temp = folder_ / (key + ".tmp." + std::to_string(::getpid()) + "." +
                             std::to_string(counter++));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return;
    }
  }
  // rename() replaces atomically: a reader sees the old entry or the new.
  fs::rename(temp, file(key), ec);
  if (ec)
    fs::remove(temp, ec);
}

void ObjectCache::trimIfDue() const {
  if (!enabled())
    return;
  std::error_code ec;
  fs::path stamp = folder_ / "trim.stamp";
  fs::file_time_type last = fs::last_write_time(stamp, ec);
  auto now = fs::file_time_type::clock::now();
  if (!ec && last > now - kTrimEvery && last <= now)
    return;
  fs::create_directories(folder_, ec);
  std::ofstream(stamp, std::ios::trunc).close();
  fs::last_write_time(stamp, now, ec);
  trim();
}

void ObjectCache::trim() const {
  if (!enabled())
    return;
  struct Entry {
    fs::path path;
    fs::file_time_type time;
    std::uint64_t size;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code e;
    if (!it->is_regular_file(e) || it->path().filename() == "trim.stamp")
      continue;
    if (it->path().filename().string().find(".tmp") != std::string::npos) {
      // A temporary file a crashed writer left behind, after a day.
      if (it->last_write_time(e) <
          fs::file_time_type::clock::now() - std::chrono::hours(24))
        fs::remove(it->path(), e);
      continue;
    }
    std::uint64_t size = it->file_size(e);
    fs::file_time_type time = it->last_write_time(e);
    if (e)
      continue;
    entries.push_back({it->path(), time, size});
    total += size;
  }
  if (total <= limit_)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.time < b.time; });
  for (const Entry &e : entries) {
    if (total <= limit_)
      break;
    std::error_code removed;
    if (fs::remove(e.path, removed))
      total -= e.size;
  }
}

} // namespace weir::codegen::cpu
