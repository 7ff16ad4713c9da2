#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "attn/tr/schedule.hpp"
#include "fixtures.hpp"

namespace {

attn::tr::LrSchedule schedule_of(const fixtures::json& c) {
  attn::tr::LrSchedule s;
  s.lr = c.at("lr");
  s.warmup = c.at("warmup");
  s.steps = c.at("steps");
  s.warmup_start = c.at("warmupStart");
  s.final_lr_frac = c.at("finalLrFrac");
  return s;
}

}  // namespace

// Tolerance: torch's LinearLR and CosineAnnealingLR compute each lr from the previous one
// (lr_k = lr_{k-1} * ratio), so rounding accumulates over the steps, while lr_at is the closed
// form. Near the end of the cosine, 1 + cos(x) cancels (x near pi), and both forms lose
// digits there. Measured over the fixture's cases (3000 steps the longest): at most 5.5e-14 of
// the peak (the long case; the short ones 1e-16 .. 2e-15). The bound 1e-11 * peak leaves room
// for another libm's cos and longer runs, and is still far below any lr difference that
// changes a float32 AdamW step.
TEST_CASE("lr_at matches torch's SequentialLR(LinearLR, CosineAnnealingLR)", "[schedule]") {
  const auto fx = fixtures::load("schedule.json");
  REQUIRE(fx.at("cases").size() >= 6);
  double worst = 0;
  for (const auto& c : fx.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const auto s = schedule_of(c);
    REQUIRE(attn::tr::validate_schedule(s).ok());
    std::size_t k = 0;
    REQUIRE(c.at("lrs").size() == s.steps + 5);
    for (const auto& want : c.at("lrs")) {
      INFO("step " << k);
      const double got = attn::tr::lr_at(s, k);
      const double d = std::abs(got - want.get<double>()) / s.lr;
      worst = std::max(worst, d);
      CHECK(d <= 1e-11);
      ++k;
    }
  }
  WARN("max |lr_at - torch| / peak " << worst);
}

TEST_CASE("lr_at: warmup start, peak at the milestone, floor at the end", "[schedule]") {
  attn::tr::LrSchedule s;
  s.lr = 2e-3;
  s.warmup = 4;
  s.steps = 12;
  s.warmup_start = 0.25;
  s.final_lr_frac = 0.1;
  REQUIRE(attn::tr::validate_schedule(s).ok());
  CHECK(attn::tr::lr_at(s, 0) == 0.25 * 2e-3);
  CHECK(attn::tr::lr_at(s, 4) == 2e-3);
  CHECK(std::abs(attn::tr::lr_at(s, 12) - 2e-4) < 1e-18);
  for (std::size_t k = 1; k < 12; ++k) {
    INFO(k);
    if (k <= 4)
      CHECK(attn::tr::lr_at(s, k) > attn::tr::lr_at(s, k - 1));
    else
      CHECK(attn::tr::lr_at(s, k) < attn::tr::lr_at(s, k - 1));
  }
}

TEST_CASE("validate_schedule names the flag at fault", "[schedule]") {
  const auto field = [](auto change) {
    attn::tr::LrSchedule s;
    s.steps = 10;
    change(&s);
    return attn::tr::validate_schedule(s).field;
  };
  using S = attn::tr::LrSchedule;
  CHECK(field([](S*) {}).empty());
  CHECK(field([](S* s) { s->lr = 0; }) == "lr");
  CHECK(field([](S* s) { s->lr = std::nan(""); }) == "lr");
  CHECK(field([](S* s) { s->steps = 0; }) == "steps");
  CHECK(field([](S* s) { s->warmup = 10; }) == "warmup");
  CHECK(field([](S* s) { s->warmup = 9; }).empty());
  CHECK(field([](S* s) { s->warmup_start = 0; }) == "warmup-start");
  CHECK(field([](S* s) { s->warmup_start = 1.5; }) == "warmup-start");
  CHECK(field([](S* s) { s->final_lr_frac = -0.1; }) == "final-lr-frac");
  CHECK(field([](S* s) { s->final_lr_frac = 1.01; }) == "final-lr-frac");
}
