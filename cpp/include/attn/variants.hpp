// Attention variants: the lines of the computation a variant replaces, as options.
//
// Per head h, query i, key j; i' = i + (T_k - T_q) is the query's position on the key axis (the
// bottom-right alignment the masks use); allowed(i, j) is the combined mask.
//
//   qkNorm      q <- q / max(|q|_2, 1e-12), k likewise, per row, before everything below
//   position    rope:  rotate each pair (2p, 2p+1) of q (position i') and k (position j) by
//                      pos * ropeBase^(-2p/d_k)
//               alibi: s_ij += -m_h * |i' - j|, Press et al.'s slopes for H query heads
//   normalizer  softmax:  e^(s - m) / sum_allowed e^(s - m)
//               softmax1: e^(s - m') / (e^(-m') + sum_allowed e^(s - m')), m' = max(0, max s)
//                         (a virtual key with score 0 and value 0)
//               sigmoid:  sigma(s + b), b = sigmoidBias, default -ln T_k, no row normalisation
//               relu:     max(s, 0) / T_k
//               linear:   phi(q).phi(k) / (sum_allowed phi(q).phi(k) + 1e-6), phi = elu + 1,
//                         scale not applied
//   maxShift    false: m = m' = 0 (softmax and softmax1 only), so exp overflows to inf
//   maskMode    after: normalise over all T_k keys, then zero the forbidden weights
//   precision   float16: emulated IEEE binary16 (see round_to_half and docs/numerics.md)
//
// The defaults are today's softmax attention, bit for bit: a call whose Variant has
// needs_variant_kernel() false runs the original kernels.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace attn {

enum class Normalizer { kSoftmax, kSoftmax1, kSigmoid, kRelu, kLinear };
enum class Position { kNone, kRope, kAlibi };
enum class MaskMode { kBefore, kAfter };
// The JS API's dtype. In C++ the element type T of attention<T> is the arithmetic: kFloat32
// means "as T" (the default, also for attention<double>), kFloat64 requires T = double, and
// kFloat16 runs the emulated binary16 kernel (T = float only).
enum class Precision { kFloat32, kFloat64, kFloat16 };

inline constexpr double kDefaultRopeBase = 10000;
inline constexpr double kQkNormEps = 1e-12;  // qkNorm's floor on a row's norm
inline constexpr double kLinearEps = 1e-6;   // linear attention's denominator term

struct Variant {
  bool qk_norm = false;
  Position position = Position::kNone;
  double rope_base = kDefaultRopeBase;  // > 0 and finite; checked even when position != rope
  Normalizer normalizer = Normalizer::kSoftmax;
  std::optional<double> sigmoid_bias;  // unset: -ln T_k; finite when set (checked always)
  bool max_shift = true;
  MaskMode mask_mode = MaskMode::kBefore;
  Precision precision = Precision::kFloat32;

  // Whether any option changes the computation (the original kernels run otherwise).
  bool needs_variant_kernel() const {
    return qk_norm || position != Position::kNone || normalizer != Normalizer::kSoftmax ||
           !max_shift || mask_mode != MaskMode::kBefore || precision == Precision::kFloat16;
  }
  // Whether the kernels work on transformed copies of q and k: qkNorm, RoPE and linear's
  // feature map rewrite them.
  bool transforms_qk() const {
    return qk_norm || position == Position::kRope || normalizer == Normalizer::kLinear;
  }
};

// Names as the JS API spells them; parse_* return false for anything else.
bool parse_normalizer(const char* name, Normalizer* out);
bool parse_position(const char* name, Position* out);
bool parse_mask_mode(const char* name, MaskMode* out);
bool parse_precision(const char* name, Precision* out);
const char* normalizer_name(Normalizer n);
const char* position_name(Position p);
const char* mask_mode_name(MaskMode m);
const char* precision_name(Precision p);

// ALiBi slope m_h of query head h among `heads` (Press et al., their get_slopes): for a power
// of two n, m_h = 2^(-8(h+1)/n); otherwise the slopes of the closest lower power of two n,
// then every other slope of 2n (the first heads - n of them).
std::vector<double> alibi_slopes(std::size_t heads);

// The sigmoid bias a call uses: sigmoidBias or -ln T_k (T_k keys, not the number allowed).
double effective_sigmoid_bias(const Variant& v, std::size_t tk);

// h(x): x rounded to the nearest IEEE binary16 value (ties to even), returned as a float.
// Overflow gives +-inf (|x| >= 65520), values below 2^-24 / 2 round to a signed zero, NaN stays
// NaN. Written out because neither GCC's nor Emscripten's clang 14 _Float16 is available on
// both targets; tests/cpp/test_variants.cpp checks it against NumPy's float16 casts.
float round_to_half(float x);

}  // namespace attn
