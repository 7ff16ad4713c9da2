// Diagnostics recomputed from a finished result (internal).
#pragma once

#include <cmath>
#include <cstddef>

#include "attn/types.hpp"

namespace attn::detail {

// Diagnostics::nan_rows is defined by what the result holds: a (head, query) row counts if
// its weights (when materialised) or its output hold a NaN. Kernels count NaN rows as they
// go, but a policy-defined row (e.g. 'finite', whose fully masked output is the mean of every
// value, NaN included) can hold a NaN they did not count; the entry points recount here so
// every kernel reports the same, checkable number. Costs one pass over weights and output.
// (A SIMD kernel's own count is exact and skips this; see run_attention in dispatch.cpp.)

// Whether p[0..n) holds a NaN: branch-free (x != x), so the compiler vectorises it.
template <class T>
bool any_nan(const T* p, std::size_t n) {
  unsigned nan = 0;
  for (std::size_t j = 0; j < n; ++j) nan |= p[j] != p[j];
  return nan != 0;
}

template <class T>
std::size_t count_nan_rows(const AttentionResult<T>& r, std::size_t rows) {
  const std::size_t tk = rows ? r.weights.size() / rows : 0;
  const std::size_t dv = rows ? r.output.size() / rows : 0;
  std::size_t n = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    n += any_nan(r.weights.data() + row * tk, tk) || any_nan(r.output.data() + row * dv, dv);
  }
  return n;
}

}  // namespace attn::detail
