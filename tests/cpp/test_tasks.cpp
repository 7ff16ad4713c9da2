#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "attn/tr/tasks.hpp"

using attn::tr::Task;

TEST_CASE("tasks - induction: [noise, s, s], distinct tokens, targets inside the second copy",
          "[tasks]") {
  const std::size_t B = 200, T = 32, V = 32, n = T / 2;
  std::vector<std::int32_t> tok(B * T);
  std::vector<std::uint8_t> mask(B * T);
  attn::Rng rng(1);
  attn::tr::sample_task(Task::kInduction, &rng, B, T, V, tok.data(), mask.data());
  std::set<std::size_t> lengths;
  for (std::size_t b = 0; b < B; ++b) {
    const std::int32_t* s = tok.data() + b * T;
    const std::uint8_t* m = mask.data() + b * T;
    // The repeat length: the number of targets + 1.
    std::size_t targets = 0;
    for (std::size_t i = 0; i < T; ++i) targets += m[i];
    const std::size_t L = targets + 1;
    REQUIRE(L >= (n + 1) / 2);
    REQUIRE(L <= n);
    lengths.insert(L);
    for (std::size_t i = 0; i < T; ++i) REQUIRE(m[i] == (i >= T - L + 1 ? 1 : 0));
    for (std::size_t i = 0; i < L; ++i) REQUIRE(s[T - L + i] == s[T - 2 * L + i]);
    std::set<std::int32_t> distinct(s, s + T - L);
    REQUIRE(distinct.size() == T - L);
    for (std::size_t i = 0; i < T; ++i) REQUIRE((s[i] >= 0 && s[i] < static_cast<int>(V)));
  }
  CHECK(lengths.size() == n - (n + 1) / 2 + 1);  // every length in U{8..16} occurs
}

TEST_CASE("tasks - induction-fixed is [s, s] with a fixed offset", "[tasks]") {
  const std::size_t B = 20, T = 10;
  std::vector<std::int32_t> tok(B * T);
  std::vector<std::uint8_t> mask(B * T);
  attn::Rng rng(2);
  attn::tr::sample_task(Task::kInductionFixed, &rng, B, T, 5, tok.data(), mask.data());
  for (std::size_t b = 0; b < B; ++b) {
    const std::int32_t* s = tok.data() + b * T;
    for (std::size_t i = 0; i < 5; ++i) REQUIRE(s[i + 5] == s[i]);
    REQUIRE(std::set<std::int32_t>(s, s + 5).size() == 5);
    for (std::size_t i = 0; i < T; ++i) REQUIRE(mask[b * T + i] == (i >= 6 ? 1 : 0));
  }
}

TEST_CASE("tasks - random: uniform tokens, every t >= 1 a target", "[tasks]") {
  const std::size_t B = 400, T = 16, V = 8;
  std::vector<std::int32_t> tok(B * T);
  std::vector<std::uint8_t> mask(B * T);
  attn::Rng rng(3);
  attn::tr::sample_task(Task::kRandom, &rng, B, T, V, tok.data(), mask.data());
  std::vector<std::size_t> count(V, 0);
  for (std::size_t i = 0; i < B * T; ++i) {
    count[static_cast<std::size_t>(tok[i])]++;
    REQUIRE(mask[i] == (i % T != 0 ? 1 : 0));
  }
  for (std::size_t c : count) CHECK(std::abs(static_cast<double>(c) - B * T / V) < 120);
}

TEST_CASE("tasks - same seed, same batch; another seed, another batch", "[tasks][determinism]") {
  std::vector<std::int32_t> a(64), b(64), c(64);
  std::vector<std::uint8_t> m(64);
  attn::Rng r1(9), r2(9), r3(10);
  attn::tr::sample_task(Task::kInduction, &r1, 2, 32, 32, a.data(), m.data());
  attn::tr::sample_task(Task::kInduction, &r2, 2, 32, 32, b.data(), m.data());
  attn::tr::sample_task(Task::kInduction, &r3, 2, 32, 32, c.data(), m.data());
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("tasks - names and validation", "[tasks][errors]") {
  Task t;
  CHECK(attn::tr::parse_task("induction-fixed", &t));
  CHECK(t == Task::kInductionFixed);
  CHECK_FALSE(attn::tr::parse_task("copy", &t));
  CHECK(attn::tr::validate_task(Task::kInduction, 32, 32).ok());
  CHECK(attn::tr::validate_task(Task::kInduction, 23, 32).field == "vocab");  // needs 24
  CHECK(attn::tr::validate_task(Task::kInduction, 32, 3).field == "seqLen");
  CHECK(attn::tr::validate_task(Task::kInductionFixed, 32, 31).field == "seqLen");  // [s, s]
  CHECK(attn::tr::validate_task(Task::kInductionFixed, 15, 32).field == "vocab");
  CHECK(attn::tr::validate_task(Task::kRandom, 2, 3).ok());
}

// Regression (found by the fuzz harness, trainer selector): with seqLen 4 (n = 2) the
// induction task drew copies of length ceil(n/2) = 1, which hold no target, so a batch of
// such sequences made train() fail with "lossMask selects no target".
TEST_CASE("tasks - induction with seqLen 4: every sequence has a target", "[tasks][errors]") {
  const std::size_t B = 64, T = 4, V = 3;
  REQUIRE(attn::tr::validate_task(Task::kInduction, V, T).ok());
  std::vector<std::int32_t> tok(B * T);
  std::vector<std::uint8_t> mask(B * T);
  attn::Rng rng(11);
  attn::tr::sample_task(Task::kInduction, &rng, B, T, V, tok.data(), mask.data());
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t targets = 0;
    for (std::size_t i = 0; i < T; ++i) targets += mask[b * T + i];
    REQUIRE(targets >= 1);
  }
}

// [noise, s, s] fits any T >= 4: an odd seqLen gives the noise one more token (n = floor(T/2)).
TEST_CASE("tasks - induction with an odd seqLen: [noise, s, s], the noise takes the odd token",
          "[tasks]") {
  for (std::size_t T : {5u, 7u, 9u, 31u}) {
    const std::size_t B = 200, n = T / 2, V = T - (n + 1) / 2;  // the smallest valid vocab
    INFO("T = " << T);
    CHECK(attn::tr::validate_task(Task::kInduction, V, T).ok());
    CHECK(attn::tr::validate_task(Task::kInduction, V - 1, T).field == "vocab");
    std::vector<std::int32_t> tok(B * T);
    std::vector<std::uint8_t> mask(B * T);
    attn::Rng rng(T);
    attn::tr::sample_task(Task::kInduction, &rng, B, T, V, tok.data(), mask.data());
    std::set<std::size_t> lengths;
    for (std::size_t b = 0; b < B; ++b) {
      const std::int32_t* s = tok.data() + b * T;
      const std::uint8_t* m = mask.data() + b * T;
      std::size_t targets = 0;
      for (std::size_t i = 0; i < T; ++i) targets += m[i];
      const std::size_t L = targets + 1;
      REQUIRE(L >= std::max<std::size_t>(2, (n + 1) / 2));
      REQUIRE(L <= n);
      REQUIRE(T - 2 * L >= 1);  // at least one noise token
      lengths.insert(L);
      for (std::size_t i = 0; i < T; ++i) REQUIRE(m[i] == (i >= T - L + 1 ? 1 : 0));
      for (std::size_t i = 0; i < L; ++i) REQUIRE(s[T - L + i] == s[T - 2 * L + i]);
      REQUIRE(std::set<std::int32_t>(s, s + T - L).size() == T - L);
      for (std::size_t i = 0; i < T; ++i) REQUIRE((s[i] >= 0 && s[i] < static_cast<int>(V)));
    }
    CHECK(lengths.size() == n - std::max<std::size_t>(2, (n + 1) / 2) + 1);
  }
}
