#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/tr/probe.hpp"
#include "model_fixtures.hpp"

using attn::tr::ModelConfig;

namespace {

// Largest |a - b| relative to max(1, max |b|) of the expected values.
double probe_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double big = 1;
  for (double x : b) big = std::max(big, std::abs(x));
  return fixtures::max_abs_diff(a.data(), b.data(), a.size()) / big;
}

template <class T>
void check_probe_fixture(double tol, const char* label) {
  const auto fx = fixtures::load("probe.json");
  REQUIRE(fx.at("cases").size() >= 4);
  double worst_ce = 0, worst_w = 0;
  std::size_t texts = 0;
  for (const auto& c : fx.at("cases")) {
    const std::string name = c.at("name");
    INFO(name);
    const ModelConfig cfg = model_fx::config(c);
    REQUIRE(attn::tr::validate_model(cfg, 1).ok());
    const auto p = model_fx::flat<T>(c.at("params"), true);
    REQUIRE(p.size() == attn::tr::param_layout(cfg).total);
    const std::size_t count = c.at("count");
    // The probe tokens: the documented draws, exactly.
    std::vector<std::int32_t> probe;
    REQUIRE(attn::tr::make_probe(cfg, c.at("candidates").get<std::vector<std::int32_t>>(), count,
                                 c.at("seed").get<std::uint64_t>(), &probe)
                .ok());
    const std::size_t n = attn::tr::probe_length(cfg.seq_len);
    REQUIRE(probe.size() == count * 2 * n);
    CHECK(probe == c.at("probe").get<std::vector<std::int32_t>>());

    attn::tr::Workspace<T> ws;
    attn::tr::ProbeScores s;
    REQUIRE(attn::tr::probe_scores(cfg, p.data(), probe.data(), count, nullptr, &ws, &s).ok());
    const double ce1 = c.at("ceFirst"), ce2 = c.at("ceSecond"), ic = c.at("inContext");
    const double big = std::max({1.0, std::abs(ce1), std::abs(ce2)});
    const double dce = std::max({std::abs(s.ce_first - ce1), std::abs(s.ce_second - ce2),
                                 std::abs(s.in_context - ic)}) /
                       big;
    worst_ce = std::max(worst_ce, dce);
    CHECK(dce <= tol);
    const double di = probe_rel_diff(s.induction, fixtures::vec<double>(c.at("induction")));
    const double dp = probe_rel_diff(s.previous, fixtures::vec<double>(c.at("previous")));
    worst_w = std::max({worst_w, di, dp});
    CHECK(di <= tol);
    CHECK(dp <= tol);

    for (const auto& tx : c.at("texts")) {
      const auto tok = tx.at("tokens").get<std::vector<std::int32_t>>();
      attn::tr::TextHeadScores ts;
      REQUIRE(attn::tr::text_head_scores(cfg, p.data(), tok.data(), tok.size(), nullptr, &ws, &ts)
                  .ok());
      const double a = probe_rel_diff(ts.previous, fixtures::vec<double>(tx.at("previous")));
      const double b = probe_rel_diff(ts.duplicate, fixtures::vec<double>(tx.at("duplicate")));
      const double d = probe_rel_diff(ts.first, fixtures::vec<double>(tx.at("first")));
      worst_w = std::max({worst_w, a, b, d});
      CHECK(a <= tol);
      CHECK(b <= tol);
      CHECK(d <= tol);
      ++texts;
    }
  }
  CHECK(texts >= 5);
  WARN(label << ": max |delta| cross-entropy " << worst_ce << " (relative), head scores "
             << worst_w);
}

}  // namespace

TEST_CASE("probe - tokens and scores match the NumPy oracle in float64", "[probe][oracle]") {
  check_probe_fixture<double>(1e-10, "probe float64 vs NumPy");
}

TEST_CASE("probe - tokens and scores match the NumPy oracle in float32", "[probe][oracle]") {
  check_probe_fixture<float>(2e-5, "probe float32 vs NumPy");
}

TEST_CASE("probe - the length, the repeat, and the refused arguments", "[probe][errors]") {
  CHECK(attn::tr::probe_length(4) == 2);
  CHECK(attn::tr::probe_length(9) == 4);
  CHECK(attn::tr::probe_length(100) == 50);
  CHECK(attn::tr::probe_length(4096) == 50);
  ModelConfig c;
  c.vocab = 10;
  c.seq_len = 13;
  std::vector<std::int32_t> tok;
  REQUIRE(attn::tr::make_probe(c, {7, 2, 5}, 4, 3, &tok).ok());
  const std::size_t n = 6;
  REQUIRE(tok.size() == 4 * 2 * n);
  for (std::size_t b = 0; b < 4; ++b)
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(tok[b * 2 * n + i] == tok[b * 2 * n + n + i]);
      const std::int32_t x = tok[b * 2 * n + i];
      CHECK((x == 7 || x == 2 || x == 5));
    }
  // One candidate: every token is it.
  REQUIRE(attn::tr::make_probe(c, {9}, 2, 3, &tok).ok());
  for (std::int32_t x : tok) CHECK(x == 9);
  CHECK(attn::tr::make_probe(c, {}, 4, 3, &tok).field == "candidates");
  CHECK(attn::tr::make_probe(c, {1, 10}, 4, 3, &tok).field == "candidates");
  CHECK(attn::tr::make_probe(c, {1, -1}, 4, 3, &tok).field == "candidates");
  CHECK(attn::tr::make_probe(c, {1}, 0, 3, &tok).field == "count");
  ModelConfig tiny = c;
  tiny.seq_len = 3;
  CHECK(attn::tr::make_probe(tiny, {1}, 1, 3, &tok).field == "seqLen");

  std::vector<float> p(attn::tr::param_layout(c).total);
  attn::tr::init_params(c, 1, p.data());
  attn::tr::Workspace<float> ws;
  attn::tr::ProbeScores s;
  attn::tr::TextHeadScores ts;
  CHECK(attn::tr::probe_scores(tiny, p.data(), tok.data(), 1, nullptr, &ws, &s).field == "seqLen");
  REQUIRE(attn::tr::make_probe(c, {1, 2, 3}, 2, 3, &tok).ok());
  CHECK(attn::tr::probe_scores(c, p.data(), tok.data(), 0, nullptr, &ws, &s).field == "count");
  const std::vector<std::int32_t> text = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2};
  CHECK(attn::tr::text_head_scores(c, p.data(), text.data(), 1, nullptr, &ws, &ts).field ==
        "tokens");
  CHECK(attn::tr::text_head_scores(c, p.data(), text.data(), 14, nullptr, &ws, &ts).field ==
        "tokens");  // longer than seqLen 13
  std::vector<std::int32_t> bad = text;
  bad[3] = 10;
  CHECK(attn::tr::text_head_scores(c, p.data(), bad.data(), 13, nullptr, &ws, &ts).field ==
        "tokens");
}

TEST_CASE("probe - an ablated head still forms its weights; scores are per layer x head",
          "[probe]") {
  // Ablating head (1, 0) zeroes its output after its attention: its own and layer 0's weights
  // are unchanged, the loss moves (the second layer's output is part of the logits).
  ModelConfig c;
  c.vocab = 12;
  c.seq_len = 16;
  c.d_model = 8;
  c.init_std = 0.7;
  c.shortformer = true;
  std::vector<double> p(attn::tr::param_layout(c).total);
  attn::tr::init_params(c, 4, p.data());
  std::vector<std::int32_t> probe;
  REQUIRE(attn::tr::make_probe(c, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 8, &probe).ok());
  attn::tr::Workspace<double> ws;
  attn::tr::ProbeScores a, b;
  REQUIRE(attn::tr::probe_scores(c, p.data(), probe.data(), 3, nullptr, &ws, &a).ok());
  const std::vector<std::uint8_t> abl = {0, 0, 1, 0};
  REQUIRE(attn::tr::probe_scores(c, p.data(), probe.data(), 3, abl.data(), &ws, &b).ok());
  REQUIRE(a.induction.size() == 4);
  CHECK(a.induction == b.induction);
  CHECK(a.previous == b.previous);
  CHECK(a.in_context != b.in_context);
}
