// NumpyRng against NumPy 1.24's own default_rng stream (tests/fixtures/numpy_rng.json,
// written by tests/oracle/gen_numpy_rng.py). Every comparison is on the bits.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attn/numpy_rng.hpp"
#include "fixtures.hpp"

namespace {

std::uint64_t u64_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// repr() of a double parses back to the same double (strtod rounds correctly).
double json_exact(const fixtures::json& j) {
  return std::strtod(j.get<std::string>().c_str(), nullptr);
}

std::uint64_t seed_of(const fixtures::json& s) {
  return std::stoull(s.at("seed").get<std::string>());
}

// The fixture's digest: FNV-1a over 64-bit words.
struct Fnv {
  std::uint64_t h = 0xCBF29CE484222325ull;
  void add(std::uint64_t w) { h = (h ^ w) * 0x100000001B3ull; }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
  }
};

const fixtures::json& streams() {
  static const fixtures::json fx = fixtures::load("numpy_rng.json");
  return fx.at("streams");
}

}  // namespace

TEST_CASE("numpy_rng - SeedSequence and PCG64 seeding give NumPy's 128-bit state and increment",
          "[numpy_rng][oracle]") {
  REQUIRE(streams().size() >= 4);
  for (const auto& s : streams()) {
    INFO("seed " << s.at("seed").get<std::string>());
    const auto st = attn::NumpyRng(seed_of(s)).state();
    char buf[65];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(st.state_hi),
                  static_cast<unsigned long long>(st.state_lo));
    CHECK(std::string(buf) == s.at("state").get<std::string>());
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(st.inc_hi),
                  static_cast<unsigned long long>(st.inc_lo));
    CHECK(std::string(buf) == s.at("inc").get<std::string>());
  }
}

TEST_CASE("numpy_rng - raw 64-bit words equal PCG64.random_raw", "[numpy_rng][oracle]") {
  for (const auto& s : streams()) {
    INFO("seed " << s.at("seed").get<std::string>());
    attn::NumpyRng g(seed_of(s));
    for (const auto& w : s.at("raw")) REQUIRE(g.next_u64() == std::stoull(w.get<std::string>()));
  }
}

TEST_CASE("numpy_rng - random() doubles are NumPy's bit for bit (10 000 per seed)",
          "[numpy_rng][oracle]") {
  for (const auto& s : streams()) {
    INFO("seed " << s.at("seed").get<std::string>());
    const auto& fx = s.at("random");
    attn::NumpyRng g(seed_of(s));
    Fnv d;
    const auto& first = fx.at("first");
    const std::size_t n = fx.at("count").get<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const double u = g.random();
      if (i < first.size()) REQUIRE(u64_bits(u) == u64_bits(json_exact(first[i])));
      REQUIRE(u >= 0.0);
      REQUIRE(u < 1.0);
      d.add(u64_bits(u));
    }
    CHECK(d.hex() == fx.at("digest").get<std::string>());
  }
}

TEST_CASE("numpy_rng - standard_normal is NumPy's ziggurat bit for bit (100 000 per seed)",
          "[numpy_rng][oracle]") {
  long total_tail = 0;
  for (const auto& s : streams()) {
    INFO("seed " << s.at("seed").get<std::string>());
    const auto& fx = s.at("normal");
    attn::NumpyRng g(seed_of(s));
    Fnv d;
    const auto& first = fx.at("first");
    const auto& checkpoints = fx.at("checkpoints");
    std::size_t next_cp = 0;
    long tail = 0;
    const std::size_t n = fx.at("count").get<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const double z = g.standard_normal();
      if (i < first.size()) REQUIRE(u64_bits(z) == u64_bits(json_exact(first[i])));
      if (next_cp < checkpoints.size() && checkpoints[next_cp][0].get<std::size_t>() == i) {
        INFO("draw " << i);
        REQUIRE(u64_bits(z) == u64_bits(json_exact(checkpoints[next_cp][1])));
        ++next_cp;
      }
      if (std::abs(z) > 3.6541528853610088) ++tail;
      d.add(u64_bits(z));
    }
    CHECK(next_cp == checkpoints.size());
    CHECK(tail == fx.at("tail").get<long>());
    CHECK(d.hex() == fx.at("digest").get<std::string>());
    total_tail += tail;
  }
  // The tail (log1p) path must have been exercised for the test to mean anything.
  CHECK(total_tail > 50);
}

TEST_CASE("numpy_rng - random() and standard_normal() interleaved share one stream",
          "[numpy_rng][oracle]") {
  for (const auto& s : streams()) {
    INFO("seed " << s.at("seed").get<std::string>());
    attn::NumpyRng g(seed_of(s));
    int i = 0;
    for (const auto& v : s.at("mixed")) {
      const double x = (i++ % 2 == 0) ? g.standard_normal() : g.random();
      REQUIRE(u64_bits(x) == u64_bits(json_exact(v)));
    }
  }
}

TEST_CASE("numpy_rng - SeedSequence words differ between neighbouring seeds", "[numpy_rng]") {
  std::uint32_t a[8], b[8];
  attn::numpy_seed_sequence(0, a, 8);
  attn::numpy_seed_sequence(1, b, 8);
  CHECK(std::memcmp(a, b, sizeof a) != 0);
  // A seed above 2^32 uses its high word: it must not collide with its low word alone.
  attn::numpy_seed_sequence((std::uint64_t{1} << 32) + 5, a, 8);
  attn::numpy_seed_sequence(5, b, 8);
  CHECK(std::memcmp(a, b, sizeof a) != 0);
}
