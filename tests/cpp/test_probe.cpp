#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attn/tr/probe.hpp"
#include "attn/tr/trainer.hpp"
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

// every_role: compare every head's role, also those the oracle marks as close to a boundary
// (float64 only; a float32 forward may flip them).
template <class T>
void check_probe_fixture(double tol, bool every_role, const char* label) {
  const auto fx = fixtures::load("probe.json");
  REQUIRE(fx.at("cases").size() >= 4);
  double worst_ce = 0, worst_w = 0;
  std::size_t texts = 0, role_checks = 0;
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
      const double e = probe_rel_diff(ts.induction, fixtures::vec<double>(tx.at("induction")));
      worst_w = std::max({worst_w, a, b, d, e});
      CHECK(a <= tol);
      CHECK(b <= tol);
      CHECK(d <= tol);
      CHECK(e <= tol);
      const auto roles = tx.at("roles").get<std::vector<std::string>>();
      const auto close = tx.at("roleClose").get<std::vector<bool>>();
      REQUIRE(roles.size() == ts.previous.size());
      REQUIRE(close.size() == roles.size());
      for (std::size_t i = 0; i < roles.size(); ++i) {
        if (close[i] && !every_role) continue;
        INFO("head " << i);
        CHECK(attn::tr::head_role_name(attn::tr::head_role(ts, i)) == roles[i]);
        ++role_checks;
      }
      ++texts;
    }
  }
  CHECK(texts >= 5);
  CHECK(role_checks >= 30);
  WARN(label << ": max |delta| cross-entropy " << worst_ce << " (relative), head scores "
             << worst_w);
}

}  // namespace

TEST_CASE("probe - tokens and scores match the NumPy oracle in float64", "[probe][oracle]") {
  check_probe_fixture<double>(1e-10, true, "probe float64 vs NumPy");
}

TEST_CASE("probe - tokens and scores match the NumPy oracle in float32", "[probe][oracle]") {
  check_probe_fixture<float>(2e-5, false, "probe float32 vs NumPy");
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

TEST_CASE("probe - head roles: the rule on the oracle's chosen scores, the names, NaN",
          "[probe][oracle]") {
  const auto fx = fixtures::load("probe.json");
  const auto& r = fx.at("roles");
  const auto& names = attn::tr::head_role_names();
  REQUIRE(r.at("names").size() == names.size);
  REQUIRE(names.size == attn::tr::kHeadRoleCount);
  for (std::size_t i = 0; i < names.size; ++i) {
    CHECK(r.at("names")[i].get<std::string>() == names[i]);
    CHECK(attn::tr::head_role_name(static_cast<attn::tr::HeadRole>(i)) == std::string(names[i]));
  }
  CHECK(r.at("threshold").get<double>() == attn::tr::kRoleThreshold);
  REQUIRE(r.at("cases").size() >= 8);
  for (const auto& c : r.at("cases")) {
    const auto q = c.at("scores").get<std::vector<double>>();
    INFO(q[0] << " " << q[1] << " " << q[2] << " " << q[3]);
    CHECK(attn::tr::head_role_name(attn::tr::head_role(q[0], q[1], q[2], q[3])) ==
          c.at("role").get<std::string>());
  }
  // A NaN score never wins; all NaN is mixed.
  const double nan = std::nan("");
  CHECK(attn::tr::head_role(nan, 0.5, 0.1, 0.1) == attn::tr::HeadRole::kInduction);
  CHECK(attn::tr::head_role(0.1, nan, 0.1, 0.7) == attn::tr::HeadRole::kFirstToken);
  CHECK(attn::tr::head_role(nan, nan, nan, nan) == attn::tr::HeadRole::kMixed);
  // The scores of a TextHeadScores by index l*H + h.
  attn::tr::TextHeadScores ts;
  ts.previous = {0.9, 0.1};
  ts.induction = {0.0, 0.2};
  ts.duplicate = {0.0, 0.6};
  ts.first = {0.0, 0.1};
  CHECK(attn::tr::head_role(ts, 0) == attn::tr::HeadRole::kPreviousToken);
  CHECK(attn::tr::head_role(ts, 1) == attn::tr::HeadRole::kDuplicateToken);
}

TEST_CASE("probe - Trainer::text_scores: the trainer's weights and ablations, its errors",
          "[probe]") {
  attn::tr::TrainerConfig tc;
  tc.task = attn::tr::Task::kRandom;
  tc.model.vocab = 12;
  tc.model.seq_len = 16;
  tc.model.d_model = 8;
  tc.model.init_std = 0.7;
  tc.batch = 2;
  std::unique_ptr<attn::tr::Trainer> t;
  REQUIRE(attn::tr::Trainer::create(tc, nullptr, &t).ok());
  const std::vector<std::int32_t> text = {1, 2, 3, 1, 2, 3, 4, 1, 2, 5, 4};
  const std::size_t LH = tc.model.layers * tc.model.heads;
  attn::tr::TextHeadScores a, b, want;
  attn::tr::Workspace<float> ws;
  REQUIRE(t->text_scores(text, &a).ok());
  REQUIRE(attn::tr::text_head_scores(tc.model, t->params().data(), text.data(), text.size(),
                                     nullptr, &ws, &want)
              .ok());
  CHECK(a.previous == want.previous);
  CHECK(a.induction == want.induction);
  CHECK(a.duplicate == want.duplicate);
  CHECK(a.first == want.first);
  REQUIRE(a.induction.size() == LH);
  // Ablating head (0, 0): layer 0's weights stay, layer 1's move (they read layer 0's output).
  REQUIRE(t->set_ablation(0, 0, true).ok());
  REQUIRE(t->text_scores(text, &b).ok());
  std::vector<std::uint8_t> abl(LH, 0);
  abl[0] = 1;
  REQUIRE(attn::tr::text_head_scores(tc.model, t->params().data(), text.data(), text.size(),
                                     abl.data(), &ws, &want)
              .ok());
  CHECK(b.induction == want.induction);
  CHECK(b.previous == want.previous);
  const std::size_t H = tc.model.heads;
  for (std::size_t i = 0; i < H; ++i) CHECK(b.induction[i] == a.induction[i]);
  bool moved = false;
  for (std::size_t i = H; i < LH; ++i) moved = moved || b.induction[i] != a.induction[i];
  CHECK(moved);
  CHECK(t->text_scores({1}, &b).field == "tokens");
  CHECK(t->text_scores({}, &b).field == "tokens");
  CHECK(t->text_scores(std::vector<std::int32_t>(17, 1), &b).field == "tokens");
  CHECK(t->text_scores({1, 12}, &b).field == "tokens");
  CHECK(t->text_scores({-1, 2}, &b).field == "tokens");
  REQUIRE(t->text_scores(text, &b).ok());  // still usable
}

TEST_CASE(
    "probe - Trainer::text_loss and probe_batch with a knocked-out head match the NumPy oracle",
    "[probe][oracle]") {
  const auto fx = fixtures::load("probe.json");
  double worst = 0;
  for (const auto& c : fx.at("cases")) {
    const std::string name = c.at("name");
    INFO(name);
    const auto& ab = c.at("ablated");
    attn::tr::TrainerConfig tc;
    tc.task = attn::tr::Task::kRandom;
    tc.model = model_fx::config(c);
    tc.batch = 1;
    const auto p = model_fx::flat<float>(c.at("params"), true);
    std::unique_ptr<attn::tr::Trainer> t;
    REQUIRE(attn::tr::Trainer::create(tc, &p, &t).ok());
    const auto windows = ab.at("windows").get<std::vector<std::int32_t>>();
    const auto rel = [](double a, double b) {
      return std::abs(a - b) / std::max(1.0, std::abs(b));
    };
    double loss = 0;
    REQUIRE(t->text_loss(windows, &loss).ok());
    CHECK(rel(loss, ab.at("windowLoss")) <= 2e-5);
    worst = std::max(worst, rel(loss, ab.at("windowLoss")));
    // Knock out head (0, 0): the loss and the probe's scores move as NumPy's do. 37 probe rows:
    // three forwards of Trainer::kTextChunk rows.
    REQUIRE(t->set_ablation(0, 0, true).ok());
    REQUIRE(t->text_loss(windows, &loss).ok());
    CHECK(rel(loss, ab.at("windowLossAblated")) <= 2e-5);
    worst = std::max(worst, rel(loss, ab.at("windowLossAblated")));
    std::vector<std::int32_t> probe;
    REQUIRE(attn::tr::make_probe(tc.model, c.at("candidates").get<std::vector<std::int32_t>>(),
                                 ab.at("probeRows"), c.at("seed").get<std::uint64_t>(), &probe)
                .ok());
    attn::tr::ProbeScores s;
    REQUIRE(t->probe_batch(probe, &s).ok());
    CHECK(rel(s.in_context, ab.at("inContext")) <= 2e-5);
    CHECK(rel(s.ce_first, ab.at("ceFirst")) <= 2e-5);
    CHECK(probe_rel_diff(s.induction, fixtures::vec<double>(ab.at("induction"))) <= 2e-5);
    CHECK(probe_rel_diff(s.previous, fixtures::vec<double>(ab.at("previous"))) <= 2e-5);
    worst = std::max(worst, rel(s.in_context, ab.at("inContext")));
    // Errors: a partial window, a partial probe row, an id outside the vocabulary.
    CHECK(t->text_loss({}, &loss).field == "windows");
    CHECK(
        t->text_loss(std::vector<std::int32_t>(windows.begin(), windows.end() - 1), &loss).field ==
        "windows");
    auto bad = windows;
    bad[3] = static_cast<std::int32_t>(tc.model.vocab);
    CHECK_FALSE(t->text_loss(bad, &loss).ok());
    CHECK(t->probe_batch(std::vector<std::int32_t>(probe.begin(), probe.end() - 1), &s).field ==
          "probe");
    auto badp = probe;
    badp[0] = -1;
    CHECK_FALSE(t->probe_batch(badp, &s).ok());
    REQUIRE(t->text_loss(windows, &loss).ok());  // still usable
  }
  WARN("Trainer::text_loss / probe_batch (float32) vs NumPy: max relative delta " << worst);
}
