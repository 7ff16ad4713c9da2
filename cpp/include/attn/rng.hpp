// A small, documented, portable random generator for the seeded examples.
//
// SplitMix64 (Steele, Lea, Flood 2014) gives 64-bit words; uniform() takes the top
// 53 bits; normal() uses the Box-Muller transform and returns both values of each
// pair in turn. The same sequence is easy to reproduce in any language (the NumPy
// oracle in tests/oracle re-implements it to check our examples). It does not
// match NumPy's default_rng bit stream, and does not try to.
#pragma once

#include <cmath>
#include <cstdint>

namespace attn {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Standard normal via Box-Muller: r = sqrt(-2 ln(1 - u1)), angle = 2 pi u2;
  // first r cos(angle), then r sin(angle).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(1.0 - u1));
    const double a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace attn
