#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "attn/tr/interp.hpp"
#include "model_fixtures.hpp"

namespace {

template <class T>
void run(double tol, const char* label) {
  const auto fx = fixtures::load("model.json");
  REQUIRE(fx.at("interp").size() >= 2);
  double worst = 0;
  for (const auto& c : fx.at("interp")) {
    INFO(c.at("name").get<std::string>());
    const auto cfg = model_fx::config(c);
    const auto p = model_fx::flat<T>(c.at("params"), true);
    const auto tok = model_fx::tokens(c);
    const auto mask = model_fx::mask(c);
    const std::size_t B = c.at("batch");
    attn::tr::Workspace<T> ws;
    attn::tr::HeadScores hs;
    REQUIRE(attn::tr::head_scores(cfg, p.data(), tok.data(), B, tok.data(), mask.data(), B,
                                  static_cast<const std::uint8_t*>(nullptr), &ws, &hs)
                .ok());
    auto cmp = [&](const std::vector<double>& got, const char* key) {
      const auto want = fixtures::vec<double>(c.at(key));
      REQUIRE(got.size() == want.size());
      // Relative to the largest expected value: ablation losses are ~3-5 nats, and float32
      // losses through 3 layers of near-one-hot attention keep ~1e-5 relative accuracy.
      double mag = 1;
      for (double x : want) mag = std::max(mag, std::abs(x));
      const double d = fixtures::max_abs_diff(got.data(), want.data(), want.size()) / mag;
      INFO(key);
      CHECK(d <= tol);
      worst = std::max(worst, d);
    };
    cmp(hs.previous_token, "previousToken");
    cmp(hs.induction, "induction");
    cmp(hs.duplicate_token, "duplicateToken");
    cmp(hs.ablation_loss, "ablationLoss");
    cmp(hs.k_composition, "kComposition");
    CHECK(std::abs(hs.loss - c.at("loss").get<double>()) <= tol * std::max(1.0, hs.loss));
    double loss = 0, acc = 0;
    REQUIRE(attn::tr::evaluate_batch(cfg, p.data(), tok.data(), mask.data(), B,
                                     static_cast<const std::uint8_t*>(nullptr), &ws, &loss, &acc)
                .ok());
    CHECK(acc == Approx(c.at("accuracy").get<double>()).margin(1e-12));
  }
  WARN(label << ": max |delta| / max(1, max |expected|) over pattern scores, ablation losses, "
                "K-composition: "
             << worst);
}

}  // namespace

TEST_CASE("interp - scores, ablation and K-composition match the PyTorch/NumPy oracle",
          "[interp][oracle]") {
  run<double>(1e-9, "interp float64");
  run<float>(5e-5, "interp float32");
}

TEST_CASE("interp - each ablation loss is evaluate_batch's with that head zeroed, bit for bit",
          "[interp]") {
  // head_scores reruns only the layers at and above an ablated head (and, with the naive
  // kernel, takes the base loss from the probe's forward); the numbers must not move by a bit.
  const auto fx = fixtures::load("model.json");
  for (const auto& c : fx.at("interp")) {
    for (const auto kernel : {attn::Kernel::kNaive, attn::Kernel::kTiled}) {
      for (const bool pre : {false, true}) {
        INFO(c.at("name").get<std::string>()
             << (kernel == attn::Kernel::kTiled ? " tiled" : " naive")
             << (pre ? ", layer 1 head 1 ablated before" : ""));
        auto cfg = model_fx::config(c);
        cfg.kernel = kernel;
        const auto p = model_fx::flat<float>(c.at("params"), true);
        const auto tok = model_fx::tokens(c);
        const auto mask = model_fx::mask(c);
        const std::size_t B = c.at("batch"), LH = cfg.layers * cfg.heads;
        REQUIRE(cfg.layers >= 2);
        std::vector<std::uint8_t> base(LH, 0);
        if (pre) base[0] = 1;
        attn::tr::Workspace<float> ws;
        attn::tr::HeadScores hs;
        REQUIRE(attn::tr::head_scores(cfg, p.data(), tok.data(), B, tok.data(), mask.data(), B,
                                      base.data(), &ws, &hs)
                    .ok());
        attn::tr::Workspace<float> fresh;
        double loss = 0, acc = 0;
        REQUIRE(attn::tr::evaluate_batch(cfg, p.data(), tok.data(), mask.data(), B, base.data(),
                                         &fresh, &loss, &acc)
                    .ok());
        CHECK(hs.loss == loss);
        for (std::size_t i = 0; i < LH; ++i) {
          auto abl = base;
          abl[i] = 1;
          REQUIRE(attn::tr::evaluate_batch(cfg, p.data(), tok.data(), mask.data(), B, abl.data(),
                                           &fresh, &loss, &acc)
                      .ok());
          INFO("head " << i);
          CHECK(hs.ablation_loss[i] == loss);
        }
      }
    }
  }
}
