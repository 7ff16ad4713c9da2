#include "attn/mask.hpp"

#include "attn/names.hpp"

namespace attn {

// The names come from the one table (attn/names.hpp), in enum order.
bool parse_mask_fill(const char* name, MaskFill* out) {
  return parse_name(mask_fill_names(), name, out);
}

const char* mask_fill_name(MaskFill fill) {
  const std::size_t i = static_cast<std::size_t>(fill);
  return i < mask_fill_names().size ? mask_fill_names()[i] : "?";
}

}  // namespace attn
