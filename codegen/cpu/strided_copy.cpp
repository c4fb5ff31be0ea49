/// \file
/// The runtime's strided copy (see strided_copy.h).

#include "codegen/cpu/strided_copy.h"

#include "codegen/cpu/copy_nest.h"

#include <array>
#include <cstring>

namespace weir::codegen::cpu {
namespace {

struct Dim {
  std::int64_t extent, dst, src; ///< strides in bytes
};

/// Copies `count` elements of `bytes` bytes each, `dst` and `src` bytes
/// apart.
void copyRow(std::byte *to, const std::byte *from, std::int64_t count,
             std::int64_t bytes, std::int64_t dst, std::int64_t src) {
  if (dst == bytes && src == bytes) {
    std::memcpy(to, from, static_cast<std::size_t>(count * bytes));
    return;
  }
  auto n = static_cast<std::size_t>(bytes);
  for (std::int64_t i = 0; i < count; ++i, to += dst, from += src)
    std::memcpy(to, from, n); // a fixed small size: one move each
}

} // namespace

void stridedCopy(void *dst, const void *src, std::int64_t elementBytes,
                 std::int64_t rank, const std::int64_t *dims) {
  // The dimensions that move: extents over 1, innermost last, each merged
  // into the one outside it when both sides are contiguous across them.
  std::array<Dim, kMaxCopyRank> d{};
  int n = 0;
  for (std::int64_t k = 0; k < rank; ++k) {
    Dim next{dims[3 * k], dims[3 * k + 1] * elementBytes,
             dims[3 * k + 2] * elementBytes};
    if (next.extent <= 0)
      return;
    if (next.extent == 1)
      continue;
    if (n > 0 && d[n - 1].dst == next.extent * next.dst &&
        d[n - 1].src == next.extent * next.src) {
      d[n - 1] = {d[n - 1].extent * next.extent, next.dst, next.src};
      continue;
    }
    d[n++] = next;
  }
  auto *to = static_cast<std::byte *>(dst);
  const auto *from = static_cast<const std::byte *>(src);
  if (n == 0) {
    std::memcpy(to, from, static_cast<std::size_t>(elementBytes));
    return;
  }
  const Dim &row = d[n - 1];
  // An odometer over the outer dimensions.
  std::array<std::int64_t, kMaxCopyRank> i{};
  for (;;) {
    copyRow(to, from, row.extent, elementBytes, row.dst, row.src);
    int k = n - 2;
    for (; k >= 0; --k) {
      to += d[k].dst;
      from += d[k].src;
      if (++i[k] < d[k].extent)
        break;
      to -= d[k].extent * d[k].dst;
      from -= d[k].extent * d[k].src;
      i[k] = 0;
    }
    if (k < 0)
      return;
  }
}

} // namespace weir::codegen::cpu
