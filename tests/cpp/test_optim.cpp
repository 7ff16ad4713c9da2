#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "attn/tr/optim.hpp"
#include "model_fixtures.hpp"

namespace {

template <class T>
void run_fixture(double tol, const char* label) {
  const auto fx = fixtures::load("model.json");
  REQUIRE(fx.at("adamw").size() >= 2);
  double worst = 0;
  for (const auto& c : fx.at("adamw")) {
    INFO(c.at("name").get<std::string>());
    const auto cfg = model_fx::config(c);
    auto p = model_fx::flat<T>(c.at("params"), true);
    const auto tok = model_fx::tokens(c);
    const auto mask = model_fx::mask(c);
    const auto& o = c.at("opt");
    attn::tr::AdamWConfig oc;
    oc.lr = o.at("lr");
    oc.beta1 = o.at("beta1");
    oc.beta2 = o.at("beta2");
    oc.eps = o.at("eps");
    oc.weight_decay = o.at("weightDecay");
    oc.clip = o.at("clip");
    attn::tr::AdamWState<T> state;
    attn::tr::Workspace<double> ws;
    std::vector<T> g(p.size());
    std::vector<double> pd(p.size()), gd(p.size());
    int k = 0;
    for (const auto& step : c.at("steps")) {
      INFO("step " << k++);
      double loss = 0;
      // Gradients in float64 at the current parameters (the model's float32 gradients are
      // tested in test_model.cpp): this isolates the optimiser's own arithmetic in type T.
      std::copy(p.begin(), p.end(), pd.begin());
      REQUIRE(attn::tr::forward_backward(cfg, pd.data(), tok.data(), mask.data(),
                                         c.at("batch").get<std::size_t>(), cfg.seq_len,
                                         attn::tr::RunOptions{}, &ws, gd.data(), &loss, nullptr)
                  .ok());
      std::copy(gd.begin(), gd.end(), g.begin());
      CHECK(std::abs(loss - step.at("loss").get<double>()) <= std::max(tol, 1e-6) * 10);
      const double norm = attn::tr::clip_grad_norm(g.data(), g.size(), oc.clip);
      CHECK(std::abs(norm - step.at("gradNorm").get<double>()) <= tol * 10 * norm);
      attn::tr::adamw_step(oc, p.data(), g.data(), g.size(), &state);
      const auto want = model_fx::flat<double>(step.at("params"), false);
      const double d = fixtures::max_abs_diff(p.data(), want.data(), want.size());
      worst = std::max(worst, d);
      CHECK(d <= tol);
    }
  }
  WARN(label << ": max |delta| parameters after AdamW steps " << worst);
}

}  // namespace

TEST_CASE("optim - two AdamW steps (decay, clipping) match torch.optim.AdamW in float64",
          "[optim][oracle]") {
  run_fixture<double>(1e-10, "AdamW float64 vs PyTorch");
}

TEST_CASE("optim - two AdamW steps match torch.optim.AdamW in float32", "[optim][oracle]") {
  // float32 AdamW arithmetic on float64 gradients: parameters of size ~1 within a few ulps.
  run_fixture<float>(2e-6, "AdamW float32 vs PyTorch");
}

TEST_CASE("optim - AdamW's first step moves every parameter by lr against its gradient sign",
          "[optim]") {
  // After one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps).
  std::vector<double> p = {1.0, -2.0, 0.5}, g = {0.3, -4.0, 1e-3};
  attn::tr::AdamWConfig c;
  c.lr = 0.1;
  c.weight_decay = 0;
  attn::tr::AdamWState<double> s;
  attn::tr::adamw_step(c, p.data(), g.data(), 3, &s);
  CHECK(p[0] == Approx(0.9).epsilon(1e-6));
  CHECK(p[1] == Approx(-1.9).epsilon(1e-6));
  CHECK(p[2] == Approx(0.4).epsilon(1e-4));
  CHECK(s.step == 1);
}

TEST_CASE("optim - clipping scales to the max norm and leaves small gradients alone", "[optim]") {
  std::vector<float> g = {3, 4};
  CHECK(attn::tr::clip_grad_norm(g.data(), 2, 1.0) == Approx(5.0));
  CHECK(std::sqrt(g[0] * g[0] + g[1] * g[1]) == Approx(1.0).epsilon(1e-5));
  std::vector<float> h = {0.3f, 0.4f};
  attn::tr::clip_grad_norm(h.data(), 2, 1.0);
  CHECK(h[0] == 0.3f);
  CHECK(h[1] == 0.4f);
}
