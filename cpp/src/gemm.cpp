#include "attn/gemm.hpp"

#include <algorithm>

#include "attn/simd128.hpp"
#ifdef ATTN_SIMD128
#define ATTN_GEMM_SIMD 1
#endif

namespace attn {

namespace {

// A's element (i, k) for kNN / kTN (kNT has been turned into kNN by packing B^T).
template <class T>
inline T a_at(bool ta, const T* a, std::size_t lda, std::size_t i, std::size_t k) {
  return ta ? a[k * lda + i] : a[i * lda + k];
}

// Pass 1 (kNT only): B (N, K) -> packed B^T (K, N), so every kernel reads B rows.
template <class T>
const T* pack_bt(std::size_t n, std::size_t k, const T* b, std::size_t ldb,
                 std::vector<T>* scratch) {
  scratch->resize(n * k);
  T* p = scratch->data();
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t kk = 0; kk < k; ++kk) p[kk * n + j] = b[j * ldb + kk];
  return p;
}

// Scalar reference loop: row i of C, then k ascending, each term added to every column.
template <class T>
void scalar_rows(bool ta, std::size_t i0, std::size_t i1, std::size_t j0, std::size_t n,
                 std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta,
                 T* c, std::size_t ldc) {
  for (std::size_t i = i0; i < i1; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0))
      for (std::size_t j = j0; j < n; ++j) ci[j] = T(0);
    for (std::size_t kk = 0; kk < k; ++kk) {
      const T aik = a_at(ta, a, lda, i, kk);
      const T* bk = b + kk * ldb;
      for (std::size_t j = j0; j < n; ++j) ci[j] += aik * bk[j];
    }
  }
}

template <class T>
void gemm_impl_scalar(Trans t, std::size_t m, std::size_t n, std::size_t k, const T* a,
                      std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc,
                      std::vector<T>* scratch) {
  if (t == Trans::kNT) {
    b = pack_bt(n, k, b, ldb, scratch);
    ldb = n;
  }
  scalar_rows(t == Trans::kTN, 0, m, 0, n, k, a, lda, b, ldb, beta, c, ldc);
}

#ifdef ATTN_GEMM_SIMD
// Register block of R rows x 4V columns: R*V f32x4 accumulators, held over the whole
// k loop (k ascending, mul then add: the scalar loop's order, lane by lane).
template <int R, int V>
inline void micro(bool ta, std::size_t i, std::size_t j, std::size_t k, const float* a,
                  std::size_t lda, const float* b, std::size_t ldb, bool zero, float* c,
                  std::size_t ldc) {
  v128_t acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = zero ? wasm_f32x4_splat(0.0f) : wasm_v128_load(c + (i + r) * ldc + j + 4 * v);
  // The loop ends on B's pointer, not on a counter: V8 then tests one register against another
  // instead of adding to a counter and comparing it with a bound it keeps on the stack, two
  // fewer instructions per k in a loop that is front-end bound (docs/performance.md).
  // With k = 0, A and B may be null: no pointer into them is formed.
  if (k > 0) {
    const std::size_t as_i = ta ? 1 : lda, as_k = ta ? lda : 1;
    const float* ap = a + i * as_i;
    const float* bp = b + j;
    const float* const b_end = bp + k * ldb;
    do {
      v128_t bv[V];
      for (int v = 0; v < V; ++v) bv[v] = wasm_v128_load(bp + 4 * v);
      for (int r = 0; r < R; ++r) {
        const v128_t av = wasm_v128_load32_splat(ap + r * as_i);
        for (int v = 0; v < V; ++v)
          acc[r][v] = wasm_f32x4_add(acc[r][v], wasm_f32x4_mul(av, bv[v]));
      }
      ap += as_k;
      bp += ldb;
    } while (bp != b_end);
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) wasm_v128_store(c + (i + r) * ldc + j + 4 * v, acc[r][v]);
}

// R rows of C, columns [j0, j1): blocks of 4V columns, then of 8 and of 4.
template <int R, int V>
inline void row_block(bool ta, std::size_t i, std::size_t j0, std::size_t j1, std::size_t k,
                      const float* a, std::size_t lda, const float* b, std::size_t ldb, bool zero,
                      float* c, std::size_t ldc) {
  std::size_t j = j0;
  for (; j + 4 * V <= j1; j += 4 * V) micro<R, V>(ta, i, j, k, a, lda, b, ldb, zero, c, ldc);
  if (V > 2)
    for (; j + 8 <= j1; j += 8) micro<R, 2>(ta, i, j, k, a, lda, b, ldb, zero, c, ldc);
  for (; j + 4 <= j1; j += 4) micro<R, 1>(ta, i, j, k, a, lda, b, ldb, zero, c, ldc);
}

// All rows of C for one k block and column panel: R-row blocks, then single rows.
template <int R, int V>
inline void panel(bool ta, std::size_t m, std::size_t j0, std::size_t j1, std::size_t k,
                  const float* a, std::size_t lda, const float* b, std::size_t ldb, bool zero,
                  float* c, std::size_t ldc) {
  std::size_t i = 0;
  for (; i + R <= m; i += R) row_block<R, V>(ta, i, j0, j1, k, a, lda, b, ldb, zero, c, ldc);
  for (; i < m; ++i) row_block<1, V>(ta, i, j0, j1, k, a, lda, b, ldb, zero, c, ldc);
}

// Cache blocking: k in blocks of up to 64 (C accumulates across blocks in ascending k,
// so each element keeps the scalar loop's summation order), columns in panels whose
// (k-block x panel) slice of B stays within 16 KiB (half of a 32 KiB L1) while every row
// block of A streams past it; each row block's slice of A is reused across the panel's
// column blocks (128-deep blocks with 32 KiB panels would fill the L1 with B alone). Register
// blocks: V8 allocates 15 xmm registers, and every block that needs more (5 x 8, 6 x 8, 3 x 12,
// 4 x 12, or k unrolled by 4) spills; so does k unrolled by 2. Within them, 2 x 16 (8
// accumulators, 4 vectors of B, 2 broadcasts of A per k) for kNN and kNT, whose A rows are 64-192
// long; kTN keeps 4 x 8. The measurements behind each choice: docs/performance.md.
void gemm_impl_simd(Trans t, std::size_t m, std::size_t n, std::size_t k, const float* a,
                    std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                    std::size_t ldc, std::vector<float>* scratch) {
  if (t == Trans::kNT) {
    b = pack_bt(n, k, b, ldb, scratch);
    ldb = n;
  }
  const bool ta = t == Trans::kTN, zero = beta == 0.0f;
  const std::size_t n4 = n - n % 4;  // columns the f32x4 blocks cover
  constexpr std::size_t kKc = 64, kPanelFloats = 4096;
  for (std::size_t k0 = 0; k0 < k || (k == 0 && k0 == 0); k0 += kKc) {
    const std::size_t kc = std::min(kKc, k - k0);
    const bool z = zero && k0 == 0;
    const float* ak = ta ? a + k0 * lda : a + k0;
    const float* bk = b + k0 * ldb;
    const std::size_t nc =
        std::max<std::size_t>(8, (kPanelFloats / std::max<std::size_t>(kc, 1)) & ~std::size_t{7});
    for (std::size_t j0 = 0; j0 < n4; j0 += nc) {
      const std::size_t j1 = std::min(n4, j0 + nc);
      if (ta)
        panel<4, 2>(true, m, j0, j1, kc, ak, lda, bk, ldb, z, c, ldc);
      else
        panel<2, 4>(false, m, j0, j1, kc, ak, lda, bk, ldb, z, c, ldc);
    }
    if (k == 0) break;
  }
  if (n4 < n) scalar_rows(ta, 0, m, n4, n, k, a, lda, b, ldb, beta, c, ldc);
}
#endif

}  // namespace

void gemm(Trans t, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          std::vector<float>* scratch) {
#ifdef ATTN_GEMM_SIMD
  gemm_impl_simd(t, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch);
#else
  gemm_impl_scalar(t, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch);
#endif
}

void gemm(Trans t, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
          const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc,
          std::vector<double>* scratch) {
  gemm_impl_scalar(t, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch);
}

void gemm_scalar(Trans t, std::size_t m, std::size_t n, std::size_t k, const float* a,
                 std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                 std::size_t ldc, std::vector<float>* scratch) {
  gemm_impl_scalar(t, m, n, k, a, lda, b, ldb, beta, c, ldc, scratch);
}

bool gemm_simd() {
#ifdef ATTN_GEMM_SIMD
  return true;
#else
  return false;
#endif
}

}  // namespace attn
