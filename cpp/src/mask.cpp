#include "attn/mask.hpp"

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

}  // namespace attn
