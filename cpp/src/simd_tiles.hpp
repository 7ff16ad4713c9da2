// The SIMD128 kernels' shared tile machinery (internal header): the transposed query tile, the
// register-blocked score and P.V micro-kernels, each query tile's key ranges and per-group limits,
// dropout on a key-major tile, and the input scan that decides eligibility. simd_kernels.cpp (the
// forward) and simd_backward.cpp (the backward) are built on it; simd_kernels.hpp says how.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/dropout.hpp"
#include "attn/mask.hpp"
#include "attn/tile_sizes.hpp"
#include "simd_ops.hpp"

#ifdef ATTN_HAVE_SIMD

namespace attn::detail::simd {

inline constexpr std::size_t kW = 64;  // query rows per tile = Qt / St row stride
static_assert(kTileQ == kW && kTileK == kW, "the SIMD kernels assume 64 x 64 tiles");

// Qt[c][r] = scale * q[r * ldq + c] for the rows of one query tile (ldq: q's row stride,
// d_k unless given); rows from `rows` to the next multiple of 16 are 0 (rows past those are
// never read). 4 x 4 blocks through registers (a scalar loop cost too much at small T:
// docs/performance.md). Also turns row-major weights into a key-major tile (scale 1, exact).
inline void transpose_q(const float* q, std::size_t rows, std::size_t dk, float scale, float* qt,
                        std::size_t ldq = 0) {
  if (ldq == 0) ldq = dk;
  // Only the rows up to the next multiple of 16 are read (score_tile's row groups, the
  // vertical passes' quads); zeroing all 64 took a memset call per column, a few thousand per
  // T = 32 backward call.
  const std::size_t zero_end = std::min(kW, (rows + 15) / 16 * 16);
  for (std::size_t c = 0; c < dk; ++c) {
    for (std::size_t r = rows; r < zero_end; ++r) qt[c * kW + r] = 0.f;
  }
  const v128_t vs = splat(scale);
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float *q0 = q + r * ldq, *q1 = q0 + ldq, *q2 = q1 + ldq, *q3 = q2 + ldq;
    std::size_t c = 0;
    for (; c + 4 <= dk; c += 4) {
      const v128_t a = mul(ld(q0 + c), vs), b = mul(ld(q1 + c), vs), x = mul(ld(q2 + c), vs),
                   y = mul(ld(q3 + c), vs);
      const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5);  // a0 b0 a1 b1
      const v128_t xy_lo = wasm_i32x4_shuffle(x, y, 0, 4, 1, 5);  // x0 y0 x1 y1
      const v128_t ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);  // a2 b2 a3 b3
      const v128_t xy_hi = wasm_i32x4_shuffle(x, y, 2, 6, 3, 7);
      float* d = qt + c * kW + r;
      st(d, wasm_i32x4_shuffle(ab_lo, xy_lo, 0, 1, 4, 5));
      st(d + kW, wasm_i32x4_shuffle(ab_lo, xy_lo, 2, 3, 6, 7));
      st(d + 2 * kW, wasm_i32x4_shuffle(ab_hi, xy_hi, 0, 1, 4, 5));
      st(d + 3 * kW, wasm_i32x4_shuffle(ab_hi, xy_hi, 2, 3, 6, 7));
    }
    for (; c < dk; ++c) {
      for (std::size_t x = 0; x < 4; ++x) qt[c * kW + r + x] = scale * q[(r + x) * ldq + c];
    }
  }
  for (; r < rows; ++r) {
    for (std::size_t c = 0; c < dk; ++c) qt[c * kW + r] = scale * q[r * ldq + c];
  }
}

// St[jj][r] = sum_c Qt[c][r] * K[jj][c] for query rows r < 16 * groups and keys
// jj < min(J, jmax[g]) of row group g (keys past them are masked for every row of the
// group; their St entries are left as they were). DK: d_k when known at compile time
// (then the second key row is a constant offset from the first: one pointer less to
// step), 0 for any d_k.
template <std::size_t DK>
inline void score_tile_impl(const float* qt, std::size_t dk, const float* kt, std::size_t J,
                            std::size_t groups, const std::size_t* jmax, float* sc) {
  for (std::size_t g = 0; g < groups; ++g) {
    const float* qg = qt + 16 * g;
    const std::size_t Jg = std::min(J, jmax[g]);
    std::size_t jj = 0;
    for (; jj + 2 <= Jg; jj += 2) {
      const float* k0 = kt + jj * dk;
      const float* k1 = k0 + dk;
      v128_t a0 = splat(0.f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
      const float *qc = qg, *x0 = k0, *x1 = k1;
      // Pointers stepped, not unrolled: LLVM would hoist later loads and V8 spill them.
      ATTN_NO_UNROLL
      for (; x0 != k1; ++x0, ++x1, qc += kW) {
        const v128_t q0 = ld(qc), q1 = ld(qc + 4), q2 = ld(qc + 8), q3 = ld(qc + 12);
        const v128_t x = bcast(x0), y = DK ? bcast(x0 + DK) : bcast(x1);
        a0 = madd(q0, x, a0);
        a1 = madd(q1, x, a1);
        a2 = madd(q2, x, a2);
        a3 = madd(q3, x, a3);
        b0 = madd(q0, y, b0);
        b1 = madd(q1, y, b1);
        b2 = madd(q2, y, b2);
        b3 = madd(q3, y, b3);
      }
      float* s0 = sc + jj * kW + 16 * g;
      float* s1 = s0 + kW;
      st(s0, a0), st(s0 + 4, a1), st(s0 + 8, a2), st(s0 + 12, a3);
      st(s1, b0), st(s1 + 4, b1), st(s1 + 8, b2), st(s1 + 12, b3);
    }
    if (jj < Jg) {
      const float* k0 = kt + jj * dk;
      v128_t a0 = splat(0.f), a1 = a0, a2 = a0, a3 = a0;
      for (std::size_t c = 0; c < dk; ++c) {
        const float* qc = qg + c * kW;
        const v128_t x = bcast(k0 + c);
        a0 = add(a0, mul(ld(qc), x));
        a1 = add(a1, mul(ld(qc + 4), x));
        a2 = add(a2, mul(ld(qc + 8), x));
        a3 = add(a3, mul(ld(qc + 12), x));
      }
      float* s0 = sc + jj * kW + 16 * g;
      st(s0, a0), st(s0 + 4, a1), st(s0 + 8, a2), st(s0 + 12, a3);
    }
  }
}

// Every SIMD kernel calls it (inline: one copy after linking): a function with a single caller
// would be inlined by binaryen
// whatever clang was told, and in the kernels' large bodies V8 then spills the
// accumulators.
inline __attribute__((noinline)) void score_tile(const float* qt, std::size_t dk, const float* kt,
                                                 std::size_t J, std::size_t groups,
                                                 const std::size_t* jmax, float* sc) {
  if (dk == 64) {
    // Hide dk == 64 from LLVM: with a known trip count it steps a counter and rebuilds the
    // K address from it each step (three operations instead of one pointer increment).
    __asm__("" : "+r"(dk));
    score_tile_impl<64>(qt, dk, kt, J, groups, jmax, sc);
  } else {
    score_tile_impl<0>(qt, dk, kt, J, groups, jmax, sc);
  }
}

// Per row group of a query tile: keys past the last one any of its rows may see, relative
// to the key tile at j0 (kAll: no limit).
inline constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
struct GroupLimits {
  std::size_t j[kW / 16];
};

// One step of the 2-row x 16-column block: a += x * v[0..16), b += y * v[0..16).
#define ATTN_PV_STEP(pa, pb, vj)                                                        \
  do {                                                                                  \
    const v128_t x = bcast(pa), y = bcast(pb);                                          \
    const v128_t v0 = ld(vj), v1 = ld((vj) + 4), v2 = ld((vj) + 8), v3 = ld((vj) + 12); \
    a0 = madd(x, v0, a0);                                                               \
    a1 = madd(x, v1, a1);                                                               \
    a2 = madd(x, v2, a2);                                                               \
    a3 = madd(x, v3, a3);                                                               \
    b0 = madd(y, v0, b0);                                                               \
    b1 = madd(y, v1, b1);                                                               \
    b2 = madd(y, v2, b2);                                                               \
    b3 = madd(y, v3, b3);                                                               \
  } while (0)

// y0 (and y1 if non-null) = alpha0 * y0 + sum_{j < n} p0[j * PS] * v[j] (same for row 1;
// FRESH: y0 = sum ..., y's old contents never read, the same bits as from zeros):
// a 2-row x 16-column block of accumulators over d_v (keys unrolled by 2, pointers
// stepped so V8 needs no index arithmetic), then 4-wide and scalar tails.
// p0[j * PS]: the weight of key j for row 0 (PS = 1 row-major weights, 64 key-major).
// Key-major (PS = 64) weights must have p1 = p0 + 1 for two rows; with one row the main
// loop still reads p0[j * PS + 1] (inside the score tile) into the unused accumulators.
// DV: d_v when known at compile time (the V pointer then steps by a constant), else 0.
template <std::size_t PS, std::size_t DV, bool FRESH = false>
inline void accumulate_pv_impl(const float* p0, const float* p1, const float* v, std::size_t n,
                               std::size_t dv, float alpha0, float alpha1, float* y0, float* y1) {
  if (DV) dv = DV;
  const bool two = y1 != nullptr;
  if (!two) p1 = p0, y1 = y0, alpha1 = alpha0;  // duplicate work, stored once
  std::size_t c = 0;
  // Once the running maxima settle, alpha is exactly 1 for most tiles: skip the rescale
  // (y * 1 = y, so the result is the same bits).
  const bool rescale = alpha0 != 1.f || alpha1 != 1.f;
  ATTN_NO_UNROLL
  for (; c + 16 <= dv; c += 16) {
    v128_t a0, a1, a2, a3, b0, b1, b2, b3;
    if constexpr (FRESH) {
      a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = splat(0.f);
    } else {
      a0 = ld(y0 + c), a1 = ld(y0 + c + 4), a2 = ld(y0 + c + 8), a3 = ld(y0 + c + 12);
      b0 = ld(y1 + c), b1 = ld(y1 + c + 4), b2 = ld(y1 + c + 8), b3 = ld(y1 + c + 12);
    }
    if (rescale && !FRESH) {
      const v128_t s0 = splat(alpha0), s1 = splat(alpha1);
      a0 = mul(a0, s0), a1 = mul(a1, s0), a2 = mul(a2, s0), a3 = mul(a3, s0);
      b0 = mul(b0, s1), b1 = mul(b1, s1), b2 = mul(b2, s1), b3 = mul(b3, s1);
    }
    const float *pa = p0, *pb = p1, *vj = v + c;
    const float* const pend = p0 + n * PS;
    // Not unrolled: LLVM would hoist the loads of later steps, which V8 then spills.
    if (PS == kW) {  // key-major: row 1's weight is next to row 0's (see accumulate_pv)
      ATTN_NO_UNROLL
      for (; pa != pend; pa += PS, vj += dv) ATTN_PV_STEP(pa, pa + 1, vj);
    } else {
      ATTN_NO_UNROLL
      for (; pa != pend; pa += PS, pb += PS, vj += dv) ATTN_PV_STEP(pa, pb, vj);
    }
    if (two) st(y1 + c, b0), st(y1 + c + 4, b1), st(y1 + c + 8, b2), st(y1 + c + 12, b3);
    st(y0 + c, a0), st(y0 + c + 4, a1), st(y0 + c + 8, a2), st(y0 + c + 12, a3);
  }
  for (; c + 4 <= dv; c += 4) {
    v128_t a = splat(0.f), b = a;
    if (!FRESH) a = mul(ld(y0 + c), splat(alpha0)), b = mul(ld(y1 + c), splat(alpha1));
    for (std::size_t j = 0; j < n; ++j) {
      const v128_t vj = ld(v + j * dv + c);
      a = add(a, mul(bcast(p0 + j * PS), vj));
      b = add(b, mul(bcast(p1 + j * PS), vj));
    }
    if (two) st(y1 + c, b);
    st(y0 + c, a);
  }
  for (; c < dv; ++c) {
    float a = FRESH ? 0.f : y0[c] * alpha0, b = FRESH ? 0.f : y1[c] * alpha1;
    for (std::size_t j = 0; j < n; ++j) {
      a += p0[j * PS] * v[j * dv + c];
      b += p1[j * PS] * v[j * dv + c];
    }
    if (two) y1[c] = b;
    y0[c] = a;
  }
}
#undef ATTN_PV_STEP

// Every SIMD kernel calls this one function (inline: one copy after linking): a function with a
// single caller would be inlined
// by binaryen whatever clang was told, and in the kernels' large bodies V8 then spills
// the accumulators.
inline __attribute__((noinline)) void accumulate_pv(const float* p0, const float* p1,
                                                    std::size_t ps, const float* v, std::size_t n,
                                                    std::size_t dv, float alpha0, float alpha1,
                                                    float* y0, float* y1, bool fresh = false) {
  if (ps == 1) {  // (no caller of the row-major form starts fresh)
    if (dv == 64) {
      accumulate_pv_impl<1, 64>(p0, p1, v, n, dv, alpha0, alpha1, y0, y1);
    } else {
      accumulate_pv_impl<1, 0>(p0, p1, v, n, dv, alpha0, alpha1, y0, y1);
    }
  } else if (fresh) {  // its own instantiation: the accumulating loops' code stays as it was
    accumulate_pv_impl<kW, 0, true>(p0, p1, v, n, dv, alpha0, alpha1, y0, y1);
  } else if (dv == 64) {
    accumulate_pv_impl<kW, 64>(p0, p1, v, n, dv, alpha0, alpha1, y0, y1);
  } else {
    accumulate_pv_impl<kW, 0>(p0, p1, v, n, dv, alpha0, alpha1, y0, y1);
  }
}

struct TileRows {
  std::size_t lo[kW], hi[kW];  // key_range of each row
  std::size_t lo_min, hi_max;  // union of the ranges (lo_min >= hi_max: nothing)
  std::size_t lo_max, hi_min;  // intersection: keys every row may see
};

inline TileRows tile_rows(const MaskSpec& m, std::size_t i0, std::size_t rows, std::size_t tq,
                          std::size_t tk) {
  TileRows t;
  t.lo_min = tk, t.hi_max = 0, t.lo_max = 0, t.hi_min = tk;
  for (std::size_t r = 0; r < rows; ++r) {
    const KeyRange kr = key_range(m, i0 + r, tq, tk);
    t.lo[r] = kr.lo, t.hi[r] = kr.hi;
    t.lo_max = std::max(t.lo_max, kr.lo);
    t.hi_min = std::min(t.hi_min, kr.hi);
    if (kr.lo < kr.hi) t.lo_min = std::min(t.lo_min, kr.lo), t.hi_max = std::max(t.hi_max, kr.hi);
  }
  return t;
}

inline GroupLimits no_limits() {
  GroupLimits g;
  std::fill(g.j, g.j + kW / 16, kAll);
  return g;
}

// For the key tile at j0: per row group, the keys before the end of the group's ranges.
inline const std::size_t* group_limits(const TileRows& t, std::size_t rows, std::size_t j0,
                                       GroupLimits* g) {
  for (std::size_t x = 0; x < kW / 16; ++x) {
    std::size_t hi = 0;
    for (std::size_t r = 16 * x; r < std::min(rows, 16 * x + 16); ++r) {
      if (t.lo[r] < t.hi[r]) hi = std::max(hi, t.hi[r]);
    }
    g->j[x] = hi > j0 ? hi - j0 : 0;
  }
  return g->j;
}

// Inverted dropout on a key-major tile (J keys x `rows` rows, stride kW), in place:
// x[jj][r] *= keep(r, j0 + jj) / (1 - p), the keep decision of attn/dropout.hpp from each
// row's prefix drow[r]. Scalar per cell: the hash is 64-bit integer work.
inline void dropout_tile(float* x, std::size_t J, std::size_t rows, std::size_t j0,
                         const std::uint64_t* drow, double p, float keep_scale) {
  for (std::size_t jj = 0; jj < J; ++jj) {
    float* xr = x + jj * kW;
    for (std::size_t r = 0; r < rows; ++r) {
      xr[r] = dropout_keep_row(drow[r], j0 + jj, p) ? xr[r] * keep_scale : 0.f;
    }
  }
}

inline bool has_pointwise(const MaskSpec& m) {
  return m.key_padding || m.mask;
}

// max |p[i]| into *out; false if a value is NaN or infinite. On the bits: for x >= 0 the
// float order is the unsigned integer order, and |x| >= 0x7f800000 exactly for Inf and NaN,
// so one and + one unsigned max per vector cover both (four chains: the scan runs over every
// input before each call; docs/performance.md).
inline bool finite_max_abs(const float* p, std::size_t n, float* out) {
  const v128_t magnitude = wasm_i32x4_splat(0x7fffffff);
  v128_t m0 = wasm_i32x4_splat(0), m1 = m0, m2 = m0, m3 = m0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = wasm_u32x4_max(m0, wasm_v128_and(ld(p + i), magnitude));
    m1 = wasm_u32x4_max(m1, wasm_v128_and(ld(p + i + 4), magnitude));
    m2 = wasm_u32x4_max(m2, wasm_v128_and(ld(p + i + 8), magnitude));
    m3 = wasm_u32x4_max(m3, wasm_v128_and(ld(p + i + 12), magnitude));
  }
  for (; i + 4 <= n; i += 4) m0 = wasm_u32x4_max(m0, wasm_v128_and(ld(p + i), magnitude));
  const v128_t m = wasm_u32x4_max(wasm_u32x4_max(m0, m1), wasm_u32x4_max(m2, m3));
  std::uint32_t bits =
      std::max(std::max(wasm_u32x4_extract_lane(m, 0), wasm_u32x4_extract_lane(m, 1)),
               std::max(wasm_u32x4_extract_lane(m, 2), wasm_u32x4_extract_lane(m, 3)));
  for (; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, p + i, 4);
    bits = std::max(bits, b & 0x7fffffffu);
  }
  std::memcpy(out, &bits, 4);
  return bits < 0x7f800000u;
}

}  // namespace attn::detail::simd

#endif  // ATTN_HAVE_SIMD
