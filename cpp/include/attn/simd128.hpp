// The WebAssembly SIMD128 intrinsics (wasm_*, v128_t) for the core's and the trainer's float32
// kernels, so one source serves both builds (internal: included by sources only, never by another
// public header). Under -msimd128: the compiler's <wasm_simd128.h>. Natively with ATTN_SIMDE
// (CMake's ATTN_NATIVE_SIMD, on where Debian's libsimde-dev is installed): SIMDe's
// implementation of the same intrinsics, lane for lane the same bits (SSE2 on x86-64, NEON on
// arm64; the core is built with -ffp-contract=off so no multiply and add is fused). Defines
// ATTN_SIMD128 when either applies and ATTN_SCALAR is not set.
#pragma once

#if !defined(ATTN_SCALAR) && defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTN_SIMD128 1
#elif !defined(ATTN_SCALAR) && defined(ATTN_SIMDE)
#include <cstdint>
// The wasm_* names as aliases of SIMDe's simde_wasm_* (this header's aliases only, not SIMDe's
// x86 or NEON ones), so the kernels keep the intrinsics' own names.
#define SIMDE_WASM_SIMD128_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#define ATTN_SIMD128 1
// SIMDe 0.7.4 lacks u32x4.extract_lane; it is i32x4.extract_lane's lane read as unsigned.
#ifndef wasm_u32x4_extract_lane
#define wasm_u32x4_extract_lane(a, lane) \
  static_cast<std::uint32_t>(wasm_i32x4_extract_lane((a), (lane)))
#endif
// SIMDe 0.7.4's f32x4.nearest rounds each lane with simde_math_roundevenf: a libm call per lane
// with gcc, and with clang 14 (no __builtin_roundevenf) a fallback that turns -0.5 into +0, where
// the spec says -0. This is the spec's round-half-even on four lanes in SSE2/NEON operations:
// |x| < 2^23 is rounded by adding and subtracting 2^23 (the default rounding mode, which the
// project never changes), then the sign is put back; |x| >= 2^23 (integers), infinities and NaN
// come back as they are.
namespace attn::detail::simd128 {
inline v128_t nearest(v128_t x) {
  const v128_t sign = wasm_i32x4_splat(INT32_MIN), two23 = wasm_f32x4_splat(8388608.f);
  const v128_t ax = wasm_v128_andnot(x, sign);
  const v128_t r =
      wasm_v128_or(wasm_f32x4_sub(wasm_f32x4_add(ax, two23), two23), wasm_v128_and(x, sign));
  return wasm_v128_bitselect(r, x, wasm_f32x4_lt(ax, two23));
}
}  // namespace attn::detail::simd128
#undef wasm_f32x4_nearest
#define wasm_f32x4_nearest(a) attn::detail::simd128::nearest(a)
#endif
