// What the core does, for a page that must show it without re-deriving it: the mask a call
// applies, the per-head NaN rows of a result, the tile sizes the tiled kernels use and
// whether this build has the SIMD128 kernels. (The memory a call counts against its cap is
// attn::estimate_bytes / attn::estimate_mha_bytes.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/attention.hpp"

namespace attn {

// The (T_q, T_k) allowed mask, row-major, 1 = query i may attend to key j, exactly as every
// kernel applies it (attn::is_allowed: causal, window, key padding and custom mask ANDed).
// The mask does not depend on the head. The sizes m.key_padding / m.mask carry are checked
// as attn::validate does; T_q * T_k bytes must fit the cap.
Status allowed_mask(const MaskSpec& m, std::size_t tq, std::size_t tk, std::size_t memory_cap,
                    std::vector<std::uint8_t>* out);

// Per query head, the rows counted in Diagnostics::nan_rows (weights, when materialised, or
// output holding a NaN); the counts add up to r.diag.nan_rows.
template <class T>
std::vector<std::size_t> nan_rows_per_head(const AttentionResult<T>& r);

// The tile shape the tiled kernel uses in this build: kTileQ query rows by kTileKSimd keys
// when the SIMD128 kernels are compiled in (the browser module) and the inputs are finite,
// else by kTileK keys (the scalar kernel).
bool simd_kernels_built();

}  // namespace attn
