// The names each option takes, as the JS API spells them: one table per list, in its enum's
// order (a name's index is the enum's value), and the error message an unknown name gets. The
// parse_* and *_name functions of variants.hpp read these tables; the JS glue and the page get
// the same lists from here (core.names), so no list is spelled out twice.
#pragma once

#include <cstddef>
#include <string>

namespace attn {

struct NameList {
  const char* option;        // the option's name in the JS API, e.g. "normalizer"
  const char* const* names;  // in enum order
  std::size_t size;

  const char* operator[](std::size_t i) const { return names[i]; }
  // The index of `name` (its enum value), or -1 for anything else, nullptr included.
  int find(const char* name) const;
  // "normalizer must be 'softmax', 'softmax1', 'sigmoid', 'relu' or 'linear'".
  std::string must_be() const;
  // The same with " (got 'x')" appended.
  std::string must_be(const std::string& got) const;
};

const NameList& normalizer_names();  // Normalizer (variants.hpp)
const NameList& position_names();    // Position (variants.hpp)
const NameList& mask_mode_names();   // MaskMode (variants.hpp)
const NameList& precision_names();   // Precision (variants.hpp)
const NameList& mask_fill_names();   // MaskFill (mask.hpp), option "maskFill"
const NameList& kernel_names();      // Kernel (backward.hpp): naive, tiled

// How many names each list holds: its enum's last value + 1 (checked where the enums live).
inline constexpr std::size_t kNormalizerCount = 5;
inline constexpr std::size_t kPositionCount = 3;
inline constexpr std::size_t kMaskModeCount = 2;
inline constexpr std::size_t kPrecisionCount = 3;
inline constexpr std::size_t kMaskFillCount = 3;
inline constexpr std::size_t kKernelCount = 2;

// Every list above, for the JS API's core.names.
inline constexpr std::size_t kNameListCount = 6;
const NameList* const* all_name_lists();

// "option must be 'a', 'b' or 'c'" for any list of names (a list with one entry: "must be 'a'").
std::string must_be_text(const char* option, const char* const* names, std::size_t n);

// name -> enum through a list: false (out untouched) for an unknown name.
template <class E>
bool parse_name(const NameList& list, const char* name, E* out) {
  const int i = list.find(name);
  if (i < 0) return false;
  *out = static_cast<E>(i);
  return true;
}

// An enum's value as a list position (the float32 fast path passes them so): false when out of
// range or not a whole number.
template <class E>
bool enum_at(const NameList& list, double index, E* out) {
  if (!(index >= 0 && index < static_cast<double>(list.size))) return false;
  const std::size_t i = static_cast<std::size_t>(index);
  if (static_cast<double>(i) != index) return false;
  *out = static_cast<E>(i);
  return true;
}

}  // namespace attn
