// Dropout on the attention weights, decided by a counter-based hash (no stored mask).
//
// Cell (head h, query i, key j) of a call with seed s is kept iff
//
//   u(s, h, i, j) = (dropout_bits(s, h, i, j) >> 11) * 2^-53   >=   p
//
// where dropout_bits chains the SplitMix64 finaliser fmix (Steele, Lea & Flood 2014;
// the output function of java.util.SplittableRandom) over the four coordinates:
//
//   r = fmix(fmix(fmix(s + G) + (h + 1) G) + (i + 1) G)     (per row: dropout_row)
//   dropout_bits = fmix(r + (j + 1) G),   G = 0x9E3779B97F4A7C15 (golden gamma)
//
// Every step is a bijection of 64-bit words, so distinct coordinates under one seed
// give distinct words, and fmix's avalanche makes neighbouring cells independent for
// practical purposes (the test suite checks the keep rate and its spread). As in
// FlashAttention, the mask is a pure function of (seed, head, query, key): the naive
// and tiled forward kernels and the backward pass recompute the same decision, and the
// per-row prefix r costs three mixes once per row, one mix per cell. The comparison is
// exact in double precision, so float and double kernels drop identical cells.
// `head` is the query head (0 <= h < H), whatever K/V head it reads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

inline constexpr std::uint64_t kDropoutGamma = 0x9E3779B97F4A7C15ull;

inline std::uint64_t dropout_fmix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The per-row prefix r(seed, head, query).
inline std::uint64_t dropout_row(std::uint64_t seed, std::size_t head, std::size_t query) {
  std::uint64_t r = dropout_fmix(seed + kDropoutGamma);
  r = dropout_fmix(r + (static_cast<std::uint64_t>(head) + 1) * kDropoutGamma);
  return dropout_fmix(r + (static_cast<std::uint64_t>(query) + 1) * kDropoutGamma);
}

// Uniform in [0, 1) with 53 random bits, for cell `key` of the row with prefix `row`.
inline double dropout_uniform(std::uint64_t row, std::size_t key) {
  const std::uint64_t z = dropout_fmix(row + (static_cast<std::uint64_t>(key) + 1) * kDropoutGamma);
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Whether the cell survives dropout with probability p (0 <= p < 1). p = 0 keeps all.
inline bool dropout_keep_row(std::uint64_t row, std::size_t key, double p) {
  return p <= 0 || dropout_uniform(row, key) >= p;
}

inline bool dropout_keep(std::uint64_t seed, std::size_t head, std::size_t query, std::size_t key,
                         double p) {
  return p <= 0 || dropout_keep_row(dropout_row(seed, head, query), key, p);
}

}  // namespace attn
