#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/tiled.hpp"
#include "backward_case.hpp"
#include "fixtures.hpp"
#include "random_inputs.hpp"

using attn::AttentionGrads;
using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Kernel;
using attn::Shape;

namespace {

template <class T>
attn::Status backward(const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                      const std::vector<T>& dout, const AttentionOptions& o, Kernel kernel,
                      AttentionGrads<T>* g) {
  return attn::attention_backward(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                  dout.data(), dout.size(), o, kernel,
                                  static_cast<const AttentionResult<T>*>(nullptr), g);
}

// L = sum(output * dO) from the naive float64 forward.
double loss(const backward_case::Config& c, const std::vector<double>& q,
            const std::vector<double>& k, const std::vector<double>& v) {
  AttentionResult<double> r;
  REQUIRE(
      attn::attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), c.opts, &r).ok());
  double l = 0;
  for (std::size_t x = 0; x < r.output.size(); ++x) l += r.output.data()[x] * c.dout[x];
  return l;
}

// Central differences of L for every element of q, k and v against the analytic gradient;
// returns the worst |fd - analytic|.
double fd_check(const backward_case::Config& c, const AttentionGrads<double>& g) {
  const double h = 1e-6;
  double worst = 0;
  std::vector<double> q = c.q, k = c.k, v = c.v;
  auto probe = [&](std::vector<double>& x, const double* grad) {
    for (std::size_t n = 0; n < x.size(); ++n) {
      const double x0 = x[n];
      x[n] = x0 + h;
      const double lp = loss(c, q, k, v);
      x[n] = x0 - h;
      const double lm = loss(c, q, k, v);
      x[n] = x0;
      const double fd = (lp - lm) / (2 * h);
      const double d = std::abs(fd - grad[n]);
      worst = std::max(worst, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
    }
  };
  probe(q, g.dq.data());
  probe(k, g.dk.data());
  probe(v, g.dv.data());
  return worst;
}

}  // namespace

TEST_CASE("backward - float64 gradients equal central finite differences for every option",
          "[backward][fd]") {
  std::mt19937 gen(90210);
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto c = backward_case::random_config(gen, false, false);
    INFO("trial " << trial);
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      AttentionGrads<double> g;
      REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, kernel, &g).ok());
      const double d = fd_check(*c, g);
      CHECK(d <= 1e-6);
      worst = std::max(worst, d);
    }
  }
  WARN("backward f64 vs finite differences, 200 random configs x 2 kernels: max|delta| " << worst);
}

TEST_CASE("backward - with dropout, float64 gradients equal finite differences (mask fixed)",
          "[backward][fd][dropout]") {
  // The keep decision depends only on (seed, head, query, key), never on the inputs, so
  // perturbing q, k or v leaves the mask fixed and central differences apply as they are.
  std::mt19937 gen(5150);
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto c = backward_case::random_config(gen, true, false);
    INFO("trial " << trial << " p=" << c->opts.dropout);
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      AttentionGrads<double> g;
      REQUIRE(backward(c->q, c->k, c->v, c->dout, c->opts, kernel, &g).ok());
      const double d = fd_check(*c, g);
      CHECK(d <= 1e-6);
      worst = std::max(worst, d);
    }
  }
  WARN("backward f64 with dropout vs finite differences, 200 configs x 2 kernels: max|delta| "
       << worst);
}
