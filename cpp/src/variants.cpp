#include "attn/variants.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "attn/names.hpp"

namespace attn {

// names.hpp's lists end at these enums' last values.
static_assert(kNormalizerCount == static_cast<std::size_t>(Normalizer::kLinear) + 1);
static_assert(kPositionCount == static_cast<std::size_t>(Position::kAlibi) + 1);
static_assert(kMaskModeCount == static_cast<std::size_t>(MaskMode::kAfter) + 1);
static_assert(kPrecisionCount == static_cast<std::size_t>(Precision::kFloat16) + 1);

// The names live in one table per list (names.cpp); these read it.
bool parse_normalizer(const char* name, Normalizer* out) {
  return parse_name(normalizer_names(), name, out);
}
bool parse_position(const char* name, Position* out) {
  return parse_name(position_names(), name, out);
}
bool parse_mask_mode(const char* name, MaskMode* out) {
  return parse_name(mask_mode_names(), name, out);
}
bool parse_precision(const char* name, Precision* out) {
  return parse_name(precision_names(), name, out);
}
const char* normalizer_name(Normalizer n) {
  return normalizer_names()[static_cast<std::size_t>(n)];
}
const char* position_name(Position p) {
  return position_names()[static_cast<std::size_t>(p)];
}
const char* mask_mode_name(MaskMode m) {
  return mask_mode_names()[static_cast<std::size_t>(m)];
}
const char* precision_name(Precision p) {
  return precision_names()[static_cast<std::size_t>(p)];
}

std::vector<double> alibi_slopes(std::size_t heads) {
  // Slopes of a power of two n: 2^(-8/n), 2^(-16/n), ..., 2^(-8).
  auto power_of_two = [](std::size_t n) {
    std::vector<double> s(n);
    for (std::size_t h = 0; h < n; ++h) {
      s[h] = std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n));
    }
    return s;
  };
  if (heads == 0) return {};
  std::size_t n = 1;
  while (n * 2 <= heads) n *= 2;  // the closest power of two <= heads
  std::vector<double> s = power_of_two(n);
  if (n == heads) return s;
  const std::vector<double> twice = power_of_two(2 * n);
  for (std::size_t h = 0; s.size() < heads; h += 2) s.push_back(twice[h]);
  return s;
}

double effective_sigmoid_bias(const Variant& v, std::size_t tk) {
  return v.sigmoid_bias ? *v.sigmoid_bias : -std::log(static_cast<double>(tk));
}

float round_to_half(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t sign = u & 0x80000000u;
  std::uint32_t a = u ^ sign;  // |x| as bits
  float r;
  if (a >= 0x7f800000u) {
    return x;  // inf or NaN
  } else if (a >= 0x477ff000u) {
    // 65520 = 65504 + half an ulp: the tie rounds to even, i.e. up to 2^16, which overflows.
    r = INFINITY;
  } else if (a < 0x38800000u) {
    // Below 2^-14 binary16 is subnormal with a fixed quantum 2^-24: scaling by 2^24 is exact,
    // nearbyint rounds half to even (the default rounding mode), scaling back is exact.
    float ax;
    std::memcpy(&ax, &a, sizeof ax);
    r = std::nearbyint(ax * 16777216.0f) * (1.0f / 16777216.0f);
  } else {
    // Normal: keep 10 of float32's 23 fraction bits, rounding the 13 dropped ones to nearest,
    // ties to even (a carry into the exponent is the correct result).
    const std::uint32_t lsb = (a >> 13) & 1u;
    a = (a + 0x0fffu + lsb) & ~0x1fffu;
    std::memcpy(&r, &a, sizeof r);
  }
  std::uint32_t rb;
  std::memcpy(&rb, &r, sizeof rb);
  rb |= sign;
  std::memcpy(&r, &rb, sizeof r);
  return r;
}

}  // namespace attn
