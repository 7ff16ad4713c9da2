// Cache-line-aligned vectors for the buffers the SIMD loops read as f32x4 (the kernels'
// scratch, the training's packed weights).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace attn {

// std::allocator through operator new with a 64-byte alignment. Emscripten's malloc returns
// 8-byte-aligned blocks, so a plain std::vector<float> puts the kernels' f32x4 loads and
// stores at an 8-byte offset half the time, and a quarter of those then straddle two cache
// lines (what that costs the P·V step: docs/performance.md).
template <class T>
struct CacheAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAligned() = default;
  template <class U>
  CacheAligned(const CacheAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const CacheAligned<U>&) const {
    return false;
  }
};

// A std::vector whose data starts on a cache line (zero-initialised like std::vector).
template <class T>
using AlignedVector = std::vector<T, CacheAligned<T>>;
using AlignedFloats = AlignedVector<float>;

}  // namespace attn
