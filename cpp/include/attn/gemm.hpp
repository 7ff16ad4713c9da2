// Dense matrix products (row-major, no BLAS), in attn_core: multi-head attention's
// projections and the training library's forward and backward passes use them.
//
//   gemm(kNN): C = beta * C + A B        A: (M, K), B: (K, N)
//   gemm(kTN): C = beta * C + A^T B      A: (K, M), B: (K, N)   weight gradients X^T dY
//   gemm(kNT): C = beta * C + A B^T      A: (M, K), B: (N, K)   input gradients dY W^T
//
// beta is 0 (overwrite) or 1 (accumulate). Every C[i][j] is summed in the same fixed
// order, k = 0, 1, ..., K-1, one multiply then one add per term (no FMA, no split
// reductions), so the float32 SIMD128 path, the scalar path and any two runs give
// bit-identical results. kNT packs B^T into the caller's scratch (N*K values) first.
#pragma once

#include <cstddef>
#include <vector>

namespace attn {

enum class Trans { kNN, kTN, kNT };

// lda, ldb, ldc: row strides of the stored matrices. `scratch` is used by kNT only.
void gemm(Trans t, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          std::vector<float>* scratch);
void gemm(Trans t, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
          const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc,
          std::vector<double>* scratch);

// The portable scalar loop (same order as the SIMD path), for tests and as a fallback.
void gemm_scalar(Trans t, std::size_t m, std::size_t n, std::size_t k, const float* a,
                 std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                 std::size_t ldc, std::vector<float>* scratch);

// True if the float32 gemm uses wasm SIMD128 in this build.
bool gemm_simd();

}  // namespace attn
