// Exact tiled attention (online softmax, FlashAttention-style).
//
// Same maths and options as attn::attention, but the (T_q, T_k) matrix is never
// built: keys are visited in tiles while each query row keeps a running maximum m,
// a running sum l of exp(s - m) and the unnormalised output; when a new tile
// raises the maximum the old partial sums are rescaled by exp(m_old - m_new).
// Working memory beyond inputs and outputs: O(tile * (tile + d_k + d_v)) per call.
#pragma once

#include <cstddef>

#include "attn/attention.hpp"

namespace attn {

// Tile sizes, one name each (exported to JS as core.limits.tile):
inline constexpr std::size_t kTileQ = 64;  // query rows per tile (both tiled kernels)
// Key columns per tile of the scalar tiled kernel (kernels.hpp; float64, and float32 inputs
// holding NaN/Inf or too large for float32 scores), and the width of every score buffer.
inline constexpr std::size_t kTileK = 64;
// Key columns per tile of the SIMD128 tiled kernel (simd_kernels.cpp, the browser module's
// float32 path): 64, so each P.V call runs 64 key steps per load and store of its
// accumulators (simd_kernels.cpp).
inline constexpr std::size_t kTileKSimd = 64;
static_assert(kTileKSimd <= kTileK && kTileK % kTileKSimd == 0, "a SIMD key tile fits the buffer");

// Bytes of scratch the tiled kernel uses, independent of T.
std::size_t tiled_workspace_bytes(const Shape& s, std::size_t elem_size);

// Fills out->output, out->lse, out->entropy and out->diag; out->weights stays empty.
template <class T>
Status attention_tiled(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                       std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out);

}  // namespace attn
