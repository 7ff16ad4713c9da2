#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "attn/aligned.hpp"

namespace {

bool on_cache_line(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}

}  // namespace

TEST_CASE("aligned - every block starts on a cache line, whatever was allocated before") {
  // Blocks of odd sizes in between, so a plain malloc (8-byte blocks in wasm) would be off.
  std::vector<std::vector<char>> noise;
  std::vector<attn::AlignedFloats> kept;
  for (std::size_t n : {1u, 3u, 17u, 64u, 1000u, 4096u, 4099u}) {
    noise.emplace_back(n * 3 + 5);
    kept.emplace_back(n);
    CHECK(on_cache_line(kept.back().data()));
  }
}

TEST_CASE("aligned - zero-initialised, and aligned again after growing, copying and moving") {
  attn::AlignedFloats a(37);
  for (float x : a) CHECK(x == 0.f);
  a.resize(10000, 1.5f);
  CHECK(on_cache_line(a.data()));
  CHECK(a[36] == 0.f);
  CHECK(a[9999] == 1.5f);
  attn::AlignedFloats b = a;
  CHECK(on_cache_line(b.data()));
  CHECK(b == a);
  attn::AlignedVector<double> d(5, 2.0);
  CHECK(on_cache_line(d.data()));
  const attn::AlignedFloats moved = std::move(b);
  CHECK(on_cache_line(moved.data()));
  CHECK(moved.size() == 10000);
}
