// Byte counts in error messages: one formatter for every entry point of the core and the
// training library (public so attn_train, which sees only cpp/include, uses it too), so a small
// request never reads "0 MiB".
#pragma once

#include <cstddef>
#include <string>

namespace attn::detail {

// "123 bytes" below 1 MiB, else whole MiB rounded up; SIZE_MAX (a saturated estimate)
// reads "more than the address space".
inline std::string bytes_text(std::size_t bytes) {
  if (bytes == static_cast<std::size_t>(-1)) return "more than the address space";
  if (bytes < (std::size_t{1} << 20)) return std::to_string(bytes) + " bytes";
  return std::to_string((bytes + (std::size_t{1} << 20) - 1) >> 20) + " MiB";
}

}  // namespace attn::detail
