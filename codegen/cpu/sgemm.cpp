#include "codegen/cpu/sgemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace weir::codegen::cpu {
namespace {

// Register block: 8 rows × 32 columns = 16 zmm accumulators, two zmm of B
// and one broadcast of A per k step (32 zmm registers in all).
constexpr std::int64_t kMR = 8, kNR = 32;
// Cache blocks: an A block (kMC × kKC) stays in L2 (128 KiB), one B panel
// (kKC × kNR, 32 KiB) streams through L1, the packed B block (kKC × kNC,
// 3 MiB) sits in L3.
constexpr std::int64_t kKC = 256, kMC = 128, kNC = 3072;

struct Aligned {
  void operator()(float *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], Aligned>;

float *ensure(Buffer &buf, std::int64_t &capacity, std::int64_t floats) {
  if (capacity < floats) {
    std::size_t bytes = (static_cast<std::size_t>(floats) * 4 + 63) / 64 * 64;
    buf.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
    capacity = floats;
  }
  return buf.get();
}

/// op(A)(i, p) and op(B)(p, j) through the strides the flags imply.
struct Operand {
  const float *data;
  std::int64_t rowStride, colStride;
  float at(std::int64_t r, std::int64_t c) const {
    return data[r * rowStride + c * colStride];
  }
};

/// A rows [i0, i0+mc) × K [p0, p0+kc) into kMR-row panels, p-major inside
/// a panel, zero beyond m.
void packA(const Operand &a, std::int64_t i0, std::int64_t mc, std::int64_t p0,
           std::int64_t kc, std::int64_t m, float *out) {
  for (std::int64_t ir = 0; ir < mc; ir += kMR) {
    float *panel = out + ir * kc;
    std::int64_t rows = std::min(kMR, m - (i0 + ir));
    if (a.colStride == 1) {
      for (std::int64_t r = 0; r < kMR; ++r) {
        if (r < rows) {
          const float *src = a.data + (i0 + ir + r) * a.rowStride + p0;
          for (std::int64_t p = 0; p < kc; ++p)
            panel[p * kMR + r] = src[p];
        } else {
          for (std::int64_t p = 0; p < kc; ++p)
            panel[p * kMR + r] = 0.0f;
        }
      }
    } else {
      for (std::int64_t p = 0; p < kc; ++p)
        for (std::int64_t r = 0; r < kMR; ++r)
          panel[p * kMR + r] = r < rows ? a.at(i0 + ir + r, p0 + p) : 0.0f;
    }
  }
}

/// B K [p0, p0+kc) × columns [j0, j0+nc) into kNR-column panels, zero
/// beyond n. Panels [first, last) only (packing runs in parallel).
void packB(const Operand &b, std::int64_t p0, std::int64_t kc, std::int64_t j0,
           std::int64_t n, std::int64_t first, std::int64_t last, float *out) {
  for (std::int64_t jp = first; jp < last; ++jp) {
    float *panel = out + jp * kNR * kc;
    std::int64_t col0 = j0 + jp * kNR;
    std::int64_t cols = std::min(kNR, n - col0);
    for (std::int64_t p = 0; p < kc; ++p) {
      float *dst = panel + p * kNR;
      if (b.colStride == 1 && cols == kNR) {
        std::memcpy(dst, b.data + (p0 + p) * b.rowStride + col0, kNR * 4);
        continue;
      }
      for (std::int64_t j = 0; j < kNR; ++j)
        dst[j] = j < cols ? b.at(p0 + p, col0 + j) : 0.0f;
    }
  }
}

/// C[0:rows, 0:cols] = alpha·(A·Bp) + beta·C over one kMR × kNR tile. A is
/// a packed panel (element (r, p) at a[p·kMR + r]) or, when `Direct`, the
/// matrix itself (a[r·lda + p]; rows past `rows` repeat row 0 and are
/// dropped). `Half` computes only the first 16 columns (an edge panel).
template <bool Direct, bool Half>
__attribute__((target("avx512f"))) void
microKernel(std::int64_t kc, const float *a, std::int64_t lda, const float *bp,
            float *c, std::int64_t ldc, float alpha, float beta,
            std::int64_t rows, std::int64_t cols) {
  __m512 acc[kMR][2];
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  const float *row[kMR];
  if constexpr (Direct)
    for (int r = 0; r < kMR; ++r)
      row[r] = a + (r < rows ? r : 0) * lda;
  for (std::int64_t p = 0; p < kc; ++p) {
    __m512 b0 = _mm512_load_ps(bp + p * kNR);
    __m512 b1 = Half ? b0 : _mm512_load_ps(bp + p * kNR + 16);
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      __m512 av = _mm512_set1_ps(Direct ? row[r][p] : a[p * kMR + r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      if constexpr (!Half)
        acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  if (rows == kMR && cols == kNR && !Half) {
    for (int r = 0; r < kMR; ++r)
      for (int h = 0; h < 2; ++h) {
        float *dst = c + r * ldc + 16 * h;
        __m512 v = _mm512_mul_ps(acc[r][h], va);
        if (beta != 0.0f)
          v = _mm512_fmadd_ps(vb, _mm512_loadu_ps(dst), v);
        _mm512_storeu_ps(dst, v);
      }
    return;
  }
  // An edge tile: masked loads and stores of the valid columns.
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < (Half ? 1 : 2); ++h) {
      std::int64_t valid = std::clamp<std::int64_t>(cols - 16 * h, 0, 16);
      if (valid == 0)
        continue;
      __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1);
      float *dst = c + r * ldc + 16 * h;
      __m512 v = _mm512_mul_ps(acc[r][h], va);
      if (beta != 0.0f)
        v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, dst), v);
      _mm512_mask_storeu_ps(dst, mask, v);
    }
}

template <bool Direct>
void tile(std::int64_t kc, const float *a, std::int64_t lda, const float *bp,
          float *c, std::int64_t ldc, float alpha, float beta,
          std::int64_t rows, std::int64_t cols) {
  if (cols <= 16)
    microKernel<Direct, true>(kc, a, lda, bp, c, ldc, alpha, beta, rows, cols);
  else
    microKernel<Direct, false>(kc, a, lda, bp, c, ldc, alpha, beta, rows, cols);
}

struct Problem {
  Operand a, b;
  std::int64_t m, n, k, ldc;
  float alpha, beta;
  float *c;
  // The block being computed.
  std::int64_t j0, nc, p0, kc;
  float *packedB;
  std::int64_t mBlocks, nChunks, panelsPerChunk, panels;
  /// Read A in place instead of packing it: when it is not transposed and
  /// the few columns of B would not repay the packing.
  bool directA = false;
};

void computeItems(void *context, std::int64_t begin, std::int64_t end) {
  auto &P = *static_cast<Problem *>(context);
  thread_local Buffer bufA;
  thread_local std::int64_t capA = 0;
  float *packedA = ensure(bufA, capA, kMC * kKC);
  std::int64_t packedFor = -1;
  float beta = P.p0 == 0 ? P.beta : 1.0f;
  // Items run M-block-major, so consecutive items reuse the packed A.
  for (std::int64_t item = begin; item < end; ++item) {
    std::int64_t mb = item / P.nChunks, chunk = item % P.nChunks;
    std::int64_t i0 = mb * kMC, mc = std::min(kMC, P.m - i0);
    if (!P.directA && packedFor != mb) {
      packA(P.a, i0, mc, P.p0, P.kc, P.m, packedA);
      packedFor = mb;
    }
    std::int64_t firstPanel = chunk * P.panelsPerChunk;
    std::int64_t lastPanel = std::min(P.panels, firstPanel + P.panelsPerChunk);
    for (std::int64_t jp = firstPanel; jp < lastPanel; ++jp) {
      std::int64_t col = P.j0 + jp * kNR;
      std::int64_t cols = std::min(kNR, P.n - col);
      const float *bp = P.packedB + jp * kNR * P.kc;
      for (std::int64_t ir = 0; ir < mc; ir += kMR) {
        float *c = P.c + (i0 + ir) * P.ldc + col;
        std::int64_t rows = std::min(kMR, mc - ir);
        if (P.directA)
          tile<true>(P.kc, P.a.data + (i0 + ir) * P.a.rowStride + P.p0,
                     P.a.rowStride, bp, c, P.ldc, P.alpha, beta, rows, cols);
        else
          tile<false>(P.kc, packedA + ir * P.kc, 0, bp, c, P.ldc, P.alpha,
                      beta, rows, cols);
      }
    }
  }
}

void packItems(void *context, std::int64_t begin, std::int64_t end) {
  auto &P = *static_cast<Problem *>(context);
  packB(P.b, P.p0, P.kc, P.j0, P.n, begin, end, P.packedB);
}

/// C = beta·C (alpha·A·B vanishes when k = 0 or alpha = 0).
void scaleC(float *c, std::int64_t m, std::int64_t n, std::int64_t ldc,
            float beta) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

} // namespace

bool sgemmKernelAvailable() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

void sgemm(runtime::ThreadPool &pool, bool transA, bool transB, std::int64_t m,
           std::int64_t n, std::int64_t k, float alpha, const float *a,
           std::int64_t lda, const float *b, std::int64_t ldb, float beta,
           float *c, std::int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0 || alpha == 0.0f) {
    scaleC(c, m, n, ldc, beta);
    return;
  }
  Problem P;
  P.a = transA ? Operand{a, 1, lda} : Operand{a, lda, 1};
  P.b = transB ? Operand{b, 1, ldb} : Operand{b, ldb, 1};
  P.m = m;
  P.n = n;
  P.k = k;
  P.ldc = ldc;
  P.alpha = alpha;
  P.beta = beta;
  P.c = c;
  thread_local Buffer bufB;
  thread_local std::int64_t capB = 0;
  P.packedB = ensure(bufB, capB, kKC * kNC);
  std::int64_t threads = pool.threads();
  for (P.j0 = 0; P.j0 < n; P.j0 += kNC) {
    P.nc = std::min(kNC, n - P.j0);
    P.panels = (P.nc + kNR - 1) / kNR;
    P.directA = P.a.colStride == 1 && P.panels <= 4;
    P.mBlocks = (m + kMC - 1) / kMC;
    // Enough items that every thread gets work even when M is one block;
    // never narrower than two panels, so A packing stays cheap.
    P.nChunks = std::clamp<std::int64_t>(
        (4 * threads + P.mBlocks - 1) / P.mBlocks, 1, (P.panels + 1) / 2);
    P.panelsPerChunk = (P.panels + P.nChunks - 1) / P.nChunks;
    P.nChunks = (P.panels + P.panelsPerChunk - 1) / P.panelsPerChunk;
    for (P.p0 = 0; P.p0 < k; P.p0 += kKC) {
      P.kc = std::min(kKC, k - P.p0);
      pool.parallelFor(P.panels, &packItems, &P);
      pool.parallelFor(P.mBlocks * P.nChunks, &computeItems, &P);
    }
  }
}

std::optional<GemmEngine> parseGemmEngine(std::string_view name) {
  for (GemmEngine e : {GemmEngine::Auto, GemmEngine::Weir, GemmEngine::OpenBlas})
    if (gemmEngineName(e) == name)
      return e;
  return std::nullopt;
}

std::string_view gemmEngineName(GemmEngine e) {
  switch (e) {
  case GemmEngine::Auto:
    return "auto";
  case GemmEngine::Weir:
    return "weir";
  case GemmEngine::OpenBlas:
    return "openblas";
  }
  return "?";
}

} // namespace weir::codegen::cpu
