#include "simd_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attn/aligned.hpp"
#include "attn/tile_sizes.hpp"
#include "kernels.hpp"

#if defined(__wasm_simd128__) && !defined(ATTN_SCALAR)
#include <wasm_simd128.h>
#define ATTN_HAVE_SIMD 1
#endif

namespace attn::detail {

#ifndef ATTN_HAVE_SIMD

bool tiled_backward_simd(const float*, const float*, const float*, const float*,
                         const AttentionOptions&, float, const AttentionResult<float>&,
                         AttentionGrads<float>*, bool) {
  return false;
}

bool simd_eligible(const float*, const float*, const float*, const AttentionOptions&, float) {
  return false;
}
bool naive_kernel_simd(const float*, const float*, const float*, const AttentionOptions&, float,
                       AttentionResult<float>*) {
  return false;
}
bool tiled_kernel_simd(const float*, const float*, const float*, const AttentionOptions&, float,
                       AttentionResult<float>*) {
  return false;
}
void exp_f32(const float* x, float* y, std::size_t n, bool) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void exp2_f32(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] <= -127.f ? 0.f : std::exp2(x[i]);
}

#else

namespace {

constexpr std::size_t kW = 64;  // query rows per tile = Qt / St row stride
// Keys per tile of the tiled kernel: 64, so each P.V call runs 64 key steps per load and
// store of its accumulators (32 gave ~2.5 % less at T = 2048: per-call overhead outweighed
// keeping the score and V tiles, 8 KB each then, in L1 beside Qt).
constexpr std::size_t kKT = kTileKSimd;  // attn/tile_sizes.hpp
static_assert(kKT <= kW && kW % kKT == 0, "a key tile fits the score buffer");
static_assert(kTileQ == kW && kTileK == kW, "the SIMD kernels assume 64 x 64 tiles");

inline v128_t splat(float x) {
  return wasm_f32x4_splat(x);
}
inline v128_t add(v128_t a, v128_t b) {
  return wasm_f32x4_add(a, b);
}
inline v128_t sub(v128_t a, v128_t b) {
  return wasm_f32x4_sub(a, b);
}
inline v128_t mul(v128_t a, v128_t b) {
  return wasm_f32x4_mul(a, b);
}
// a * b + c for the forward micro-kernels' accumulations. SIMD128: a multiply and
// an add, bit-identical to add(c, mul(a, b)). ATTN_RELAXED_SIMD (the attn_core_relaxed build
// only, never training): one fused relaxed_madd. LLVM 14 knows it only under the proposal's
// prototype opcode; cpp/tools/patch_relaxed.mjs rewrites that after linking, and the
// operands here are already in relaxed_madd's stack order (a, b, c).
#ifdef ATTN_RELAXED_SIMD
inline v128_t madd(v128_t a, v128_t b, v128_t c) {
  return (v128_t)__builtin_wasm_fma_f32x4((__f32x4)a, (__f32x4)b, (__f32x4)c);
}
#else
inline v128_t madd(v128_t a, v128_t b, v128_t c) {
  return add(mul(a, b), c);
}
#endif
// pmax/pmin are single x86 instructions; the kernels never see NaN (simd_eligible).
inline v128_t vmax(v128_t a, v128_t b) {
  return wasm_f32x4_pmax(a, b);
}
inline v128_t ld(const float* p) {
  return wasm_v128_load(p);
}
inline void st(float* p, v128_t v) {
  wasm_v128_store(p, v);
}
inline v128_t bcast(const float* p) {
  return wasm_v128_load32_splat(p);
}
inline float hmax(v128_t v) {
  return std::max(std::max(wasm_f32x4_extract_lane(v, 0), wasm_f32x4_extract_lane(v, 1)),
                  std::max(wasm_f32x4_extract_lane(v, 2), wasm_f32x4_extract_lane(v, 3)));
}
inline float hsum(v128_t v) {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

// exp(x) on four lanes (Cephes expf): x = n ln2 + r with |r| <= ln2/2, a degree-6
// polynomial for e^r (about 1 ulp), and 2^n built in the exponent bits.
// Anything below ln(FLT_MIN), -inf included, gives exactly 0 (denormal results are
// flushed). With kFull, also: above ln(FLT_MAX) +inf, n = 128 handled, NaN stays NaN;
// the kernels only pass arguments <= 0 and use the short form.
template <bool kFull>
inline v128_t vexp_impl(v128_t x) {
  const v128_t lo = splat(-87.3365447504f), hi = splat(88.7228394f);
  v128_t xc = vmax(x, lo);
  if (kFull) xc = wasm_f32x4_pmin(xc, hi);  // NaN passes through both
  v128_t n = wasm_f32x4_nearest(mul(xc, splat(1.44269504088896341f)));
  v128_t r = sub(xc, mul(n, splat(0.693359375f)));  // exact: few bits in each factor
  r = sub(r, mul(n, splat(-2.12194440e-4f)));
  v128_t p = splat(1.9875691500e-4f);
  p = add(mul(p, r), splat(1.3981999507e-3f));
  p = add(mul(p, r), splat(8.3334519073e-3f));
  p = add(mul(p, r), splat(4.1665795894e-2f));
  p = add(mul(p, r), splat(1.6666665459e-1f));
  p = add(mul(p, r), splat(5.0000001201e-1f));
  v128_t y = add(add(mul(p, mul(r, r)), r), splat(1.f));
  v128_t big = wasm_i32x4_splat(0);
  if (kFull) {  // 2^128 is not a float: use 2 * 2^127
    big = wasm_f32x4_gt(n, splat(127.f));
    n = sub(n, wasm_v128_and(big, splat(1.f)));
  }
  const v128_t two_n =
      wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
  y = mul(y, two_n);
  y = wasm_v128_bitselect(wasm_f32x4_splat(0.f), y, wasm_f32x4_lt(x, lo));
  if (kFull) {
    y = mul(y, wasm_v128_bitselect(splat(2.f), splat(1.f), big));
    y = wasm_v128_bitselect(splat(std::numeric_limits<float>::infinity()), y, wasm_f32x4_gt(x, hi));
    y = wasm_v128_bitselect(x, y, wasm_f32x4_ne(x, x));
  }
  return y;
}
// 2^x on four lanes for x in [kMinExp2Arg, 0] (callers clamp; -inf must be clamped
// first): n = nearest(x) by the 1.5 * 2^23 trick (the low bits of x + magic hold n),
// r = x - n in [-0.5, 0.5] exactly, a degree-5 polynomial for 2^r (relative error
// about 2e-7, exactly 1 at r = 0), and 2^n built in the exponent bits. At x = -127,
// n = -127 gives exponent bits 0, so the result is exactly 0 with no select.
constexpr float kMinExp2Arg = -127.f;
inline v128_t vexp2_clamped(v128_t x) {
  const v128_t magic = splat(12582912.f);  // 1.5 * 2^23
  const v128_t t = add(x, magic);
  const v128_t r = sub(x, sub(t, magic));
  v128_t p = splat(1.326463767e-03f);
  // madd: a multiply and an add in SIMD128 (the same bits as before), one fused relaxed_madd
  // in the relaxed build, which moves 5 of the softmax's 12 add-pipe operations per quad
  // and key onto the multiply pipes (there the softmax was bound by its adds).
  p = madd(p, r, splat(9.671482258e-03f));
  p = madd(p, r, splat(5.550733581e-02f));
  p = madd(p, r, splat(2.402224243e-01f));
  p = madd(p, r, splat(6.931470037e-01f));
  p = madd(p, r, splat(1.f));
  // bits(t) = bits(magic) + n and bits(magic) << 23 == 0: (n + 127) << 23 = 2^n.
  const v128_t two_n = wasm_i32x4_add(wasm_i32x4_shl(t, 23), wasm_i32x4_splat(127 << 23));
  return mul(p, two_n);
}
inline v128_t vexp2(v128_t x) {  // any x <= 0, -inf included
  return vexp2_clamped(vmax(x, splat(kMinExp2Arg)));
}

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2 = 0.693147180559945309f;

// Qt[c][r] = scale * q[r * ldq + c] for the rows of one query tile (ldq: q's row stride,
// d_k unless given); rows from `rows` to the next multiple of 16 are 0 (rows past those are
// never read). 4 x 4 blocks through registers (at T = 64 the scalar loop was a tenth of the
// call). Also turns row-major weights into a key-major tile (scale 1, exact).
void transpose_q(const float* q, std::size_t rows, std::size_t dk, float scale, float* qt,
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
void score_tile_impl(const float* qt, std::size_t dk, const float* kt, std::size_t J,
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
#pragma clang loop unroll(disable)
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

// Both kernels call it: a function with a single caller would be inlined by binaryen
// whatever clang was told, and in the kernels' large bodies V8 then spills the
// accumulators.
__attribute__((noinline)) void score_tile(const float* qt, std::size_t dk, const float* kt,
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
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
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
void accumulate_pv_impl(const float* p0, const float* p1, const float* v, std::size_t n,
                        std::size_t dv, float alpha0, float alpha1, float* y0, float* y1) {
  if (DV) dv = DV;
  const bool two = y1 != nullptr;
  if (!two) p1 = p0, y1 = y0, alpha1 = alpha0;  // duplicate work, stored once
  std::size_t c = 0;
  // Once the running maxima settle, alpha is exactly 1 for most tiles: skip the rescale
  // (y * 1 = y, so the result is the same bits).
  const bool rescale = alpha0 != 1.f || alpha1 != 1.f;
#pragma clang loop unroll(disable)
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
#pragma clang loop unroll(disable)
      for (; pa != pend; pa += PS, vj += dv) ATTN_PV_STEP(pa, pa + 1, vj);
    } else {
#pragma clang loop unroll(disable)
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

// Both kernels call this one function: a function with a single caller would be inlined
// by binaryen whatever clang was told, and in the kernels' large bodies V8 then spills
// the accumulators.
__attribute__((noinline)) void accumulate_pv(const float* p0, const float* p1, std::size_t ps,
                                             const float* v, std::size_t n, std::size_t dv,
                                             float alpha0, float alpha1, float* y0, float* y1,
                                             bool fresh = false) {
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

// The tiled kernel's online softmax over one key-major score tile (J keys x 4 * quads
// rows, stride kW), four rows per vector, in base-2 units (log2 e is folded into Qt):
// new maximum, rescale factor alpha = 2^(m_old - m_new) for what was summed so far,
// then e = 2^(s - m) in place, l += sum e, t += sum e (s - m).
// jq[x]: keys of the tile quad x may see (its rows' ranges end there; keys past it are -inf
// for all four rows and are left as they are). jq[x] = 0: nothing new, alpha 1.
// Cost (profiled, T = 2048 non-causal): about 10 cycles per quad and key, 12 % of the
// kernel; 12 of its ~21 vector operations per quad and key are adds, subtracts or maxima.
// Neither two keys per step nor walking key rows across the quads (independent chains)
// ran faster, so the pass is bound by its operations, not by its dependency chains.
void online_softmax_impl(float* sc, const std::size_t* jq, std::size_t quads, float* m, float* l,
                         float* t, float* alpha) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const v128_t dmin = splat(kMinExp2Arg);
  for (std::size_t x = 0; x < quads; ++x) {
    if (jq[x] == 0) {
      st(alpha + 4 * x, splat(1.f));
      continue;
    }
    float* const col = sc + 4 * x;
    float* const end = col + jq[x] * kW;
    float* const end4 = col + (jq[x] & ~std::size_t(3)) * kW;
    // The maximum in four independent chains (one chain: a max every 2-3 cycles per key).
    v128_t mx0 = splat(ninf), mx1 = mx0, mx2 = mx0, mx3 = mx0;
    float* p = col;
#pragma clang loop unroll(disable)
    for (; p != end4; p += 4 * kW) {
      mx0 = vmax(mx0, ld(p));
      mx1 = vmax(mx1, ld(p + kW));
      mx2 = vmax(mx2, ld(p + 2 * kW));
      mx3 = vmax(mx3, ld(p + 3 * kW));
    }
    for (; p != end; p += kW) mx0 = vmax(mx0, ld(p));
    const v128_t mx = vmax(vmax(mx0, mx1), vmax(mx2, mx3));
    const v128_t m_old = ld(m + 4 * x), l_old = ld(l + 4 * x), t_old = ld(t + 4 * x);
    const v128_t m_new = vmax(m_old, mx);
    const v128_t seen = wasm_f32x4_gt(l_old, splat(0.f));  // then m_old is finite
    const v128_t diff = wasm_v128_bitselect(sub(m_old, m_new), splat(0.f), seen);
    const v128_t a = vexp2(diff);  // exactly 1 where the maximum did not move
    const v128_t tn = mul(a, add(t_old, mul(l_old, diff)));
    const v128_t ln = mul(l_old, a);
    const v128_t m_safe = wasm_v128_bitselect(splat(0.f), m_new, wasm_f32x4_eq(m_new, splat(ninf)));
    st(m + 4 * x, m_new);
    st(alpha + 4 * x, a);
    v128_t ls = splat(0.f), ts = ls;
#pragma clang loop unroll(disable)
    for (p = col; p != end; p += kW) {
      const v128_t d = vmax(sub(ld(p), m_safe), dmin), e = vexp2_clamped(d);
      st(p, e);
      ls = add(ls, e);
      ts = add(ts, mul(e, d));
    }
    st(l + 4 * x, add(ln, ls));
    st(t + 4 * x, add(tn, ts));
  }
}
// Called through a pointer: binaryen inlines a function with a single caller whatever
// clang was told, and inside the kernel's large body V8 spills the exp2 constants.
void (*volatile online_softmax)(float*, const std::size_t*, std::size_t, float*, float*, float*,
                                float*) = online_softmax_impl;

// The naive kernel's softmax of one row's n allowed scores w[0..n) (-inf where a
// pointwise mask forbids), in place: m = max, e = 2^d with d = u (s - m) in base-2 units
// (u = log2 e for natural-unit scores, 1 when log2 e is folded into Q), l = sum e,
// t = sum e d; then w = e / l.
void softmax_row_impl(float* w, std::size_t n, float u, float* m_out, float* l_out, float* t_out) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float* const end4 = w + (n & ~std::size_t(3));
  v128_t vm0 = splat(ninf), vm1 = vm0;
  float* p = w;
  for (; p + 8 <= end4; p += 8) vm0 = vmax(vm0, ld(p)), vm1 = vmax(vm1, ld(p + 4));
  if (p != end4) vm0 = vmax(vm0, ld(p));
  float m = hmax(vmax(vm0, vm1));
  for (p = end4; p != w + n; ++p) m = std::max(m, *p);
  const v128_t mv = splat(m), uv = splat(u), dmin = splat(kMinExp2Arg);
  v128_t vl = splat(0.f), vt = vl;
  for (p = w; p != end4; p += 4) {
    const v128_t d = vmax(mul(sub(ld(p), mv), uv), dmin), e = vexp2_clamped(d);
    st(p, e);
    vl = add(vl, e);
    vt = add(vt, mul(e, d));
  }
  if (end4 != w + n) {  // the last 1-3 keys through the same exp2, -inf padded
    alignas(16) float buf[4] = {ninf, ninf, ninf, ninf};
    std::copy(end4, w + n, buf);
    const v128_t d = vmax(mul(sub(ld(buf), mv), uv), dmin), e = vexp2_clamped(d);
    st(buf, e);
    std::copy(buf, buf + (w + n - end4), end4);
    vl = add(vl, e);
    vt = add(vt, mul(e, d));
  }
  const float l = hsum(vl);
  const v128_t vinv = splat(1.f / l);
  for (p = w; p != end4; p += 4) st(p, mul(ld(p), vinv));
  for (; p != w + n; ++p) *p *= 1.f / l;
  *m_out = m, *l_out = l, *t_out = hsum(vt);
}
// Through a pointer, as online_softmax.
void (*volatile softmax_row)(float*, std::size_t, float, float*, float*, float*) = softmax_row_impl;

// Copies the key-major score tile into row-major rows: dst[r * ld + jj] = sc[jj][r].
void store_transposed(const float* sc, std::size_t rows, std::size_t J, float* dst,
                      std::size_t ldd) {
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    std::size_t jj = 0;
    for (; jj + 4 <= J; jj += 4) {
      const v128_t c0 = ld(sc + jj * kW + r), c1 = ld(sc + (jj + 1) * kW + r),
                   c2 = ld(sc + (jj + 2) * kW + r), c3 = ld(sc + (jj + 3) * kW + r);
      const v128_t t0 = wasm_i32x4_shuffle(c0, c1, 0, 4, 1, 5);  // r0j0 r0j1 r1j0 r1j1
      const v128_t t1 = wasm_i32x4_shuffle(c2, c3, 0, 4, 1, 5);  // r0j2 r0j3 r1j2 r1j3
      const v128_t t2 = wasm_i32x4_shuffle(c0, c1, 2, 6, 3, 7);  // r2j0 r2j1 r3j0 r3j1
      const v128_t t3 = wasm_i32x4_shuffle(c2, c3, 2, 6, 3, 7);
      st(dst + r * ldd + jj, wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5));
      st(dst + (r + 1) * ldd + jj, wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
      st(dst + (r + 2) * ldd + jj, wasm_i32x4_shuffle(t2, t3, 0, 1, 4, 5));
      st(dst + (r + 3) * ldd + jj, wasm_i32x4_shuffle(t2, t3, 2, 3, 6, 7));
    }
    for (; jj < J; ++jj) {
      for (std::size_t x = 0; x < 4; ++x) dst[(r + x) * ldd + jj] = sc[jj * kW + r + x];
    }
  }
  for (; r < rows; ++r) {
    for (std::size_t jj = 0; jj < J; ++jj) dst[r * ldd + jj] = sc[jj * kW + r];
  }
}

// The naive kernel's softmax when one key tile holds every key and every row's keys start
// at 0 (no mask or causal, no padding, T_k <= 64: the training shapes), on the key-major
// score tile, four rows per vector: no per-row tails, horizontal sums, or a transposed copy
// of the raw scores. Same bits as softmax_row (scores in base 2, u = 1): there key j of a
// row goes to sum lane j mod 4 and hsum adds the lanes as (0 + 1) + (2 + 3); here it goes to
// accumulator j mod 4 and they are added in that order. Forbidden keys add exact zeros,
// which change no sum (the sums start at +0 and never become -0).
// hi[r]: the end of row r's keys (0 for the rows past the tile). Leaves the normalised
// weights in the tile for keys < J (0 where forbidden) and each row's m, l, t.
void softmax_quads_impl(float* sc, const std::int32_t* hi, std::size_t quads, std::size_t J,
                        float* m_out, float* l_out, float* t_out) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const v128_t dmin = splat(kMinExp2Arg), zero = splat(0.f);
  for (std::size_t x = 0; x < quads; ++x) {
    float* const col = sc + 4 * x;
    const v128_t hv = wasm_v128_load(hi + 4 * x);
    const std::size_t qhi = static_cast<std::size_t>(
        std::max(std::max(hi[4 * x], hi[4 * x + 1]), std::max(hi[4 * x + 2], hi[4 * x + 3])));
    // 1. Each row's maximum over its keys (rows past the tile: 0, so nothing is infinite).
    v128_t mx = splat(ninf);
#pragma clang loop unroll(disable)
    for (std::size_t jj = 0; jj < qhi; ++jj) {
      const v128_t ok = wasm_i32x4_gt(hv, wasm_i32x4_splat(static_cast<std::int32_t>(jj)));
      mx = vmax(mx, wasm_v128_bitselect(ld(col + jj * kW), splat(ninf), ok));
    }
    const v128_t m = wasm_v128_bitselect(mx, zero, wasm_i32x4_gt(hv, wasm_i32x4_splat(0)));
    // 2. e = 2^(s - m) in place (0 where forbidden), l and t in four accumulators each.
    v128_t l4[4] = {zero, zero, zero, zero}, t4[4] = {zero, zero, zero, zero};
#pragma clang loop unroll(disable)
    for (std::size_t jj = 0; jj < qhi; ++jj) {
      float* p = col + jj * kW;
      const v128_t ok = wasm_i32x4_gt(hv, wasm_i32x4_splat(static_cast<std::int32_t>(jj)));
      const v128_t d = vmax(sub(ld(p), m), dmin);
      const v128_t e = wasm_v128_and(vexp2_clamped(d), ok);
      st(p, e);
      l4[jj & 3] = add(l4[jj & 3], e);
      t4[jj & 3] = add(t4[jj & 3], mul(e, d));
    }
    const v128_t l = add(add(l4[0], l4[1]), add(l4[2], l4[3]));
    const v128_t t = add(add(t4[0], t4[1]), add(t4[2], t4[3]));
    // 3. Normalise (w = e * (1 / l), as softmax_row); keys past every row's range get 0.
    const v128_t inv = wasm_v128_and(wasm_f32x4_div(splat(1.f), l), wasm_f32x4_gt(l, zero));
#pragma clang loop unroll(disable)
    for (std::size_t jj = 0; jj < qhi; ++jj) st(col + jj * kW, mul(ld(col + jj * kW), inv));
    for (std::size_t jj = qhi; jj < J; ++jj) st(col + jj * kW, zero);
    st(m_out + 4 * x, m), st(l_out + 4 * x, l), st(t_out + 4 * x, t);
  }
}
// Through a pointer, as online_softmax.
void (*volatile softmax_quads)(float*, const std::int32_t*, std::size_t, std::size_t, float*,
                               float*, float*) = softmax_quads_impl;

struct TileRows {
  std::size_t lo[kW], hi[kW];  // key_range of each row
  std::size_t lo_min, hi_max;  // union of the ranges (lo_min >= hi_max: nothing)
  std::size_t lo_max, hi_min;  // intersection: keys every row may see
};

TileRows tile_rows(const MaskSpec& m, std::size_t i0, std::size_t rows, std::size_t tq,
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

// With dropout, the naive kernel's output rows: y_r += sum over row r's keys of the kept
// weights times 1/(1-p) times V_j, key by key (attn/dropout.hpp decides which); the stored
// weights stay the softmax's. done: rows to leave out (fully masked), or null.
void add_dropped_pv(const AttentionOptions& o, std::size_t h, std::size_t i0, std::size_t rows,
                    const TileRows& tr, const bool* done, const float* w0, const float* vg,
                    float* y0) {
  const Shape& s = o.shape;
  const float keep_scale = static_cast<float>(1 / (1 - o.dropout));
  for (std::size_t r = 0; r < rows; ++r) {
    if (done && done[r]) continue;
    const std::uint64_t drow = dropout_row(o.dropout_seed, h, i0 + r);
    const float* w = w0 + r * s.tk;
    for (std::size_t j = tr.lo[r]; j < tr.hi[r]; ++j) {
      if (w[j] != 0.f && dropout_keep_row(drow, j, o.dropout)) {
        axpy(w[j] * keep_scale, vg + j * s.dv, y0 + r * s.dv, s.dv);
      }
    }
  }
}

GroupLimits no_limits() {
  GroupLimits g;
  std::fill(g.j, g.j + kW / 16, kAll);
  return g;
}

// For the key tile at j0: per row group, the keys before the end of the group's ranges.
const std::size_t* group_limits(const TileRows& t, std::size_t rows, std::size_t j0,
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
void dropout_tile(float* x, std::size_t J, std::size_t rows, std::size_t j0,
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

// first[jj]: the first row of a query tile whose key range [lo, hi) holds key j0 + jj, or
// `rows` if none. The rows before it have P = 0 (so dS = 0) there, and the products over
// rows (dV, dK) start at it: adding those exact zeros first changed no sum (it starts at +0
// and never becomes -0), so skipping them keeps the bits while a causal tile does half the
// work. Found in one sweep when the ranges' ends never decrease down the tile (causal,
// window, no mask; fully masked rows have [0, 0)); otherwise 0 (no rows skipped).
void first_row(const std::int32_t* lo, const std::int32_t* hi, std::size_t rows, bool monotone,
               std::size_t j0, std::size_t J, std::size_t* first) {
  if (!monotone) {
    std::fill(first, first + J, std::size_t{0});
    return;
  }
  std::size_t r = 0;
  for (std::size_t jj = 0; jj < J; ++jj) {
    const auto j = static_cast<std::int32_t>(j0 + jj);
    while (r < rows && hi[r] <= j) ++r;
    first[jj] = r < rows && lo[r] <= j ? r : rows;
  }
}

}  // namespace

void exp2_f32(const float* x, float* y, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) st(y + i, vexp2(ld(x + i)));
  if (i < n) {
    float buf[4] = {0, 0, 0, 0};
    std::copy(x + i, x + n, buf);
    st(buf, vexp2(ld(buf)));
    std::copy(buf, buf + (n - i), y + i);
  }
}

void exp_f32(const float* x, float* y, std::size_t n, bool nonpositive) {
  std::size_t i = 0;
  auto f = [nonpositive](v128_t v) {
    return nonpositive ? vexp_impl<false>(v) : vexp_impl<true>(v);
  };
  for (; i + 4 <= n; i += 4) st(y + i, f(ld(x + i)));
  if (i < n) {
    float buf[4] = {0, 0, 0, 0};
    std::copy(x + i, x + n, buf);
    st(buf, f(ld(buf)));
    std::copy(buf, buf + (n - i), y + i);
  }
}

namespace {
// max |p[i]| into *out; false if a value is NaN or infinite. On the bits: for x >= 0 the
// float order is the unsigned integer order, and |x| >= 0x7f800000 exactly for Inf and NaN,
// so one and + one unsigned max per vector cover both (four chains: the scan runs over every
// input before each call, a tenth of a T = 64 call with one chain of float compares).
bool finite_max_abs(const float* p, std::size_t n, float* out) {
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
}  // namespace

bool simd_eligible(const float* q, const float* k, const float* v, const AttentionOptions& o,
                   float scale) {
  const Shape& s = o.shape;
  float mq, mk, mv;
  if (!finite_max_abs(q, s.heads * s.tq * s.dk, &mq) ||
      !finite_max_abs(k, s.kv_heads * s.tk * s.dk, &mk) ||
      !finite_max_abs(v, s.kv_heads * s.tk * s.dv, &mv)) {
    return false;
  }
  // Bounds on |score| (and the scaled Q) and on any weighted sum of values.
  const double limit = 1e30;
  return double(scale) * mq <= limit &&
         double(scale) * double(s.dk) * double(mq) * double(mk) <= limit &&
         double(s.tk) * double(mv) / (1 - o.dropout) <= limit;
}

bool naive_kernel_simd(const float* q, const float* k, const float* v, const AttentionOptions& o,
                       float scale, AttentionResult<float>* out) {
  if (!simd_eligible(q, k, v, o, scale)) return false;
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const bool pointwise = has_pointwise(o.mask);
  const float ninf = -std::numeric_limits<float>::infinity();
  AlignedFloats qt(s.dk * kW), sc(kW * kW);
  // Scores in base-2 units (log2 e folded into Q) so the softmax needs only exp2; kept
  // scores must be in natural units, and then the softmax converts (u = log2 e).
  const float qscale = o.return_scores ? scale : scale * kLog2e;
  const float u = o.return_scores ? kLog2e : 1.f;
  const float m_to_nat = o.return_scores ? 1.f : kLn2;
  out->diag = {};
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const float* kg = k + g * s.tk * s.dk;
    const float* vg = v + g * s.tk * s.dv;
    for (std::size_t i0 = 0; i0 < s.tq; i0 += kW) {
      const std::size_t rows = std::min(kW, s.tq - i0), groups = (rows + 15) / 16;
      const std::size_t row0 = h * s.tq + i0;
      float* w0 = out->weights.data() + row0 * s.tk;
      transpose_q(q + row0 * s.dk, rows, s.dk, qscale, qt.data());
      const TileRows tr = tile_rows(o.mask, i0, rows, s.tq, s.tk);
      // Keys past a row group's last visible one are not computed (they are zeroed below).
      const GroupLimits all = no_limits();
      GroupLimits lim;
      if (!o.return_scores && !pointwise && s.tk <= kW && tr.lo_max == 0 && tr.hi_min > 0) {
        // One key tile, every row's keys from 0 (training's causal T <= 64): the softmax on
        // the key-major tile (softmax_quads, same bits as passes 1-3 below), the weights
        // stored row-major once, and output = weights . V from the tile itself.
        alignas(16) std::int32_t hi32[kW];
        alignas(16) float mq[kW], lq[kW], tsum[kW];
        for (std::size_t r = 0; r < kW; ++r) {
          hi32[r] = r < rows ? static_cast<std::int32_t>(tr.hi[r]) : 0;
        }
        score_tile(qt.data(), s.dk, kg, s.tk, groups, group_limits(tr, rows, 0, &lim), sc.data());
        softmax_quads(sc.data(), hi32, (rows + 3) / 4, s.tk, mq, lq, tsum);
        store_transposed(sc.data(), rows, s.tk, w0, s.tk);
        for (std::size_t r = 0; r < rows; ++r) {
          const float log_l = std::log(lq[r]), inv = 1.f / lq[r];
          out->lse.data()[row0 + r] = mq[r] * m_to_nat + log_l;
          out->entropy.data()[row0 + r] = log_l - kLn2 * tsum[r] * inv;
        }
        float* y0 = out->output.data() + row0 * s.dv;
        std::fill(y0, y0 + rows * s.dv, 0.f);
        if (o.dropout > 0) {
          add_dropped_pv(o, h, i0, rows, tr, nullptr, w0, vg, y0);
          continue;
        }
        for (std::size_t r = 0; r < rows; r += 2) {
          const bool pair = r + 1 < rows;
          const std::size_t b = pair ? std::max(tr.hi[r], tr.hi[r + 1]) : tr.hi[r];
          float* y = y0 + r * s.dv;
          accumulate_pv(sc.data() + r, pair ? sc.data() + r + 1 : nullptr, kW, vg, b, s.dv, 1.f,
                        1.f, y, pair ? y + s.dv : nullptr);
        }
        continue;
      }
      // 1. Scores: every key if the caller keeps them, else the keys some row may see.
      std::size_t lo = tr.lo_min, hi = tr.hi_max;
      float* dst = w0;
      if (o.return_scores) lo = 0, hi = s.tk, dst = out->scores.data() + row0 * s.tk;
      for (std::size_t j0 = lo - lo % kW; j0 < hi; j0 += kW) {
        const std::size_t J = std::min(kW, s.tk - j0);
        score_tile(qt.data(), s.dk, kg + j0 * s.dk, J, groups,
                   o.return_scores ? all.j : group_limits(tr, rows, j0, &lim), sc.data());
        store_transposed(sc.data(), rows, J, dst + j0, s.tk);
      }
      // 2. Softmax row by row over the allowed keys; forbidden keys get exactly 0.
      bool done[kW];
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r, row = row0 + r;
        float* w = w0 + r * s.tk;
        float* y = out->output.data() + row * s.dv;
        const std::size_t a = tr.lo[r], b = tr.hi[r];
        if (o.return_scores) std::copy(dst + r * s.tk + a, dst + r * s.tk + b, w + a);
        std::fill(w, w + a, 0.f);
        std::fill(w + b, w + s.tk, 0.f);
        std::size_t n_allowed = b - a;
        if (pointwise) {
          n_allowed = 0;
          for (std::size_t j = a; j < b; ++j) {
            if (pointwise_allowed(o.mask, i, j, s.tk)) {
              ++n_allowed;
            } else {
              w[j] = ninf;
            }
          }
        }
        done[r] = n_allowed == 0;
        if (n_allowed == 0) {
          ++out->diag.fully_masked_rows;
          fully_masked_row(o.fill, vg, s.tk, s.dv, w, y, out->lse.data() + row,
                           out->entropy.data() + row, o.dropout,
                           o.dropout > 0 ? dropout_row(o.dropout_seed, h, i) : 0);
          if (o.fill == MaskFill::kNegInf) ++out->diag.nan_rows;
          continue;
        }
        std::fill(y, y + s.dv, 0.f);
        float m, l, t;
        softmax_row(w + a, b - a, u, &m, &l, &t);
        const float inv = 1.f / l;
        out->lse.data()[row] = m * m_to_nat + std::log(l);
        out->entropy.data()[row] = std::log(l) - kLn2 * t * inv;
      }
      // 3. output = weights . V over the union of each row pair's key ranges. With dropout
      //    the stored weights stay the softmax's: the kept ones, times 1/(1-p), are added
      //    key by key instead (attn/dropout.hpp decides which).
      if (o.dropout > 0) {
        add_dropped_pv(o, h, i0, rows, tr, done, w0, vg, out->output.data() + row0 * s.dv);
        continue;
      }
      for (std::size_t r = 0; r < rows;) {
        if (done[r]) {
          ++r;
          continue;
        }
        const bool pair = r + 1 < rows && !done[r + 1];
        const std::size_t a = pair ? std::min(tr.lo[r], tr.lo[r + 1]) : tr.lo[r];
        const std::size_t b = pair ? std::max(tr.hi[r], tr.hi[r + 1]) : tr.hi[r];
        float* y = out->output.data() + (row0 + r) * s.dv;
        accumulate_pv(w0 + r * s.tk + a, pair ? w0 + (r + 1) * s.tk + a : nullptr, 1, vg + a * s.dv,
                      b - a, s.dv, 1.f, 1.f, y, pair ? y + s.dv : nullptr);
        r += pair ? 2 : 1;
      }
    }
  }
  return true;
}

bool tiled_kernel_simd(const float* q, const float* k, const float* v, const AttentionOptions& o,
                       float scale, AttentionResult<float>* out) {
  if (!simd_eligible(q, k, v, o, scale)) return false;
  const Shape& s = o.shape;
  const std::size_t group = s.heads / s.kv_heads;
  const bool pointwise = has_pointwise(o.mask);
  const float ninf = -std::numeric_limits<float>::infinity();
  AlignedFloats qt(s.dk * kW), sc(kW * kW);
  alignas(16) float m[kW], l[kW], t[kW], alpha[kW];
  alignas(16) std::int32_t lo32[kW], hi32[kW];
  std::size_t allowed[kW];
  std::uint64_t drow[kW];
  const double p = o.dropout;
  const float keep_scale = static_cast<float>(1 / (1 - p));
  out->diag = {};
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const float* kg = k + g * s.tk * s.dk;
    const float* vg = v + g * s.tk * s.dv;
    for (std::size_t i0 = 0; i0 < s.tq; i0 += kW) {
      const std::size_t rows = std::min(kW, s.tq - i0), groups = (rows + 15) / 16;
      const std::size_t quads = (rows + 3) / 4, row0 = h * s.tq + i0;
      float* yt = out->output.data() + row0 * s.dv;
      transpose_q(q + row0 * s.dk, rows, s.dk, scale * kLog2e, qt.data());
      const TileRows tr = tile_rows(o.mask, i0, rows, s.tq, s.tk);
      // No zero fill of the output tile: each row pair's first P.V call starts from zero
      // (fresh), and a row no call reaches is fully masked and written whole below.
      bool pair_started[kW / 2] = {};
      for (std::size_t r = 0; r < kW; ++r) {
        m[r] = ninf, l[r] = 0.f, t[r] = 0.f;
        // Rows past the tile get an empty range: always masked.
        lo32[r] = r < rows ? static_cast<std::int32_t>(tr.lo[r]) : 0;
        hi32[r] = r < rows ? static_cast<std::int32_t>(tr.hi[r]) : 0;
        allowed[r] = r < rows ? allowed_count(o.mask, i0 + r, s.tq, s.tk) : 0;
        drow[r] = p > 0 ? dropout_row(o.dropout_seed, h, i0 + r) : 0;
      }
      // Per quad of rows (the same for every key tile): where the quad's last visible key
      // ends (hi_max), and the keys all four of its rows see (from lo_max to hi_min; rows past
      // the tile see none, so a partial quad never sees a whole key tile).
      std::size_t q_hi_max[kW / 4], q_lo_max[kW / 4], q_hi_min[kW / 4];
      for (std::size_t x = 0; x < quads; ++x) {
        q_hi_max[x] = 0, q_lo_max[x] = 0, q_hi_min[x] = s.tk;
        for (std::size_t r = 4 * x; r < 4 * x + 4; ++r) {
          const std::size_t a = r < rows ? tr.lo[r] : 0, b = r < rows ? tr.hi[r] : 0;
          if (a < b) q_hi_max[x] = std::max(q_hi_max[x], b);
          q_lo_max[x] = std::max(q_lo_max[x], a);
          q_hi_min[x] = std::min(q_hi_min[x], b);
        }
      }
      const GroupLimits all = no_limits();
      GroupLimits lim;
      // Key tiles outside the union of the rows' ranges are never visited.
      const std::size_t lo = tr.lo_min, hi = tr.hi_max;
      for (std::size_t j0 = lo - lo % kKT; j0 < hi; j0 += kKT) {
        const std::size_t J = std::min(kKT, s.tk - j0);
        // Mask the tile unless every row may see every key of it; then keys past a row
        // group's last visible one are not computed (the mask sets them to -inf).
        const bool masked = pointwise || tr.lo_max > j0 || tr.hi_min < j0 + J;
        score_tile(qt.data(), s.dk, kg + j0 * s.dk, J, groups,
                   masked ? group_limits(tr, rows, j0, &lim) : all.j, sc.data());
        // Per quad of rows: the keys of this tile it may see end at jq (softmax and mask stop
        // there); a quad that sees every key of the tile needs no mask.
        std::size_t jq[kW / 4];
        for (std::size_t x = 0; x < quads; ++x) {
          const std::size_t hi_q = q_hi_max[x];
          const bool full = !pointwise && q_lo_max[x] <= j0 && q_hi_min[x] >= j0 + J;
          jq[x] = full ? J : hi_q > j0 ? std::min(hi_q - j0, J) : 0;
          if (full || !masked) continue;
          const v128_t lo_q = wasm_v128_load(lo32 + 4 * x), hi_q4 = wasm_v128_load(hi32 + 4 * x);
          for (std::size_t jj = 0; jj < jq[x]; ++jj) {
            const v128_t jv = wasm_i32x4_splat(static_cast<std::int32_t>(j0 + jj));
            const v128_t ok = wasm_v128_and(wasm_i32x4_le(lo_q, jv), wasm_i32x4_gt(hi_q4, jv));
            float* sr = sc.data() + jj * kW + 4 * x;
            st(sr, wasm_v128_bitselect(ld(sr), splat(ninf), ok));
          }
        }
        if (pointwise) {  // (masked is then true)
          for (std::size_t r = 0; r < rows; ++r) {
            const std::size_t a = std::max(j0, tr.lo[r]), b = std::min(j0 + J, tr.hi[r]);
            for (std::size_t j = a; j < b; ++j) {
              if (!pointwise_allowed(o.mask, i0 + r, j, s.tk)) sc[(j - j0) * kW + r] = ninf;
            }
          }
        }
        online_softmax(sc.data(), jq, quads, m, l, t, alpha);
        // Dropout thins e = 2^(s - m) only where it multiplies V: l and t, summed above,
        // stay the softmax's.
        if (p > 0) dropout_tile(sc.data(), J, rows, j0, drow, p, keep_scale);
        // y = alpha * y + P . V_tile, two rows at a time, over the keys the pair may see.
        for (std::size_t r = 0; r < rows; r += 2) {
          const bool pair = r + 1 < rows;
          const std::size_t a = pair ? std::min(tr.lo[r], tr.lo[r + 1]) : tr.lo[r];
          const std::size_t b = pair ? std::max(tr.hi[r], tr.hi[r + 1]) : tr.hi[r];
          const std::size_t ja = std::max(a, j0), jb = std::min(b, j0 + J);
          if (ja >= jb) continue;  // nothing new, and alpha is 1
          float* y = yt + r * s.dv;
          const float* pw = sc.data() + (ja - j0) * kW + r;
          accumulate_pv(pw, pair ? pw + 1 : nullptr, kW, vg + ja * s.dv, jb - ja, s.dv, alpha[r],
                        pair ? alpha[r + 1] : 1.f, y, pair ? y + s.dv : nullptr,
                        !pair_started[r / 2]);
          pair_started[r / 2] = true;
        }
      }
      // Finish each row: normalise; back in natural units (m and t are base 2):
      // lse = m ln 2 + ln l; entropy = ln l - ln 2 * t / l.
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t row = row0 + r;
        float* y = yt + r * s.dv;
        if (allowed[r] == 0) {
          ++out->diag.fully_masked_rows;
          fully_masked_row<float>(o.fill, vg, s.tk, s.dv, nullptr, y, out->lse.data() + row,
                                  out->entropy.data() + row, p, drow[r]);
          if (o.fill == MaskFill::kNegInf) ++out->diag.nan_rows;
          continue;
        }
        const float inv = 1.f / l[r], log_l = std::log(l[r]);
        for (std::size_t c = 0; c < s.dv; ++c) y[c] *= inv;
        out->lse.data()[row] = m[r] * kLn2 + log_l;
        out->entropy.data()[row] = log_l - kLn2 * t[r] * inv;
      }
    }
  }
  return true;
}

// Keys per tile of the backward: the P and dS tiles (64 rows x kBT keys) and the K, V,
// dK, dV rows of the tile stay in L1 beside Qt and dO^t.
constexpr std::size_t kBT = 32;

bool tiled_backward_simd(const float* q, const float* k, const float* v, const float* d_out,
                         const AttentionOptions& o, float scale, const AttentionResult<float>& fwd,
                         AttentionGrads<float>* g, bool from_weights) {
  if (!simd_eligible(q, k, v, o, scale)) return false;
  // The naive forward's weights are the undropped P, which is what the backward needs.
  if (from_weights && fwd.weights.size() != o.shape.heads * o.shape.tq * o.shape.tk) return false;
  const Shape& s = o.shape;
  float mdo, mv;
  if (!finite_max_abs(d_out, s.heads * s.tq * s.dv, &mdo)) return false;
  finite_max_abs(v, s.kv_heads * s.tk * s.dv, &mv);
  // Bounds on |dP| = |dO . V| and on the sums into dV (no overflow, as for the forward).
  if (double(s.dv) * mdo * mv > 1e30 || double(s.tq) * mdo > 1e30) return false;
  for (std::size_t row = 0; row < s.heads * s.tq; ++row) {  // a caller's forward: sane lse?
    if (!std::isfinite(fwd.lse.data()[row]) && allowed_count(o.mask, row % s.tq, s.tq, s.tk)) {
      return false;
    }
  }
  const std::size_t group = s.heads / s.kv_heads;
  const bool pointwise = has_pointwise(o.mask);
  const float ninf = -std::numeric_limits<float>::infinity();
  // Zero-initialised: score_tile leaves keys past a row group's limit as they were, and
  // those entries must stay finite (P is 0 there, so dS = 0 * (dP - D) = 0).
  AlignedFloats qt(s.dk * kW), dot_t(s.dv * kW), pt(kW * kW);
  // dP for one key tile (tiled), or for the query tile's whole key range (naive: it needs
  // every dP of a row for D before any dS, see pass 1).
  const std::size_t tk_tiles = (s.tk + kBT - 1) / kBT * kBT;
  AlignedFloats dpt((from_weights ? tk_tiles : kBT) * kW);
  // With dropout: the kept-and-rescaled mask M (keep / (1 - p) or 0) and Pd = P * M.
  const double p = o.dropout;
  const float keep_scale = static_cast<float>(1 / (1 - p));
  AlignedFloats mt(p > 0 ? kW * kW : 0), pdt(p > 0 ? kW * kW : 0);
  std::uint64_t drow[kW];
  alignas(16) float lse2[kW], dsum[kW];
  alignas(16) std::int32_t lo32[kW], hi32[kW];
  std::size_t first_r[kW];
  const GroupLimits all = no_limits();
  GroupLimits lim;
  const v128_t vscale = splat(scale);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t kv = h / group;
    const float* kg = k + kv * s.tk * s.dk;  // (T_k, d_k)
    const float* vg = v + kv * s.tk * s.dv;  // (T_k, d_v)
    float* dkg = g->dk.data() + kv * s.tk * s.dk;
    float* dvg = g->dv.data() + kv * s.tk * s.dv;
    for (std::size_t i0 = 0; i0 < s.tq; i0 += kW) {
      const std::size_t rows = std::min(kW, s.tq - i0), groups = (rows + 15) / 16;
      const std::size_t quads = (rows + 3) / 4, row0 = h * s.tq + i0;
      const float* qtile = q + row0 * s.dk;       // (rows, d_k)
      const float* dotile = d_out + row0 * s.dv;  // (rows, d_v)
      float* dqtile = g->dq.data() + row0 * s.dk;
      // 1. Once per query tile: Q (scale and log2 e folded in, so scores come out in base
      //    2 like the forward's) and dO transposed for the micro-kernel; per row lse in
      //    base 2 and D. Fully masked rows pass their policy's weights to dV here and
      //    get an empty range, so every later tile masks them to P = 0.
      //    D_i = sum_j P_ij dP_ij. The naive kernel has the whole P row and sums exactly
      //    that (in pass 3b, as the scalar naive backward does): a one-hot row then gives
      //    D = dP_im and dS = 0 exactly. The tiled kernel has no full row and uses
      //    FlashAttention-2's equal D = rowsum(dO * O): its two dot products round
      //    differently, so on a saturated row dS is rounding of order u |dP|, not 0
      //    (docs/numerics.md, backward).
      transpose_q(qtile, rows, s.dk, scale * kLog2e, qt.data());
      transpose_q(dotile, rows, s.dv, 1.f, dot_t.data());
      TileRows tr = tile_rows(o.mask, i0, rows, s.tq, s.tk);
      bool any_full = false;
      for (std::size_t r = 0; r < kW; ++r) {
        lse2[r] = 0.f, dsum[r] = 0.f, lo32[r] = 0, hi32[r] = 0, drow[r] = 0;
        if (r >= rows) continue;  // past the tile: empty range, always masked
        const std::size_t row = row0 + r;
        if (p > 0) drow[r] = dropout_row(o.dropout_seed, h, i0 + r);
        if (allowed_count(o.mask, i0 + r, s.tq, s.tk) == 0) {
          any_full = true;
          tr.lo[r] = tr.hi[r] = 0;
          const float w = fully_masked_weight<float>(o.fill, s.tk);
          if (w != 0.f) {
            for (std::size_t j = 0; j < s.tk; ++j) {
              const float kj = p <= 0 ? 1.f : dropout_keep_row(drow[r], j, p) ? keep_scale : 0.f;
              axpy(w * kj, dotile + r * s.dv, dvg + j * s.dv, s.dv);
            }
          }
          continue;
        }
        lse2[r] = fwd.lse.data()[row] * kLog2e;
        if (!from_weights) dsum[r] = dot(dotile + r * s.dv, fwd.output.data() + row * s.dv, s.dv);
        lo32[r] = static_cast<std::int32_t>(tr.lo[r]);
        hi32[r] = static_cast<std::int32_t>(tr.hi[r]);
      }
      const std::size_t lo = tr.lo_min, hi = tr.hi_max;
      bool monotone = true;
      for (std::size_t r = 1; r < rows; ++r) {
        monotone = monotone && lo32[r] >= lo32[r - 1] && hi32[r] >= hi32[r - 1];
      }
      // Naive: phase 0 runs passes 2-4 and sums D over every key tile, phase 1 passes
      // 2 and 5-7 with that D. Tiled: one phase runs them all.
      const int phases = from_weights ? 2 : 1;
      for (int ph = 0; ph < phases; ++ph) {
        const bool first = ph == 0, last = ph == phases - 1;
        for (std::size_t j0 = lo - lo % kBT; j0 < hi; j0 += kBT) {
          const std::size_t J = std::min(kBT, s.tk - j0);
          float* const dp = dpt.data() + (from_weights ? j0 * kW : 0);  // (J, kW) key-major
          const bool masked = any_full || pointwise || tr.lo_max > j0 || tr.hi_min < j0 + J;
          const std::size_t* jl = masked ? group_limits(tr, rows, j0, &lim) : all.j;
          first_row(lo32, hi32, rows, monotone, j0, J, first_r);
          // 2. P for the tile, key-major. From the naive forward's weights: a transposed copy
          //    (forbidden cells are exact zeros there; fully masked rows are zeroed, pass 1
          //    took care of them). Else the scores (base 2), forbidden cells -inf, then
          //    P = 2^(S - lse): the forward's lse already holds each row's maximum and sum,
          //    so no running maximum is needed and P is the exact normalised softmax.
          //    (transpose_q with scale 1: exact; it zeroes the rows past the tile that are read).
          if (from_weights) {
            transpose_q(fwd.weights.data() + row0 * s.tk + j0, rows, J, 1.f, pt.data(), s.tk);
            for (std::size_t r = 0; r < rows; ++r) {
              if (hi32[r] > lo32[r]) continue;
              for (std::size_t jj = 0; jj < J; ++jj) pt[jj * kW + r] = 0.f;
            }
          } else {
            score_tile(qt.data(), s.dk, kg + j0 * s.dk, J, groups, jl, pt.data());
          }
          if (masked && !from_weights) {
            for (std::size_t jj = 0; jj < J; ++jj) {
              const v128_t jv = wasm_i32x4_splat(static_cast<std::int32_t>(j0 + jj));
              float* sr = pt.data() + jj * kW;
              for (std::size_t x = 0; x < quads; ++x) {
                const v128_t ok = wasm_v128_and(wasm_i32x4_le(wasm_v128_load(lo32 + 4 * x), jv),
                                                wasm_i32x4_gt(wasm_v128_load(hi32 + 4 * x), jv));
                st(sr + 4 * x, wasm_v128_bitselect(ld(sr + 4 * x), splat(ninf), ok));
              }
            }
            if (pointwise) {
              for (std::size_t r = 0; r < rows; ++r) {
                const std::size_t a = std::max(j0, tr.lo[r]), b = std::min(j0 + J, tr.hi[r]);
                for (std::size_t j = a; j < b; ++j) {
                  if (!pointwise_allowed(o.mask, i0 + r, j, s.tk)) pt[(j - j0) * kW + r] = ninf;
                }
              }
            }
          }
          for (std::size_t jj = 0; jj < J && !from_weights; ++jj) {
            float* sr = pt.data() + jj * kW;
            for (std::size_t x = 0; x < quads; ++x) {
              st(sr + 4 * x, vexp2(sub(ld(sr + 4 * x), ld(lse2 + 4 * x))));
            }
          }
          // 3. dP = dO V^T for the tile: the score micro-kernel with dO^t in place of Qt.
          //    With dropout, the mask M and Pd = P * M (the P the forward multiplied V by), and
          //    dP (of the undropped P) = M * dO V^T.
          if (first) {
            score_tile(dot_t.data(), s.dv, vg + j0 * s.dv, J, groups, jl, dp);
            const float* pv = pt.data();
            if (p > 0) {
              std::fill(mt.begin(), mt.end(), 1.f);
              dropout_tile(mt.data(), J, rows, j0, drow, p, keep_scale);
              for (std::size_t x = 0; x < J * kW; x += 4) {
                const v128_t mm = ld(mt.data() + x);
                st(pdt.data() + x, mul(ld(pt.data() + x), mm));
                st(dp + x, mul(ld(dp + x), mm));
              }
              pv = pdt.data();
            }
            // 4. dV_j += sum_r Pd_rj dO_r: a P row (one key, rows contiguous) times dO rows,
            //    from the first row that may see either key of the pair (see first_row).
            for (std::size_t jj = 0; jj < J; jj += 2) {
              const bool two = jj + 1 < J;
              const std::size_t r0 = two ? std::min(first_r[jj], first_r[jj + 1]) : first_r[jj];
              if (r0 >= rows) continue;
              float* y = dvg + (j0 + jj) * s.dv;
              accumulate_pv(pv + jj * kW + r0, two ? pv + (jj + 1) * kW + r0 : nullptr, 1,
                            dotile + r0 * s.dv, rows - r0, s.dv, 1.f, 1.f, y,
                            two ? y + s.dv : nullptr);
            }
            // 3b. Naive: D_r += sum_j P_rj dP_rj (undropped P; dP carries the mask M), key by
            //     key like the scalar kernel. Cells past a row's range hold P = 0 and a finite dP.
            for (std::size_t jj = 0; jj < J && from_weights; ++jj) {
              const float* pr = pt.data() + jj * kW;
              const float* dr = dp + jj * kW;
              for (std::size_t x = 0; x < quads; ++x) {
                st(dsum + 4 * x, add(ld(dsum + 4 * x), mul(ld(pr + 4 * x), ld(dr + 4 * x))));
              }
            }
          }
          if (!last) continue;
          // 5. dS = scale * P * (dP - D) in place of dP (softmax's Jacobian, row by row).
          for (std::size_t jj = 0; jj < J; ++jj) {
            const float* pr = pt.data() + jj * kW;
            float* dr = dp + jj * kW;
            for (std::size_t x = 0; x < quads; ++x) {
              st(dr + 4 * x,
                 mul(mul(ld(pr + 4 * x), sub(ld(dr + 4 * x), ld(dsum + 4 * x))), vscale));
            }
          }
          // 6. dK_j += sum_r dS_rj Q_r (unscaled Q rows: the scale is inside dS), from the
          //    first row that may see either key.
          for (std::size_t jj = 0; jj < J; jj += 2) {
            const bool two = jj + 1 < J;
            const std::size_t r0 = two ? std::min(first_r[jj], first_r[jj + 1]) : first_r[jj];
            if (r0 >= rows) continue;
            float* y = dkg + (j0 + jj) * s.dk;
            accumulate_pv(dp + jj * kW + r0, two ? dp + (jj + 1) * kW + r0 : nullptr, 1,
                          qtile + r0 * s.dk, rows - r0, s.dk, 1.f, 1.f, y,
                          two ? y + s.dk : nullptr);
          }
          // 7. dQ_r += sum_j dS_rj K_j, two rows at a time over the keys the pair may see.
          for (std::size_t r = 0; r < rows; r += 2) {
            const bool pair = r + 1 < rows;
            const std::size_t a = pair ? std::min(tr.lo[r], tr.lo[r + 1]) : tr.lo[r];
            const std::size_t b = pair ? std::max(tr.hi[r], tr.hi[r + 1]) : tr.hi[r];
            const std::size_t ja = std::max(a, j0), jb = std::min(b, j0 + J);
            if (ja >= jb) continue;
            float* y = dqtile + r * s.dk;
            const float* ds = dp + (ja - j0) * kW + r;
            accumulate_pv(ds, pair ? ds + 1 : nullptr, kW, kg + ja * s.dk, jb - ja, s.dk, 1.f, 1.f,
                          y, pair ? y + s.dk : nullptr);
          }
        }
      }
    }
  }
  return true;
}

#endif  // ATTN_HAVE_SIMD

}  // namespace attn::detail
