// Which keys a query may attend to. Every mask kind is combined with logical AND.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace attn {

// What a forbidden score becomes before the softmax.
enum class MaskFill {
  kNegInf,  // true -inf: exact zeros, but a fully masked row turns into NaN (the lesson's warning)
  kFinite,  // -1e9 as in the lesson's NumPy code: a fully masked row becomes uniform 1/T_k
  kZero,    // -inf for normal rows; a fully masked row gets all-zero weights and a zero output
};

// The score a forbidden position receives under MaskFill::kFinite.
inline constexpr double kFiniteMaskValue = -1e9;

// A borrowed byte buffer with its element count. Masks carry their lengths, so attn::validate
// checks them at every entry point (a short buffer is an error, never an out-of-bounds read).
// Null data = no such mask; a non-null buffer of the wrong size (0 included) is rejected.
struct Bytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  Bytes() = default;
  Bytes(std::nullptr_t) {}  // NOLINT: "no mask" reads best as = nullptr
  Bytes(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  explicit operator bool() const { return data != nullptr; }
  std::uint8_t operator[](std::size_t i) const { return data[i]; }
};

// Parse "neg_inf" | "finite" | "zero"; returns false for anything else.
bool parse_mask_fill(const char* name, MaskFill* out);
const char* mask_fill_name(MaskFill fill);

struct MaskSpec {
  // Causal, bottom-right aligned: query i sees key j iff j <= i + (T_k - T_q).
  bool causal = false;
  // Sliding window of width w (0 = off): key j allowed iff j > i + (T_k - T_q) - w.
  std::size_t window = 0;
  // key_padding: (T_k,) 1 = real token, 0 = padding; broadcast over queries. nullptr = none.
  Bytes key_padding;
  // mask: (T_q, T_k) row-major, 1 = allowed. nullptr = none.
  Bytes mask;
};

// The contiguous key range [lo, hi) that causal + window allow for query i;
// padding and the custom mask then thin it out element by element. Kernels use
// the range to skip work (and whole tiles) that the mask forbids anyway.
struct KeyRange {
  std::size_t lo, hi;
};
// Inline: the kernels call it for every query row of every tile.
inline KeyRange key_range(const MaskSpec& m, std::size_t i, std::size_t tq, std::size_t tk) {
  // Signed arithmetic: the diagonal offset T_k - T_q is negative when T_q > T_k.
  const long long diag = static_cast<long long>(i) + static_cast<long long>(tk) -
                         static_cast<long long>(tq);  // last key causal allows
  long long lo = 0, hi = static_cast<long long>(tk);
  if (m.causal) hi = std::min(hi, diag + 1);
  // A window of T_k or more allows every key (diag < T_k); skipping it also keeps a huge
  // size_t window from turning negative in the signed arithmetic.
  if (m.window > 0 && m.window < tk) lo = std::max(lo, diag - static_cast<long long>(m.window) + 1);
  if (hi < lo) hi = lo;
  lo = std::clamp<long long>(lo, 0, static_cast<long long>(tk));
  hi = std::clamp<long long>(hi, 0, static_cast<long long>(tk));
  return {static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)};
}

inline bool is_allowed(const MaskSpec& m, std::size_t i, std::size_t j, std::size_t tq,
                       std::size_t tk) {
  const KeyRange r = key_range(m, i, tq, tk);
  if (j < r.lo || j >= r.hi) return false;
  if (m.key_padding && !m.key_padding[j]) return false;
  if (m.mask && !m.mask[i * tk + j]) return false;
  return true;
}

}  // namespace attn
