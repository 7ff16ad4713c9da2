// Row operations of the attention kernels, public for the training library's decoder (one
// query row against a KV cache), so it needs none of the core's private kernel headers.
// The same code the kernels run: the same summation order and, in wasm SIMD128 builds, the
// same vectorised exp.
#pragma once

#include <cstddef>

namespace attn::row {

// a . b over n floats, summed with four interleaved accumulators ((s0 + s1) + (s2 + s3)).
float dot(const float* a, const float* b, std::size_t n);

// y += a * x over n floats.
void axpy(float a, const float* x, float* y, std::size_t n);

// y[i] = exp(x[i]) (may alias): the kernels' vectorised exp in wasm SIMD128 builds,
// std::exp otherwise. nonpositive: every x[i] <= 0 (or -inf), which allows the short form.
void exp(const float* x, float* y, std::size_t n, bool nonpositive = false);

}  // namespace attn::row
