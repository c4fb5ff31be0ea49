#pragma once
/// \file
/// The runtime's strided copy, which copy nests (copy_nest.h) compile to:
/// dst[dstOffset + sum_k i_k * dstStride_k] = src[srcOffset + sum_k i_k *
/// srcStride_k] for every i in the box of the extents, in any order (the
/// buffers never overlap). Dimensions that are contiguous on both sides
/// merge, so that rows go by memcpy. Private to codegen/cpu.

#include <cstdint>

namespace weir::codegen::cpu {

/// `dims` holds `rank` triples, outermost first: extent, dst stride, src
/// stride (in elements of `elementBytes` bytes). Nothing is copied when an
/// extent is 0 or less.
void stridedCopy(void *dst, const void *src, std::int64_t elementBytes,
                 std::int64_t rank, const std::int64_t *dims);

} // namespace weir::codegen::cpu
