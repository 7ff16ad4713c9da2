#include <catch2/catch.hpp>

#include "attn/dropout.hpp"

TEST_CASE("dropout - p = 0 keeps every cell", "[dropout]") {
  for (std::size_t j = 0; j < 1000; ++j) CHECK(attn::dropout_keep(7, 0, 3, j, 0.0));
}
