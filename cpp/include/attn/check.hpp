// A live self-check of the kernels on the caller's own inputs, for the page's Check readout:
// how far the float32 kernel (SIMD128 in the browser module) is from the float64 scalar
// kernel, and how far the tiled kernel is from the naive one, each with the tolerance the
// test suites hold it to.
//
// Tolerances (u = 2^-24, the float32 unit roundoff; S = the largest finite |scaled score| of
// the call, from the float64 run; M = max(1, max |v|)):
//   float32 vs float64 (output and weights):  2e-5 + 4 u S M
//   tiled vs naive, both float32 (output):    1e-5 + 4 u S M
// 2e-5 and 1e-5 are the bounds every oracle test uses for ordinary inputs (tests/js/README.md,
// tests/cpp/test_tiled.cpp: measured errors are below 1e-6). The u S M term is the float32
// rounding of the scores themselves (docs/numerics.md): a score s carries an error of a few
// u |s|, a weight inherits it as a relative error, an output row times |v|. NaN must meet NaN
// (else the difference is +inf); equal infinities count as 0.
#pragma once

#include <cstddef>

#include "attn/attention.hpp"

namespace attn {

struct KernelCheck {
  double f32_vs_f64 = 0;          // max |float32 naive - float64 naive| over output and weights
  double f32_vs_f64_tol = 0;      // 2e-5 + 4 u S M
  double tiled_vs_naive = 0;      // max |float32 tiled - float32 naive| over the output
  double tiled_vs_naive_tol = 0;  // 1e-5 + 4 u S M
  double max_abs_score = 0;       // S
  double max_abs_v = 0;           // max |v| (finite values)
  bool simd = false;              // the float32 runs took the SIMD128 kernels
  bool ok() const { return f32_vs_f64 <= f32_vs_f64_tol && tiled_vs_naive <= tiled_vs_naive_tol; }
};

// Runs the float32 naive, float64 naive (inputs widened exactly) and float32 tiled kernels
// with `opts` and compares them. Validated like attention(); the three runs together must fit
// opts.memory_cap (field "memory" otherwise).
Status check_kernels(const float* q, std::size_t q_len, const float* k, std::size_t k_len,
                     const float* v, std::size_t v_len, const AttentionOptions& opts,
                     KernelCheck* out);

// The unit roundoff and the two tolerances' constant parts, for documentation and the UI.
inline constexpr double kCheckUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
inline constexpr double kCheckF32VsF64Abs = 2e-5;
inline constexpr double kCheckTiledVsNaiveAbs = 1e-5;

}  // namespace attn
