// Overflow-checked size arithmetic for argument validation, shared by the core and the
// training library (attn::detail: helpers, not part of the attention API).
#pragma once

#include <cstddef>
#include <initializer_list>

namespace attn::detail {

// Product of the factors, or false if it overflows size_t.
inline bool checked_product(std::initializer_list<std::size_t> factors, std::size_t* out) {
  std::size_t p = 1;
  for (std::size_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return false;
  }
  *out = p;
  return true;
}

inline bool checked_add(std::size_t a, std::size_t b, std::size_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// Saturating versions for estimates: an overflow becomes SIZE_MAX, which any cap rejects.
inline std::size_t sat_mul(std::size_t a, std::size_t b) {
  std::size_t r;
  return __builtin_mul_overflow(a, b, &r) ? static_cast<std::size_t>(-1) : r;
}
inline std::size_t sat_add(std::size_t a, std::size_t b) {
  std::size_t r;
  return __builtin_add_overflow(a, b, &r) ? static_cast<std::size_t>(-1) : r;
}

}  // namespace attn::detail
