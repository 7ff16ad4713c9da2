// WebAssembly SIMD128 float32 kernels (internal header): the forward in simd_kernels.cpp, the
// backward in simd_backward.cpp, their shared tiles in simd_tiles.hpp, primitives in simd_ops.hpp.
//
// Both kernels share one register-blocked score micro-kernel. For a query tile
// of 64 rows, Q is transposed once (scale folded in) into a (d_k, 64) block Qt;
// a score tile of 64 keys x 64 queries is then computed key-major, St[j][i],
// with a 2-key x 16-query block of eight f32x4 accumulators: per step of d_k,
// four loads of Qt, two broadcast loads of K and 8 multiplies + 8 adds (wasm
// SIMD has no FMA). Key-major scores make the online softmax vertical: the row
// maxima, sums and rescaling of four query rows sit in one f32x4, with no
// horizontal reductions. Working memory is O(64 * (64 + d_k)), independent of T
// (transposing K instead would cost T * d_k).
//
//  - naive_kernel_simd materialises the weights (transposed back into row-major
//    4 x 4 blocks), then a vectorised softmax per row, then weights . V with a
//    2-row x 16-column register block. When one key tile holds every key and every
//    row's keys start at 0 (T_k <= 64, causal or unmasked: the training shapes), the
//    softmax runs vertically on the key-major tile instead, with the same bits, and
//    weights . V reads that tile.
//  - tiled_kernel_simd streams 64-key tiles (64 query rows x 64 keys) with the
//    online softmax, skipping tiles a causal
//    or window mask forbids for every row of the query tile and masking only the
//    tiles that straddle a boundary.
//
// The fast kernels are taken only when every input value is finite and small
// enough that no score, exponent argument or accumulator can overflow
// (simd_eligible); then no NaN or Inf can arise and the results follow the
// scalar kernels' semantics (fill policies, fully masked rows, lse, entropy,
// diagnostics). Anything else (NaN/Inf inputs, float32 overflow) falls back to
// the scalar kernels in kernels.hpp, which define the corner cases.
#pragma once

#include <cstddef>

#include "attn/types.hpp"

namespace attn::detail {

// attn/simd128.hpp's ATTN_SIMD128 condition, here without parsing the intrinsics' header.
#if !defined(ATTN_SCALAR) && (defined(__wasm_simd128__) || defined(ATTN_SIMDE))
inline constexpr bool kSimdKernels = true;
#else
inline constexpr bool kSimdKernels = false;
#endif

// True if the SIMD kernels are compiled in and may take this call.
bool simd_eligible(const float* q, const float* k, const float* v, const AttentionOptions& o,
                   float scale);

// Each returns false (leaving *out untouched) when not compiled in or not eligible;
// otherwise fills the outputs exactly as the scalar kernel would (within rounding).
bool naive_kernel_simd(const float* q, const float* k, const float* v, const AttentionOptions& o,
                       float scale, AttentionResult<float>* out);
bool tiled_kernel_simd(const float* q, const float* k, const float* v, const AttentionOptions& o,
                       float scale, AttentionResult<float>* out);

// The tiled backward (FlashAttention-2 style) on the same micro-kernels: per 64-row query
// tile, Q and dO are transposed once; per key tile, S = Q K^T and dP = dO V^T come from
// score_tile (key-major), P = 2^(S log2 e - lse log2 e) and dS = scale P (dP - D) are
// vertical (four query rows per vector), and dV += P^T dO, dK += dS^T Q, dQ += dS K use
// accumulate_pv; dropout through a per-tile keep mask (attn/dropout.hpp). Eligible like the
// forward (finite, no overflow possible) plus
// a finite, bounded dO and a finite lse on every row with an allowed key; false otherwise.
// from_weights (the naive backward): P is copied from fwd.weights (the undropped softmax)
// instead of recomputed from Q, K and lse, which saves the S = Q K^T pass.
bool tiled_backward_simd(const float* q, const float* k, const float* v, const float* d_out,
                         const AttentionOptions& o, float scale, const AttentionResult<float>& fwd,
                         AttentionGrads<float>* g, bool from_weights);

// y[i] = exp(x[i]) with the vectorised exp (scalar std::exp when SIMD is off), for the
// accuracy tests. nonpositive: the kernels' short form, valid for x <= 0 (and -inf).
void exp_f32(const float* x, float* y, std::size_t n, bool nonpositive = false);

// y[i] = 2^x[i] for x[i] <= 0 (and -inf) with the kernels' exp2 (std::exp2 when SIMD
// is off): relative error about 2e-7, exactly 1 at 0, exactly 0 below -127.
void exp2_f32(const float* x, float* y, std::size_t n);

}  // namespace attn::detail
