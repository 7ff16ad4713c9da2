#include <catch2/catch.hpp>

#include "attn/rng.hpp"
#include "fixtures.hpp"

TEST_CASE("rng - SplitMix64 words and uniforms and normals match the Python re-implementation",
          "[rng][oracle]") {
  const auto fx = fixtures::load("examples.json").at("rng").at("seeds");
  REQUIRE(fx.size() >= 2);
  for (const auto& c : fx) {
    const auto seed =
        std::stoull(c.at("seed").is_string() ? c.at("seed").get<std::string>()
                                             : std::to_string(c.at("seed").get<std::uint64_t>()));
    INFO("seed " << seed);
    attn::Rng a(seed), b(seed), n(seed);
    for (const auto& w : c.at("u64")) CHECK(a.next_u64() == std::stoull(w.get<std::string>()));
    for (const auto& u : c.at("uniform")) CHECK(b.uniform() == u.get<double>());
    for (const auto& z : c.at("normal"))
      CHECK(n.normal() == Approx(z.get<double>()).epsilon(1e-13));
  }
}

TEST_CASE("rng - different seeds give different streams and uniforms lie in the unit interval",
          "[rng]") {
  attn::Rng a(1), b(2);
  CHECK(a.next_u64() != b.next_u64());
  attn::Rng u(3);
  for (int i = 0; i < 10000; ++i) {
    const double x = u.uniform();
    REQUIRE(x >= 0.0);
    REQUIRE(x < 1.0);
  }
}
