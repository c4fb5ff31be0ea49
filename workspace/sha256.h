#pragma once
/// \file
/// SHA-256 (FIPS 180-4), for recognising a session's source model: a
/// session records its model's digest and says so when the file changed.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace weir::workspace {

class Sha256 {
public:
  /// Fastest uses the CPU's SHA extensions where it has them (x86-64's
  /// SHA-NI); Portable is the plain C++ (tests compare the two).
  enum class Engine { Fastest, Portable };
  explicit Sha256(Engine engine = Engine::Fastest);
  void update(const void *data, std::size_t size);
  /// The digest as 64 lower-case hex digits; the object is spent after.
  std::string hex();
  /// Whether this object hashes with the SHA extensions.
  bool usesShaExtensions() const { return hardware_; }

private:
  void blocks(const unsigned char *p, std::size_t count);
  void block(const unsigned char *p);
  std::uint32_t h_[8];
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;
  bool hardware_;
};

std::string sha256Hex(std::string_view bytes);
/// Digest of a file's contents; throws weir::Error naming the file.
std::string sha256File(const std::filesystem::path &path);

} // namespace weir::workspace
