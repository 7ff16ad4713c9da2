#include "attn/numpy_rng.hpp"

#include <cmath>

#include "ziggurat_tables.hpp"

namespace attn {

namespace {

// SeedSequence's hash constants (NumPy bit_generator.pyx).
constexpr std::uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u;
constexpr std::uint32_t kInitB = 0x8b51f9ddu, kMultB = 0x58f38dedu;
constexpr std::uint32_t kMixMultL = 0xca01f9ddu, kMixMultR = 0x4973f715u;
constexpr unsigned kXShift = 16;
constexpr std::size_t kPoolSize = 4;

// PCG's default 128-bit multiplier, as (high, low).
constexpr std::uint64_t kMulHi = 0x2360ED051FC65DA4ull, kMulLo = 0x4385DF649FCCF645ull;

// The ziggurat's tail start r and 1/r (NumPy's ziggurat_nor_r, ziggurat_nor_inv_r).
constexpr double kZigR = 3.6541528853610087963519472518;
constexpr double kZigInvR = 0.27366123732975827203338247596;

// Full 64 x 64 -> 128-bit product from 32-bit halves.
void mul_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t* hi, std::uint64_t* lo) {
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *lo = (mid << 32) | (p00 & 0xffffffffu);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// (hi:lo) <- (hi:lo) * (mhi:mlo) + (ahi:alo) mod 2^128.
void muladd_128(std::uint64_t* hi, std::uint64_t* lo, std::uint64_t mhi, std::uint64_t mlo,
                std::uint64_t ahi, std::uint64_t alo) {
  std::uint64_t phi, plo;
  mul_64x64(*lo, mlo, &phi, &plo);
  phi += *hi * mlo + *lo * mhi;  // the cross terms land in the high word only (mod 2^128)
  const std::uint64_t sum_lo = plo + alo;
  *hi = phi + ahi + (sum_lo < plo ? 1 : 0);
  *lo = sum_lo;
}

std::uint32_t hashmix(std::uint32_t value, std::uint32_t* hash_const) {
  value ^= *hash_const;
  *hash_const *= kMultA;
  value *= *hash_const;
  return value ^ (value >> kXShift);
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t r = kMixMultL * x - kMixMultR * y;
  return r ^ (r >> kXShift);
}

}  // namespace

void numpy_seed_sequence(std::uint64_t seed, std::uint32_t* out, std::size_t n_words) {
  // Pass 1: the seed as 32-bit words, least significant first (0 is the one word 0).
  std::uint32_t entropy[2] = {static_cast<std::uint32_t>(seed),
                              static_cast<std::uint32_t>(seed >> 32)};
  const std::size_t n_entropy = (seed >> 32) != 0 ? 2 : 1;
  // Pass 2: hash the entropy into the pool (missing words hash as 0), then mix every
  // pool word into every other so late words affect early ones.
  std::uint32_t pool[kPoolSize];
  std::uint32_t hc = kInitA;
  for (std::size_t i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < n_entropy ? entropy[i] : 0, &hc);
  for (std::size_t src = 0; src < kPoolSize; ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], &hc));
    }
  }
  // (A seed has at most 2 words < kPoolSize, so there is no leftover entropy to mix.)
  // Pass 3: generate_state hashes the pool out cyclically with its own constant.
  std::uint32_t hb = kInitB;
  for (std::size_t i = 0; i < n_words; ++i) {
    std::uint32_t v = pool[i % kPoolSize] ^ hb;
    hb *= kMultB;
    v *= hb;
    out[i] = v ^ (v >> kXShift);
  }
}

NumpyRng::NumpyRng(std::uint64_t seed) {
  // generate_state(4, uint64): little-endian pairs of 32-bit words -> s0, s1, i0, i1.
  std::uint32_t w[8];
  numpy_seed_sequence(seed, w, 8);
  auto word = [&w](int k) { return (std::uint64_t{w[2 * k + 1]} << 32) | w[2 * k]; };
  const std::uint64_t init_hi = word(0), init_lo = word(1);
  // inc = (initseq << 1) | 1, initseq = i0:i1
  inc_hi_ = (word(2) << 1) | (word(3) >> 63);
  inc_lo_ = (word(3) << 1) | 1u;
  // PCG seeding: state = 0; step; state += initstate; step.
  hi_ = lo_ = 0;
  step();
  const std::uint64_t lo = lo_ + init_lo;
  hi_ += init_hi + (lo < lo_ ? 1 : 0);
  lo_ = lo;
  step();
}

void NumpyRng::step() {
  muladd_128(&hi_, &lo_, kMulHi, kMulLo, inc_hi_, inc_lo_);
}

std::uint64_t NumpyRng::next_u64() {
  step();
  // XSL RR: xor the halves, rotate right by the top 6 bits of the state.
  const std::uint64_t x = hi_ ^ lo_;
  const unsigned rot = static_cast<unsigned>(hi_ >> 58);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

double NumpyRng::random() {
  return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

double NumpyRng::standard_normal() {
  using detail::kZigguratFi;
  using detail::kZigguratKi;
  using detail::kZigguratWi;
  for (;;) {
    // One word: layer = low 8 bits, then a sign bit, then 52 bits of rabs.
    std::uint64_t r = next_u64();
    const int idx = static_cast<int>(r & 0xff);
    r >>= 8;
    const bool negative = (r & 1) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffull;
    double x = static_cast<double>(rabs) * kZigguratWi[idx];
    if (negative) x = -x;
    if (rabs < kZigguratKi[idx]) return x;  // inside the layer's rectangle
    if (idx == 0) {
      // Tail beyond r (Marsaglia's method), with 1 - U so log never sees 0.
      for (;;) {
        const double xx = -kZigInvR * std::log1p(-random());
        const double yy = -std::log1p(-random());
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(kZigR + xx) : kZigR + xx;
      }
    }
    // Wedge between layers idx-1 and idx: accept under the density.
    if ((kZigguratFi[idx - 1] - kZigguratFi[idx]) * random() + kZigguratFi[idx] <
        std::exp(-0.5 * x * x)) {
      return x;
    }
  }
}

}  // namespace attn
