// attn::pattern_scores (attn/roles.hpp): hand-made weight patterns whose scores are known
// exactly; the NumPy oracle's scores of trained heads are checked in test_interp.cpp (through the
// trainer) and, for the page's module, in tests/js/roles.test.mjs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "attn/roles.hpp"

TEST_CASE("roles - hand-made patterns score 1 and 0", "[roles]") {
  // One sequence [a b c a b c], one head. Previous-token weights: row i puts 1 on i-1.
  const std::size_t t = 6;
  const std::vector<std::int32_t> tok = {0, 1, 2, 0, 1, 2};
  std::vector<double> prev(t * t, 0.0), ind(t * t, 0.0);
  prev[0] = 1;
  ind[0] = 1;
  for (std::size_t i = 1; i < t; ++i) prev[i * t + i - 1] = 1;
  // Induction weights: rows 3..5 attend to the key after the earlier occurrence (i - 2);
  // rows 1, 2 attend to themselves.
  for (std::size_t i = 1; i < t; ++i) ind[i * t + (i >= 3 ? i - 2 : i)] = 1;
  double p[1], in[1], d[1];
  attn::pattern_scores(tok.data(), 1, t, 1, prev.data(), p, in, d);
  CHECK(p[0] == 1.0);
  CHECK(in[0] == 0.0);
  CHECK(d[0] == 0.0);
  attn::pattern_scores(tok.data(), 1, t, 1, ind.data(), p, in, d);
  CHECK(in[0] == 1.0);
  CHECK(p[0] == 0.0);  // no row puts weight on i - 1
  CHECK(d[0] == 0.0);
}

TEST_CASE("roles - a duplicate-token head, a split row, a batch and float", "[roles]") {
  // [a b a b], one head: rows 2 and 3 put 0.75 on the earlier same token and 0.25 on themselves.
  const std::size_t t = 4;
  const std::vector<std::int32_t> tok = {0, 1, 0, 1, 5, 6, 7, 8};
  std::vector<float> w(2 * t * t, 0.f);
  w[0] = 1;
  w[1 * t + 1] = 1;
  w[2 * t + 0] = 0.75f;
  w[2 * t + 2] = 0.25f;
  w[3 * t + 1] = 0.75f;
  w[3 * t + 3] = 0.25f;
  // The second sequence has no repeated token (no duplicate or induction row: skipped there),
  // and its rows put everything on the previous token.
  float* b = w.data() + t * t;
  b[0] = 1;
  for (std::size_t i = 1; i < t; ++i) b[i * t + i - 1] = 1;
  double p[1], in[1], d[1];
  attn::pattern_scores(tok.data(), 2, t, 1, w.data(), p, in, d);
  CHECK(d[0] == Approx(0.75));
  // Induction cells: row 2 → key 1, row 3 → key 2: no weight there.
  CHECK(in[0] == 0.0);
  // Previous token: 0 in the first sequence (rows 1…3 put nothing on i - 1), 1 in the second.
  CHECK(p[0] == Approx(0.5));
}
