// The float32 SIMD kernels (cpp/src/simd_kernels.hpp) against the scalar kernels
// they replace, and the SIMD128 intrinsics they are written in (attn/simd128.hpp) against the
// WebAssembly spec. They run in the wasm build (ctest under Node) and natively where the
// intrinsics come from SIMDe (ATTN_NATIVE_SIMD). Every test here is tagged [wasm]: a native
// build without SIMDe (or with ATTN_SCALAR) leaves them out (CMakeLists.txt: TEST_SPEC ~[wasm]),
// as they would compare scalar code (and libm exp) with itself.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/attention.hpp"
#include "attn/tiled.hpp"
#include "diagnostics.hpp"
#include "fixtures.hpp"
#include "kernels.hpp"
#include "random_inputs.hpp"
#include "simd_kernels.hpp"
#include "simd_ops.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Shape;

namespace {

struct Worst {
  double output = 0, weights = 0, lse = 0, entropy = 0;
};

// Runs the public entry point (SIMD where compiled in) and the scalar kernel on
// the same call and compares everything they return.
// tol: absolute bound on output and weights (1e-5 for unit-variance inputs; larger
// logits amplify float32 rounding of the scores, |ds| ~ 1e-7 |s|, through exp).
void compare_with_scalar(const testing_inputs::Qkv<float>& in, const AttentionOptions& o,
                         bool tiled, Worst* worst, double tol = 1e-5) {
  AttentionResult<float> a, b;
  const attn::Status st = tiled
                              ? attn::attention_tiled(in.q.data(), in.q.size(), in.k.data(),
                                                      in.k.size(), in.v.data(), in.v.size(), o, &a)
                              : attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(),
                                                in.v.data(), in.v.size(), o, &a);
  REQUIRE(st.ok());
  b.output.resize(a.output.shape());
  b.weights.resize(a.weights.shape());
  b.scores.resize(a.scores.shape());
  b.entropy.resize(a.entropy.shape());
  b.lse.resize(a.lse.shape());
  const float scale = static_cast<float>(attn::effective_scale(o));
  if (tiled) {
    attn::detail::tiled_kernel_scalar(in.q.data(), in.k.data(), in.v.data(), o, scale, &b);
  } else {
    attn::detail::naive_kernel_scalar(in.q.data(), in.k.data(), in.v.data(), o, scale, &b);
  }
  const double dout = fixtures::max_abs_diff(a.output.data(), b.output.data(), a.output.size());
  const double dw = fixtures::max_abs_diff(a.weights.data(), b.weights.data(), a.weights.size());
  const double ds = fixtures::max_abs_diff(a.scores.data(), b.scores.data(), a.scores.size());
  double dl = 0;  // lse relative to its magnitude (it carries -1e9 under 'finite')
  for (std::size_t x = 0; x < a.lse.size(); ++x) {
    const double u = a.lse.data()[x], w = b.lse.data()[x];
    const double d = fixtures::max_abs_diff(&u, &w, 1) / std::max(1.0, std::abs(w));
    dl = std::max(dl, d);
  }
  const double de = fixtures::max_abs_diff(a.entropy.data(), b.entropy.data(), a.entropy.size());
  CHECK(dout <= tol);
  CHECK(dw <= tol);
  CHECK(ds <= tol);
  CHECK(dl <= 1e-5);
  CHECK(de <= 1e-4);
  CHECK(a.diag.fully_masked_rows == b.diag.fully_masked_rows);
  CHECK(a.diag.nan_rows == b.diag.nan_rows);
  // The SIMD naive kernel's own count skips the recount: it must equal it.
  CHECK(a.diag.nan_rows == attn::detail::count_nan_rows(a, a.lse.size()));
  CHECK(a.diag.inf_score_rows == b.diag.inf_score_rows);
  worst->output = std::max(worst->output, dout);
  worst->weights = std::max(worst->weights, dw);
  worst->lse = std::max(worst->lse, dl);
  worst->entropy = std::max(worst->entropy, de);
}

// Distance in units in the last place of float32 between y and the exact value r.
double ulps(float y, double r) {
  if (r < std::numeric_limits<float>::min()) return y == 0.f ? 0.0 : std::abs(y - r) / 1e-45;
  const float rf = static_cast<float>(r);
  const float ulp = std::nextafter(rf, std::numeric_limits<float>::infinity()) - rf;
  return std::abs(static_cast<double>(y) - r) / ulp;
}

}  // namespace

TEST_CASE("simd - the wasm build (and natively SIMDe's) compiles the SIMD kernels in",
          "[wasm][simd]") {
#ifdef ATTN_SIMD128
  CHECK(attn::detail::kSimdKernels);
#else
  CHECK_FALSE(attn::detail::kSimdKernels);
#endif
  WARN("float32 SIMD128 kernels compiled in: " << (attn::detail::kSimdKernels ? "yes" : "no"));
  // With them compiled in, finite inputs take the SIMD path.
  std::mt19937 g(5);
  const Shape s{1, 1, 9, 9, 4, 4};
  auto in = testing_inputs::make_qkv<float>(s, g);
  AttentionOptions o;
  o.shape = s;
  AttentionResult<float> r;
  r.output.resize({1, 9, 4});
  r.weights.resize({1, 9, 9});
  r.entropy.resize({1, 9});
  r.lse.resize({1, 9});
  CHECK(attn::detail::simd_eligible(in.q.data(), in.k.data(), in.v.data(), o, 0.5f) ==
        attn::detail::kSimdKernels);
  CHECK(attn::detail::naive_kernel_simd(in.q.data(), in.k.data(), in.v.data(), o, 0.5f, &r) ==
        attn::detail::kSimdKernels);
  CHECK(attn::detail::tiled_kernel_simd(in.q.data(), in.k.data(), in.v.data(), o, 0.5f, &r) ==
        attn::detail::kSimdKernels);
}

#ifdef ATTN_SIMD128
namespace {
// The four lanes of v as float32 bit patterns, and the four floats as a vector (through memory,
// so the compiler cannot fold the operations under test).
std::uint32_t simd128_lane_bits(v128_t v, int lane) {
  std::uint32_t b[4];
  wasm_v128_store(b, v);
  return b[lane];
}
v128_t simd128_floats(float a, float b, float c, float d) {
  const float x[4] = {a, b, c, d};
  return wasm_v128_load(x);
}
std::uint32_t simd128_bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
}  // namespace
#endif

// The operations whose x86 forms differ from SIMD128 at a corner (signed zeros, NaN, ties,
// saturation, unsigned lanes), each against the value the WebAssembly SIMD spec defines: natively
// this checks SIMDe's implementation, in wasm the engine's. And no multiply-add is fused.
TEST_CASE("simd - the SIMD128 intrinsics the kernels use give the spec's values at the corners",
          "[wasm][simd]") {
#ifndef ATTN_SIMD128
  WARN("no SIMD128 intrinsics in this build");
#else
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::uint32_t pz = simd128_bits_of(0.f), nz = simd128_bits_of(-0.f);
  // pmax(a, b) = a < b ? b : a; pmin(a, b) = b < a ? b : a: the first operand on ties and NaN.
  const v128_t a = simd128_floats(-0.f, 0.f, nan, 1.f), b = simd128_floats(0.f, -0.f, 1.f, nan);
  const v128_t mx = wasm_f32x4_pmax(a, b), mn = wasm_f32x4_pmin(a, b);
  CHECK(simd128_lane_bits(mx, 0) == nz);
  CHECK(simd128_lane_bits(mx, 1) == pz);
  CHECK(std::isnan(wasm_f32x4_extract_lane(mx, 2)));
  CHECK(wasm_f32x4_extract_lane(mx, 3) == 1.f);
  CHECK(simd128_lane_bits(mn, 0) == nz);
  CHECK(simd128_lane_bits(mn, 1) == pz);
  CHECK(std::isnan(wasm_f32x4_extract_lane(mn, 2)));
  CHECK(wasm_f32x4_extract_lane(mn, 3) == 1.f);
  // nearest: ties to even, the sign of zero kept.
  const v128_t r = wasm_f32x4_nearest(simd128_floats(2.5f, 3.5f, -0.5f, -1.4999999f));
  CHECK(wasm_f32x4_extract_lane(r, 0) == 2.f);
  CHECK(wasm_f32x4_extract_lane(r, 1) == 4.f);
  CHECK(simd128_lane_bits(r, 2) == nz);
  CHECK(wasm_f32x4_extract_lane(r, 3) == -1.f);
  const float inf = std::numeric_limits<float>::infinity();
  const v128_t rb = wasm_f32x4_nearest(simd128_floats(8388607.5f, -8388609.f, 1e30f, -inf));
  CHECK(wasm_f32x4_extract_lane(rb, 0) == 8388608.f);
  CHECK(wasm_f32x4_extract_lane(rb, 1) == -8388609.f);
  CHECK(wasm_f32x4_extract_lane(rb, 2) == 1e30f);
  CHECK(wasm_f32x4_extract_lane(rb, 3) == -inf);
  // trunc_sat: toward zero, saturating, NaN to 0.
  const v128_t t = wasm_i32x4_trunc_sat_f32x4(simd128_floats(-1.9f, 3e9f, -3e9f, nan));
  CHECK(wasm_i32x4_extract_lane(t, 0) == -1);
  CHECK(wasm_i32x4_extract_lane(t, 1) == std::numeric_limits<std::int32_t>::max());
  CHECK(wasm_i32x4_extract_lane(t, 2) == std::numeric_limits<std::int32_t>::min());
  CHECK(wasm_i32x4_extract_lane(t, 3) == 0);
  // unsigned lanes: 0x80000000 and 0xffffffff are the largest, not negative.
  const std::uint32_t ua[4] = {0x80000000u, 1u, 0xffffffffu, 7u}, ub[4] = {1u, 0x80000000u, 0u, 9u};
  const v128_t um = wasm_u32x4_max(wasm_v128_load(ua), wasm_v128_load(ub));
  CHECK(wasm_u32x4_extract_lane(um, 0) == 0x80000000u);
  CHECK(wasm_u32x4_extract_lane(um, 1) == 0x80000000u);
  CHECK(wasm_u32x4_extract_lane(um, 2) == 0xffffffffu);
  CHECK(wasm_u32x4_extract_lane(um, 3) == 9u);
  // comparisons with NaN: only ne is true; signed integer compares.
  const v128_t n4 = simd128_floats(nan, nan, nan, nan), one4 = wasm_f32x4_splat(1.f);
  CHECK(simd128_lane_bits(wasm_f32x4_ne(n4, n4), 0) == 0xffffffffu);
  CHECK(simd128_lane_bits(wasm_f32x4_eq(n4, n4), 0) == 0u);
  CHECK(simd128_lane_bits(wasm_f32x4_lt(n4, one4), 0) == 0u);
  CHECK(simd128_lane_bits(wasm_f32x4_gt(n4, one4), 0) == 0u);
  CHECK(simd128_lane_bits(wasm_i32x4_gt(wasm_i32x4_splat(-1), wasm_i32x4_splat(1)), 0) == 0u);
  CHECK(simd128_lane_bits(wasm_i32x4_le(wasm_i32x4_splat(-1), wasm_i32x4_splat(1)), 0) ==
        0xffffffffu);
  // shuffle's lane numbers: 0-3 the first operand, 4-7 the second.
  const v128_t s = wasm_i32x4_shuffle(simd128_floats(0.f, 1.f, 2.f, 3.f),
                                      simd128_floats(4.f, 5.f, 6.f, 7.f), 2, 6, 3, 7);
  CHECK(wasm_f32x4_extract_lane(s, 0) == 2.f);
  CHECK(wasm_f32x4_extract_lane(s, 1) == 6.f);
  CHECK(wasm_f32x4_extract_lane(s, 2) == 3.f);
  CHECK(wasm_f32x4_extract_lane(s, 3) == 7.f);
  // a * b + c rounds twice: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 (a tie, to
  // even), so the sum is exactly 0; one fused multiply-add would give 2^-24.
  const float e = 1.f + std::ldexp(1.f, -12), f = -(1.f + std::ldexp(1.f, -11));
  const v128_t m = attn::detail::simd::madd(simd128_floats(e, e, e, e), wasm_f32x4_splat(e),
                                            simd128_floats(f, f, f, f));
  CHECK(wasm_f32x4_extract_lane(m, 0) == 0.f);
  const v128_t p = wasm_f32x4_add(wasm_f32x4_mul(simd128_floats(e, 0, 0, 0), wasm_f32x4_splat(e)),
                                  simd128_floats(f, 0, 0, 0));
  CHECK(wasm_f32x4_extract_lane(p, 0) == 0.f);
#endif
}

TEST_CASE("simd - vectorised exp is within 2 ulp of exp and exact at the edges",
          "[wasm][simd][exp]") {
  std::vector<float> x;
  for (double t = -110; t <= 90; t += 0.0137) x.push_back(static_cast<float>(t));
  for (float t = -1e-3f; t <= 1e-3f; t += 1.7e-6f) x.push_back(t);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edge = {0.f,    -0.f,  -inf,   inf,   -87.3f, -87.4f, -103.f, -200.f,
                                   -1e30f, 88.3f, 88.38f, 88.7f, 88.8f,  1e30f,  1e-30f};
  x.insert(x.end(), edge.begin(), edge.end());
  for (const bool nonpositive : {false, true}) {
    std::vector<float> xs;
    for (float v : x)
      if (!nonpositive || v <= 0) xs.push_back(v);
    xs.push_back(std::numeric_limits<float>::quiet_NaN());
    std::vector<float> y(xs.size());
    attn::detail::exp_f32(xs.data(), y.data(), xs.size(), nonpositive);
    double worst = 0;
    for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
      const double r = std::exp(static_cast<double>(xs[i]));
      INFO("x = " << xs[i] << " exp = " << y[i] << " exact " << r << " short form " << nonpositive);
      if (r > std::numeric_limits<float>::max()) {
        CHECK(y[i] == inf);
      } else if (r < std::numeric_limits<float>::min()) {
        // -inf and large negative give exactly 0; the denormal range may flush to 0.
        CHECK(y[i] >= 0.f);
        CHECK(y[i] <= std::numeric_limits<float>::min());
        if (xs[i] < -104.f) CHECK(y[i] == 0.f);
      } else {
        const double u = ulps(y[i], r);
        CHECK(u <= 2.0);
        worst = std::max(worst, u);
      }
    }
    if (!nonpositive) CHECK(std::isnan(y.back()));
    WARN("exp max error " << worst << " ulp (short form " << nonpositive
                          << ", SIMD compiled in: " << attn::detail::kSimdKernels << ")");
  }
  float one;
  const float zero = 0.f;
  attn::detail::exp_f32(&zero, &one, 1, true);
  CHECK(one == 1.f);  // exp(0) is exactly 1: the online rescale factor of an unchanged maximum
}

TEST_CASE("simd - the kernels' exp2 is within 4e-7 relative of 2^x and exact at the edges",
          "[wasm][simd][exp]") {
  std::vector<float> x;
  for (double t = -140; t <= 0; t += 0.00731) x.push_back(static_cast<float>(t));
  for (float t = -1e-3f; t <= 0.f; t += 1.7e-6f) x.push_back(t);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edge = {0.f,         -0.f,   -inf,    -0.5f,   -0.4999999f,
                                   -0.5000001f, -1.f,   -125.9f, -126.1f, -127.f,
                                   -127.4f,     -128.f, -200.f,  -1e30f};
  x.insert(x.end(), edge.begin(), edge.end());
  std::vector<float> y(x.size());
  attn::detail::exp2_f32(x.data(), y.data(), x.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = std::exp2(static_cast<double>(x[i]));
    INFO("x = " << x[i] << " exp2 = " << y[i] << " exact " << r);
    CHECK(y[i] >= 0.f);
    if (x[i] <= -127.f) {
      CHECK(y[i] == 0.f);  // masked keys and underflow give exactly 0
    } else if (r < std::numeric_limits<float>::min()) {
      CHECK(y[i] <= std::numeric_limits<float>::min());  // denormal range: near 0
    } else {
      const double rel = std::abs(y[i] - r) / r;
      CHECK(rel <= 4e-7);
      worst = std::max(worst, rel);
    }
    if (x[i] == 0.f) CHECK(y[i] == 1.f);  // the rescale factor of an unchanged maximum
  }
  WARN("exp2 max relative error " << worst << " (SIMD compiled in: " << attn::detail::kSimdKernels
                                  << ")");
}

TEST_CASE("simd - naive and tiled equal the scalar kernels for odd sizes and every option",
          "[wasm][simd][property]") {
  std::mt19937 g(77);
  const std::size_t ts[] = {1, 3, 5, 17, 63, 65, 127, 129};
  const std::size_t dks[] = {1, 3, 5, 33, 64, 65};
  Worst worst, sharp;
  int trial = 0;
  for (std::size_t t : ts) {
    for (std::size_t dk : dks) {
      for (int variant = 0; variant < 6; ++variant, ++trial) {
        // 0 causal, 1 plain, 2 causal + window, 3 padding + custom mask, 4 GQA causal with
        // T_q < T_k, 5 window alone with T_q > T_k.
        const std::size_t tq = t;
        const std::size_t tk = variant == 4   ? t + 7
                               : variant == 5 ? std::max<std::size_t>(1, t / 2)
                                              : t;
        const std::size_t dv = 1 + (trial * 13) % 70;
        Shape s{
            variant == 4 ? 4u : 2u, variant == 4 ? 2u : (variant == 1 ? 1u : 2u), tq, tk, dk, dv};
        const double sd = trial % 5 == 0 ? 4.0 : 1.0;  // sometimes sharp, large logits
        auto in = testing_inputs::make_qkv<float>(s, g, sd);
        std::vector<std::uint8_t> pad(tk, 1), mask(tq * tk, 1);
        for (std::size_t j = 1; j < tk; j += 3) pad[j] = 0;
        for (std::size_t x = 0; x < mask.size(); x += 5) mask[x] = 0;
        if (tq > 2) std::fill(mask.begin() + tk, mask.begin() + 2 * tk, 0);  // row 1 fully masked
        AttentionOptions o;
        o.shape = s;
        o.mask.causal = variant == 0 || variant == 2 || variant == 4;
        o.mask.window = variant == 2 ? 9 : variant == 5 ? 40 : 0;
        o.mask.key_padding = variant == 3 ? attn::Bytes(pad.data(), pad.size()) : nullptr;
        o.mask.mask = variant == 3 ? attn::Bytes(mask.data(), mask.size()) : nullptr;
        o.fill = static_cast<attn::MaskFill>(trial % 3);
        if (trial % 4 == 1) o.scale = 0.7;
        INFO("T_q=" << tq << " T_k=" << tk << " d_k=" << dk << " d_v=" << dv
                    << " variant=" << variant << " fill=" << trial % 3);
        const double tol = sd == 1.0 ? 1e-5 : 1e-3;
        compare_with_scalar(in, o, true, sd == 1.0 ? &worst : &sharp, tol);
        // The naive kernel both ways: without kept scores, a query tile whose rows all see
        // keys from 0 in one key tile (T_k <= 64: causal, plain, GQA) takes the vertical
        // softmax; with them, the row-by-row one.
        for (bool keep : {false, true}) {
          o.return_scores = keep;
          compare_with_scalar(in, o, false, sd == 1.0 ? &worst : &sharp, tol);
        }
      }
    }
  }
  WARN("SIMD vs scalar over " << trial << " shapes: output " << worst.output << ", weights "
                              << worst.weights << ", lse (rel) " << worst.lse << ", entropy "
                              << worst.entropy << "; sd 4 inputs: output " << sharp.output
                              << ", weights " << sharp.weights);
}

TEST_CASE("simd - causal tiles straddling several query tiles and long rows",
          "[wasm][simd][property]") {
  std::mt19937 g(123);
  Worst worst;
  for (std::size_t t : {200u, 257u, 511u}) {
    const Shape s{1, 1, t, t, 64, 64};
    auto in = testing_inputs::make_qkv<float>(s, g);
    for (int variant = 0; variant < 3; ++variant) {
      AttentionOptions o;
      o.shape = s;
      o.mask.causal = variant != 1;
      o.mask.window = variant == 2 ? 100 : 0;
      INFO("T=" << t << " variant=" << variant);
      compare_with_scalar(in, o, true, &worst);
      compare_with_scalar(in, o, false, &worst);
    }
  }
  WARN("SIMD vs scalar at T up to 511: output " << worst.output << ", weights " << worst.weights);
}

TEST_CASE("simd - a dominant key at every position of a tile and its tails is the row maximum",
          "[wasm][simd][property]") {
  // Row i has one dominant key j*(i) = (5 i + 3) mod T, hundreds of base-2 units above the
  // others (0): a running maximum that missed it (a lane of the 4-way maximum, a tail key
  // of a quad, a key tile) would put 2^300 through the exp2 and overflow. j* runs over
  // every key, so it lands in each position mod 4, in the short last tile (T = 67: 3 keys)
  // and in every tile; d_k = T (one basis vector per key) is also a d_k off 64.
  for (std::size_t t : {67u, 131u}) {
    const std::size_t dk = t, dv = 5;
    const Shape s{1, 1, t, t, dk, dv};
    testing_inputs::Qkv<float> in;
    in.q.assign(t * dk, 0.f);
    in.k.assign(t * dk, 0.f);
    const float a = 48.f;  // score a^2 / sqrt(T): 281 (T = 67), 201 (T = 131) natural units
    for (std::size_t i = 0; i < t; ++i) in.q[i * dk + (5 * i + 3) % t] = a;
    for (std::size_t j = 0; j < t; ++j) in.k[j * dk + j] = a;
    std::mt19937 g(3);
    in.v = testing_inputs::normal<float>(t * dv, g);
    for (int variant = 0; variant < 2; ++variant) {
      AttentionOptions o;
      o.shape = s;
      o.mask.causal = variant == 1;  // rows with j* > i then see only zeros
      INFO("T=" << t << " causal=" << variant);
      Worst worst;
      compare_with_scalar(in, o, true, &worst);
      compare_with_scalar(in, o, false, &worst);
    }
  }
}

TEST_CASE("simd - NaN or Inf inputs and float32 overflow fall back to the scalar semantics",
          "[wasm][simd][nonfinite]") {
  std::mt19937 g(9);
  const Shape s{2, 2, 33, 33, 5, 6};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int c = 0; c < 5; ++c) {
    auto in = testing_inputs::make_qkv<float>(s, g);
    std::vector<std::uint8_t> pad(33, 1);
    pad[7] = 0;
    AttentionOptions o;
    o.shape = s;
    o.mask.causal = true;
    o.mask.key_padding = attn::Bytes(pad.data(), pad.size());
    o.fill = static_cast<attn::MaskFill>(c % 3);
    switch (c) {
      case 0:
        in.v[7 * 6 + 2] = nan;
        break;  // a padded key's value: must not leak
      case 1:
        in.q[3 * 5] = inf;
        break;  // one query row goes NaN
      case 2:
        in.k[20 * 5 + 1] = nan;
        break;  // a key seen by rows 20.. only
      case 3:
        in.q[4 * 5] = 1e20f, in.k[2 * 5] = 1e20f;
        break;  // a score overflows to inf
      case 4:
        in.v[30 * 6] = 3e38f, in.v[31 * 6] = 3e38f;
        break;  // values sum past FLT_MAX
    }
    INFO("case " << c);
    if (attn::detail::kSimdKernels) {
      CHECK_FALSE(attn::detail::simd_eligible(in.q.data(), in.k.data(), in.v.data(), o, 1.f));
    }
    Worst worst;
    compare_with_scalar(in, o, true, &worst);
    compare_with_scalar(in, o, false, &worst);
  }
}

TEST_CASE("simd - the input scan finds NaN, Inf and large values at every position",
          "[wasm][simd][nonfinite]") {
  // q holds 37 floats: the scan's 16-wide blocks, its 4-wide step and its scalar tail.
  const Shape s{1, 1, 37, 1, 1, 1};
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), 2e30f, -2e30f};
  std::vector<float> q(37, 0.5f), k(1, 0.25f), v(1, 1.f);
  AttentionOptions o;
  o.shape = s;
  if (!attn::detail::kSimdKernels) return;
  CHECK(attn::detail::simd_eligible(q.data(), k.data(), v.data(), o, 1.f));
  for (float x : bad) {
    for (std::size_t i = 0; i < q.size(); ++i) {
      std::vector<float> qq = q;
      qq[i] = x;
      INFO("value " << x << " at " << i);
      CHECK_FALSE(attn::detail::simd_eligible(qq.data(), k.data(), v.data(), o, 1.f));
    }
  }
}
