// The SIMD128 float32 backward (simd_kernels.hpp: tiled_backward_simd), FlashAttention-2 style
// on the forward's micro-kernels (simd_tiles.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "attn/aligned.hpp"
#include "attn/tile_sizes.hpp"
#include "kernels.hpp"
#include "simd_kernels.hpp"
#include "simd_ops.hpp"
#include "simd_tiles.hpp"

namespace attn::detail {

#ifndef ATTN_HAVE_SIMD

bool tiled_backward_simd(const float*, const float*, const float*, const float*,
                         const AttentionOptions&, float, const AttentionResult<float>&,
                         AttentionGrads<float>*, bool) {
  return false;
}

#else

using namespace simd;

namespace {

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

// Keys per tile of the backward: the P and dS tiles (64 rows x kBT keys) and the K, V,
// dK, dV rows of the tile stay in L1 beside Qt and dO^t.
constexpr std::size_t kBT = 32;

}  // namespace

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
