// Tile sizes of the tiled kernels, one name each (exported to JS as core.limits.tile).
#pragma once

#include <cstddef>

namespace attn {

inline constexpr std::size_t kTileQ = 64;  // query rows per tile (every tiled kernel)
// Key columns per tile of the scalar tiled kernels (float64, and float32 inputs holding NaN/Inf
// or too large for float32 scores), and the width of every score buffer.
inline constexpr std::size_t kTileK = 64;
// Key columns per tile of the SIMD128 tiled forward (the browser module's float32 path): each
// P.V call runs 64 key steps per load and store of its accumulators.
inline constexpr std::size_t kTileKSimd = 64;
static_assert(kTileKSimd <= kTileK && kTileK % kTileKSimd == 0, "a SIMD key tile fits the buffer");

}  // namespace attn
