// The SIMD128 float32 forward kernels (simd_kernels.hpp): naive and tiled, their softmax passes,
// the eligibility scan, and the vectorised exp for the tests and the decoder. The tile machinery
// they share with the backward (simd_backward.cpp) is simd_tiles.hpp.
#include "simd_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "attn/aligned.hpp"
#include "attn/tile_sizes.hpp"
#include "kernels.hpp"
#include "simd_ops.hpp"
#include "simd_tiles.hpp"

namespace attn::detail {

// The dispatch's kSimdKernels (simd_kernels.hpp) and the kernels compiled here agree.
#ifdef ATTN_HAVE_SIMD
static_assert(kSimdKernels);
#else
static_assert(!kSimdKernels);
#endif

#ifndef ATTN_HAVE_SIMD

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

using namespace simd;

namespace {

// Keys per tile of the tiled kernel (docs/performance.md: why 64).
constexpr std::size_t kKT = kTileKSimd;  // attn/tile_sizes.hpp
static_assert(kKT <= kW && kW % kKT == 0, "a key tile fits the score buffer");

// The tiled kernel's online softmax over one key-major score tile (J keys x 4 * quads
// rows, stride kW), four rows per vector, in base-2 units (log2 e is folded into Qt):
// new maximum, rescale factor alpha = 2^(m_old - m_new) for what was summed so far,
// then e = 2^(s - m) in place, l += sum e, t += sum e (s - m).
// jq[x]: keys of the tile quad x may see (its rows' ranges end there; keys past it are -inf
// for all four rows and are left as they are). jq[x] = 0: nothing new, alpha 1.
// The pass is bound by its operations (mostly adds, subtracts and maxima), not by its
// dependency chains (docs/performance.md has the profile).
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
    // The maximum in four independent chains (one chain waits on each max).
    v128_t mx0 = splat(ninf), mx1 = mx0, mx2 = mx0, mx3 = mx0;
    float* p = col;
    ATTN_NO_UNROLL
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
    ATTN_NO_UNROLL
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
    ATTN_NO_UNROLL
    for (std::size_t jj = 0; jj < qhi; ++jj) {
      const v128_t ok = wasm_i32x4_gt(hv, wasm_i32x4_splat(static_cast<std::int32_t>(jj)));
      mx = vmax(mx, wasm_v128_bitselect(ld(col + jj * kW), splat(ninf), ok));
    }
    const v128_t m = wasm_v128_bitselect(mx, zero, wasm_i32x4_gt(hv, wasm_i32x4_splat(0)));
    // 2. e = 2^(s - m) in place (0 where forbidden), l and t in four accumulators each.
    v128_t l4[4] = {zero, zero, zero, zero}, t4[4] = {zero, zero, zero, zero};
    ATTN_NO_UNROLL
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
    ATTN_NO_UNROLL
    for (std::size_t jj = 0; jj < qhi; ++jj) st(col + jj * kW, mul(ld(col + jj * kW), inv));
    for (std::size_t jj = qhi; jj < J; ++jj) st(col + jj * kW, zero);
    st(m_out + 4 * x, m), st(l_out + 4 * x, l), st(t_out + 4 * x, t);
  }
}
// Through a pointer, as online_softmax.
void (*volatile softmax_quads)(float*, const std::int32_t*, std::size_t, std::size_t, float*,
                               float*, float*) = softmax_quads_impl;

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
#endif  // ATTN_HAVE_SIMD

}  // namespace attn::detail
