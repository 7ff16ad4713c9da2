#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
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

TEST_CASE("optim - float32 AdamW gives the documented formula's bits on every lane and the tail",
          "[optim][determinism]") {
  // The update of optim.hpp evaluated one parameter at a time in float32, operation by
  // operation as written there (constants rounded from double once): the f32x4 loop of the
  // SIMD128 build must give these bits exactly (its sqrt and div are correctly rounded), for
  // the parameters in groups of four and for the 0-3 left over (n = 4k + 3).
  const std::size_t n = 4 * 9 + 3;
  attn::tr::AdamWConfig c;
  c.lr = 3e-2;
  c.weight_decay = 0.1;
  std::vector<float> p(n), g(n), pr(n), mr(n, 0.0f), vr(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = pr[i] = std::sin(0.7f * static_cast<float>(i)) * 2.0f;
    g[i] = std::cos(1.3f * static_cast<float>(i)) * (i % 5 == 0 ? 1e-4f : 0.5f);
  }
  attn::tr::AdamWState<float> s;
  for (int t = 1; t <= 3; ++t) {
    attn::tr::adamw_step(c, p.data(), g.data(), n, &s);
    const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
    const float decay = static_cast<float>(1 - c.lr * c.weight_decay);
    const float b1 = static_cast<float>(c.beta1), b2 = static_cast<float>(c.beta2);
    const float ob1 = static_cast<float>(1 - c.beta1), ob2 = static_cast<float>(1 - c.beta2);
    const float step = static_cast<float>(c.lr / bc1), sq = static_cast<float>(std::sqrt(bc2));
    const float eps = static_cast<float>(c.eps);
    for (std::size_t i = 0; i < n; ++i) {
      const float pd = pr[i] * decay;
      mr[i] = b1 * mr[i] + ob1 * g[i];
      const float g2 = ob2 * g[i];
      vr[i] = b2 * vr[i] + g2 * g[i];
      const float denom = std::sqrt(vr[i]) / sq + eps;
      const float q = mr[i] / denom;
      pr[i] = pd - step * q;
    }
    INFO("step " << t);
    REQUIRE(std::memcmp(p.data(), pr.data(), n * sizeof(float)) == 0);
    REQUIRE(std::memcmp(s.m.data(), mr.data(), n * sizeof(float)) == 0);
    REQUIRE(std::memcmp(s.v.data(), vr.data(), n * sizeof(float)) == 0);
  }
}
