#include "workspace/sha256.h"

#include "ir/error.h"

#include <cstring>
#include <fstream>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace weir::workspace {
namespace {

constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

#if defined(__x86_64__)
/// `count` blocks with the SHA extensions (about ten times the portable
/// code's speed). The state is kept as the instructions want it: ABEF and
/// CDGH. Each of the 16 steps does four rounds; from the fifth on, its
/// four message words come from the four before (sha256msg1 adds
/// sigma0(W[t-15]) to W[t-16], the alignr adds W[t-7], sha256msg2 adds
/// sigma1(W[t-2])).
__attribute__((target("sha,sse4.1,ssse3"))) void
blocksWithShaExtensions(std::uint32_t h[8], const unsigned char *p,
                        std::size_t count) {
  const __m128i byteSwap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i *>(h));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i *>(h + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count > 0; --count, p += 64) {
    __m128i abefBefore = abef, cdghBefore = cdgh;
    __m128i m[4];
    for (int i = 0; i < 16; ++i) {
      __m128i &w = m[i % 4];
      if (i < 4)
        w = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * i)),
            byteSwap);
      else
        w = _mm_sha256msg2_epu32(
            _mm_add_epi32(_mm_sha256msg1_epu32(w, m[(i + 1) % 4]),
                          _mm_alignr_epi8(m[(i + 3) % 4], m[(i + 2) % 4], 4)),
            m[(i + 3) % 4]);
      __m128i wk = _mm_add_epi32(
          w, _mm_loadu_si128(reinterpret_cast<const __m128i *>(kRound + 4 * i)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abefBefore);
    cdgh = _mm_add_epi32(cdgh, cdghBefore);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(h),
                   _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(h + 4),
                   _mm_alignr_epi8(dchg, feba, 8));
}

bool haveShaExtensions() {
  static const bool have = __builtin_cpu_supports("sha") &&
                           __builtin_cpu_supports("sse4.1") &&
                           __builtin_cpu_supports("ssse3");
  return have;
}
#else
void blocksWithShaExtensions(std::uint32_t *, const unsigned char *,
                             std::size_t) {}
bool haveShaExtensions() { return false; }
#endif

} // namespace

Sha256::Sha256(Engine engine)
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19},
      hardware_(engine == Engine::Fastest && haveShaExtensions()) {}

void Sha256::blocks(const unsigned char *p, std::size_t count) {
  if (hardware_) {
    blocksWithShaExtensions(h_, p, count);
    return;
  }
  for (; count > 0; --count, p += 64)
    block(p);
}

void Sha256::block(const unsigned char *p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 |
           std::uint32_t(p[4 * i + 2]) << 8 | std::uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    std::uint32_t s0 =
        rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    std::uint32_t s1 =
        rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4],
                f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                       ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                       ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(const void *data, std::size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  length_ += size;
  while (size > 0) {
    if (buffered_ == 0 && size >= 64) {
      std::size_t whole = size / 64;
      blocks(p, whole);
      p += whole * 64;
      size -= whole * 64;
      continue;
    }
    std::size_t take = std::min(size, 64 - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ == 64) {
      blocks(buffer_, 1);
      buffered_ = 0;
    }
  }
}

std::string Sha256::hex() {
  std::uint64_t bits = length_ * 8;
  unsigned char pad = 0x80;
  update(&pad, 1);
  unsigned char zero = 0;
  while (buffered_ != 56)
    update(&zero, 1);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = (unsigned char)(bits >> (56 - 8 * i));
  update(len, 8);
  static const char *kHex = "0123456789abcdef";
  std::string out;
  for (std::uint32_t v : h_)
    for (int s = 28; s >= 0; s -= 4)
      out += kHex[(v >> s) & 15];
  return out;
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 s;
  s.update(bytes.data(), bytes.size());
  return s.hex();
}

std::string sha256File(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path.string() + ": cannot open to compute its digest");
  Sha256 s;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    s.update(buf.data(), std::size_t(in.gcount()));
  }
  if (in.bad())
    throw Error(path.string() + ": read error while computing its digest");
  return s.hex();
}

} // namespace weir::workspace
