#include "attn/row_ops.hpp"

#include "kernels.hpp"
#include "simd_kernels.hpp"

namespace attn::row {

float dot(const float* a, const float* b, std::size_t n) {
  return detail::dot(a, b, n);
}

void axpy(float a, const float* x, float* y, std::size_t n) {
  detail::axpy(a, x, y, n);
}

void exp(const float* x, float* y, std::size_t n, bool nonpositive) {
  detail::exp_f32(x, y, n, nonpositive);
}

}  // namespace attn::row
