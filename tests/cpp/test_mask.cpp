#include <catch2/catch.hpp>

#include "attn/mask.hpp"

using attn::key_range;
using attn::MaskSpec;

TEST_CASE("mask - causal with T_q = T_k is the lower triangle", "[mask]") {
  MaskSpec m;
  m.causal = true;
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) CHECK(attn::is_allowed(m, i, j, 5, 5) == (j <= i));
}

TEST_CASE("mask - causal is bottom-right aligned when T_q != T_k", "[mask]") {
  MaskSpec m;
  m.causal = true;
  // 2 queries over 5 keys (decoding the last 2 tokens): query 0 sees keys 0..3.
  CHECK(key_range(m, 0, 2, 5).hi == 4);
  CHECK(key_range(m, 1, 2, 5).hi == 5);
  // 5 queries over 2 keys: the first 3 queries see nothing.
  for (std::size_t i = 0; i < 3; ++i) CHECK(key_range(m, i, 5, 2).hi == key_range(m, i, 5, 2).lo);
  CHECK(key_range(m, 3, 5, 2).hi == 1);
  CHECK(key_range(m, 4, 5, 2).hi == 2);
}

TEST_CASE("mask - sliding window keeps the last w keys up to the diagonal", "[mask]") {
  MaskSpec m;
  m.causal = true;
  m.window = 3;
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 8; ++j)
      CHECK(attn::is_allowed(m, i, j, 8, 8) == (j <= i && j + 3 > i));
  // Window without causal: only the lower bound applies.
  m.causal = false;
  CHECK(attn::is_allowed(m, 2, 7, 8, 8));
  CHECK_FALSE(attn::is_allowed(m, 5, 2, 8, 8));
}

TEST_CASE("mask - padding and custom mask combine with AND", "[mask]") {
  const std::uint8_t pad[4] = {1, 1, 0, 1};
  const std::uint8_t custom[16] = {1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0};
  MaskSpec m;
  m.key_padding = {pad, 4};
  m.mask = {custom, 16};
  m.causal = true;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      CHECK(attn::is_allowed(m, i, j, 4, 4) == (j <= i && pad[j] && custom[i * 4 + j]));
}

TEST_CASE("mask - fill policy names parse and print", "[mask]") {
  attn::MaskFill f;
  for (const char* n : {"neg_inf", "finite", "zero"}) {
    REQUIRE(attn::parse_mask_fill(n, &f));
    CHECK(std::string(attn::mask_fill_name(f)) == n);
  }
  CHECK_FALSE(attn::parse_mask_fill("-inf", &f));
  CHECK_FALSE(attn::parse_mask_fill("", &f));
  CHECK_FALSE(attn::parse_mask_fill(nullptr, &f));
}
