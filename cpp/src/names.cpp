#include "attn/names.hpp"

#include <cstring>
#include <iterator>

namespace attn {

namespace {

// In enum order: a name's index is its enum value.
constexpr const char* kNormalizers[] = {"softmax", "softmax1", "sigmoid", "relu", "linear"};
constexpr const char* kPositions[] = {"none", "rope", "alibi"};
constexpr const char* kMaskModes[] = {"before", "after"};
constexpr const char* kPrecisions[] = {"float32", "float64", "float16"};
constexpr const char* kMaskFills[] = {"neg_inf", "finite", "zero"};
constexpr const char* kKernels[] = {"naive", "tiled"};

// Each table has its list's count (names.hpp); the units that own the enums check the counts
// against them (variants.cpp, validate.cpp), so this unit includes no vocabulary and no
// include circle runs through it.
static_assert(std::size(kNormalizers) == kNormalizerCount);
static_assert(std::size(kPositions) == kPositionCount);
static_assert(std::size(kMaskModes) == kMaskModeCount);
static_assert(std::size(kPrecisions) == kPrecisionCount);
static_assert(std::size(kMaskFills) == kMaskFillCount);
static_assert(std::size(kKernels) == kKernelCount);

constexpr NameList kNormalizerList{"normalizer", kNormalizers, std::size(kNormalizers)};
constexpr NameList kPositionList{"position", kPositions, std::size(kPositions)};
constexpr NameList kMaskModeList{"maskMode", kMaskModes, std::size(kMaskModes)};
constexpr NameList kPrecisionList{"precision", kPrecisions, std::size(kPrecisions)};
constexpr NameList kMaskFillList{"maskFill", kMaskFills, std::size(kMaskFills)};
constexpr NameList kKernelList{"kernel", kKernels, std::size(kKernels)};
constexpr const NameList* kAll[] = {&kNormalizerList, &kPositionList, &kMaskModeList,
                                    &kPrecisionList,  &kMaskFillList, &kKernelList};
static_assert(std::size(kAll) == kNameListCount);

}  // namespace

int NameList::find(const char* name) const {
  if (!name) return -1;
  for (std::size_t i = 0; i < size; ++i) {
    if (std::strcmp(name, names[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

std::string must_be_text(const char* option, const char* const* names, std::size_t n) {
  std::string s = std::string(option) + " must be ";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? " or " : ", ";
    s += "'" + std::string(names[i]) + "'";
  }
  return s;
}

std::string NameList::must_be() const {
  return must_be_text(option, names, size);
}

std::string NameList::must_be(const std::string& got) const {
  return must_be() + " (got '" + got + "')";
}

const NameList& normalizer_names() {
  return kNormalizerList;
}
const NameList& position_names() {
  return kPositionList;
}
const NameList& mask_mode_names() {
  return kMaskModeList;
}
const NameList& precision_names() {
  return kPrecisionList;
}
const NameList& mask_fill_names() {
  return kMaskFillList;
}
const NameList& kernel_names() {
  return kKernelList;
}
const NameList* const* all_name_lists() {
  return kAll;
}

}  // namespace attn
