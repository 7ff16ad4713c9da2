#include "attn/mask.hpp"

#include <algorithm>
#include <cstring>

namespace attn {

bool parse_mask_fill(const char* name, MaskFill* out) {
  if (!name) return false;
  if (std::strcmp(name, "neg_inf") == 0) {
    *out = MaskFill::kNegInf;
  } else if (std::strcmp(name, "finite") == 0) {
    *out = MaskFill::kFinite;
  } else if (std::strcmp(name, "zero") == 0) {
    *out = MaskFill::kZero;
  } else {
    return false;
  }
  return true;
}

const char* mask_fill_name(MaskFill fill) {
  switch (fill) {
    case MaskFill::kNegInf:
      return "neg_inf";
    case MaskFill::kFinite:
      return "finite";
    case MaskFill::kZero:
      return "zero";
  }
  return "?";
}

KeyRange key_range(const MaskSpec& m, std::size_t i, std::size_t tq, std::size_t tk) {
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

}  // namespace attn
