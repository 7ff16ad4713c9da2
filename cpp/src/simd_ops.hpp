// WebAssembly SIMD128 primitives of the float32 kernels (internal header): loads, stores,
// arithmetic, the multiply-add (fused only in the relaxed-SIMD build) and the vectorised exp and
// exp2. Defines ATTN_HAVE_SIMD when the build has the SIMD128 intrinsics (wasm, or natively
// through SIMDe: attn/simd128.hpp) and not ATTN_SCALAR; empty otherwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

#include "attn/simd128.hpp"

#ifdef ATTN_SIMD128
#define ATTN_HAVE_SIMD 1
#endif

// Keeps a kernel loop rolled where clang compiles it (wasm, the ASan build); gcc does not unroll
// these loops at -O3 and does not know the pragma.
#ifdef __clang__
#define ATTN_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define ATTN_NO_UNROLL
#endif

#ifdef ATTN_HAVE_SIMD

namespace attn::detail::simd {

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
inline constexpr float kMinExp2Arg = -127.f;
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

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2 = 0.693147180559945309f;

}  // namespace attn::detail::simd

#endif  // ATTN_HAVE_SIMD
