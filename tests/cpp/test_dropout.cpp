#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/dropout.hpp"
#include "attn/tiled.hpp"
#include "backward_case.hpp"
#include "fixtures.hpp"

using attn::AttentionOptions;
using attn::AttentionResult;
using attn::Kernel;

namespace {
template <class E>
bool same(const E& a, const E& b) {  // bit for bit (NaN rows included)
  return a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(*a.data())) == 0;
}
}  // namespace

TEST_CASE("dropout - p = 0 keeps every cell and changes no bit of either kernel", "[dropout]") {
  for (std::size_t j = 0; j < 1000; ++j) CHECK(attn::dropout_keep(7, 0, 3, j, 0.0));
  std::mt19937 gen(12);
  for (int trial = 0; trial < 30; ++trial) {
    auto c = backward_case::random_config(gen, false, true, 70);
    const std::vector<float> q(c->q.begin(), c->q.end()), k(c->k.begin(), c->k.end()),
        v(c->v.begin(), c->v.end()), dout(c->dout.begin(), c->dout.end());
    AttentionOptions seeded = c->opts;
    seeded.dropout = 0.0;
    seeded.dropout_seed = 0xDEADBEEF;
    for (Kernel kernel : {Kernel::kNaive, Kernel::kTiled}) {
      attn::AttentionGrads<float> a, b;
      REQUIRE(attn::attention_backward(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                       dout.data(), dout.size(), c->opts, kernel,
                                       static_cast<const AttentionResult<float>*>(nullptr), &a)
                  .ok());
      REQUIRE(attn::attention_backward(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(),
                                       dout.data(), dout.size(), seeded, kernel,
                                       static_cast<const AttentionResult<float>*>(nullptr), &b)
                  .ok());
      CHECK(same(a.forward.output, b.forward.output));
      CHECK(same(a.dq, b.dq));
      CHECK(same(a.dk, b.dk));
      CHECK(same(a.dv, b.dv));
    }
  }
}

TEST_CASE("dropout - the keep rate is 1 - p within 5 standard errors, cells uncorrelated",
          "[dropout][statistics]") {
  for (double p : {0.1, 0.5, 0.9}) {
    const std::size_t heads = 4, t = 512;
    std::size_t kept = 0, both = 0, n = 0;
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < t; ++i) {
        const std::uint64_t row = attn::dropout_row(2024, h, i);
        bool prev = attn::dropout_keep_row(row, 0, p);
        for (std::size_t j = 0; j < t; ++j) {
          const bool k = attn::dropout_keep_row(row, j, p);
          kept += k;
          if (j > 0) both += k && prev;
          prev = k;
          ++n;
        }
      }
    }
    const double rate = double(kept) / n, se = std::sqrt(p * (1 - p) / n);
    INFO("p = " << p << " keep rate " << rate << " se " << se);
    CHECK(std::abs(rate - (1 - p)) <= 5 * se);
    // Neighbouring keys both kept: (1-p)^2 if independent.
    const double pair = double(both) / (n - heads * t);
    CHECK(std::abs(pair - (1 - p) * (1 - p)) <= 5 * std::sqrt((1 - p) * (1 - p) * n) / n + 1e-3);
    WARN("dropout p = " << p << ": keep rate " << rate << " over " << n << " cells (expected "
                        << 1 - p << ", se " << se << ")");
  }
  // Seeds, heads and queries each change the mask (about half the cells differ at p = 0.5).
  std::size_t diff_seed = 0, diff_head = 0, diff_query = 0;
  for (std::size_t j = 0; j < 4096; ++j) {
    const bool a = attn::dropout_keep(1, 0, 0, j, 0.5);
    diff_seed += a != attn::dropout_keep(2, 0, 0, j, 0.5);
    diff_head += a != attn::dropout_keep(1, 1, 0, j, 0.5);
    diff_query += a != attn::dropout_keep(1, 0, 1, j, 0.5);
  }
  for (std::size_t d : {diff_seed, diff_head, diff_query}) {
    CHECK(d > 1800);
    CHECK(d < 2300);
  }
}

TEST_CASE("dropout - naive and tiled forward and both backward kernels drop the same cells",
          "[dropout]") {
  // With V = I (T_k = d_v) the output row i is the dropped weight row Pd_i itself, and with
  // dO = I (T_q = d_v) dV[j][i] = Pd_ij: a dropped cell is an exact zero in both.
  for (std::size_t t : {std::size_t{7}, std::size_t{70}, std::size_t{130}}) {
    AttentionOptions o;
    o.shape = {3, 1, t, t, 4, t};
    o.mask.causal = true;
    o.dropout = 0.3;
    o.dropout_seed = 99 + t;
    std::mt19937 gen(t);
    const auto q = testing_inputs::normal<float>(3 * t * 4, gen, 0.5),
               k = testing_inputs::normal<float>(t * 4, gen, 0.5);
    std::vector<float> eye(t * t, 0.f), dout(3 * t * t, 0.f);
    for (std::size_t i = 0; i < t; ++i) eye[i * t + i] = 1.f;
    for (std::size_t h = 0; h < 3; ++h) std::copy(eye.begin(), eye.end(), dout.begin() + h * t * t);
    AttentionResult<float> naive, tiled;
    REQUIRE(
        attn::attention(q.data(), q.size(), k.data(), k.size(), eye.data(), eye.size(), o, &naive)
            .ok());
    REQUIRE(attn::attention_tiled(q.data(), q.size(), k.data(), k.size(), eye.data(), eye.size(), o,
                                  &tiled)
                .ok());
    attn::AttentionGrads<float> gn, gt;
    for (auto [kernel, g] : {std::pair{Kernel::kNaive, &gn}, {Kernel::kTiled, &gt}}) {
      REQUIRE(attn::attention_backward(q.data(), q.size(), k.data(), k.size(), eye.data(),
                                       eye.size(), dout.data(), dout.size(), o, kernel,
                                       static_cast<const AttentionResult<float>*>(nullptr), g)
                  .ok());
    }
    std::size_t dropped = 0, allowed = 0, mismatched = 0;
    for (std::size_t h = 0; h < 3; ++h) {
      for (std::size_t i = 0; i < t; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
          const bool keep = attn::dropout_keep(o.dropout_seed, h, i, j, o.dropout);
          const float w = naive.weights(h, i, j);
          const float expect = keep ? w / 0.7f : 0.f;
          ++allowed;
          dropped += !keep;
          mismatched += std::abs(naive.output(h, i, j) - expect) > 1e-6f * (1 + expect);
          mismatched += std::abs(tiled.output(h, i, j) - expect) > 1e-5f * (1 + expect);
          mismatched += (naive.output(h, i, j) == 0.f) != !keep;
          mismatched += (tiled.output(h, i, j) == 0.f) != !keep;
        }
      }
    }
    // dV (MQA: summed over the three heads) = sum_h Pd_h^T: zero exactly where all three drop.
    for (std::size_t j = 0; j < t; ++j) {
      for (std::size_t i = j; i < t; ++i) {
        bool any = false;
        for (std::size_t h = 0; h < 3; ++h) any |= attn::dropout_keep(o.dropout_seed, h, i, j, 0.3);
        mismatched += (gn.dv(0, j, i) == 0.f) == any;
        mismatched += (gt.dv(0, j, i) == 0.f) == any;
      }
    }
    INFO("T = " << t << ": " << dropped << " of " << allowed << " allowed cells dropped");
    CHECK(dropped > 0);
    CHECK(mismatched == 0);
  }
}

TEST_CASE("dropout - averaged over seeds the output is the undropped output (inverted scaling)",
          "[dropout][statistics]") {
  AttentionOptions o;
  o.shape = {1, 1, 4, 6, 3, 2};
  o.mask.causal = true;
  std::mt19937 gen(5);
  const auto q = testing_inputs::normal<double>(12, gen),
             k = testing_inputs::normal<double>(18, gen),
             v = testing_inputs::normal<double>(12, gen);
  AttentionResult<double> plain, r;
  REQUIRE(attn::attention(q.data(), 12, k.data(), 18, v.data(), 12, o, &plain).ok());
  o.dropout = 0.4;
  const int n = 20000;
  std::vector<double> mean(8, 0.0);
  for (int s = 0; s < n; ++s) {
    o.dropout_seed = s;
    REQUIRE(attn::attention_tiled(q.data(), 12, k.data(), 18, v.data(), 12, o, &r).ok());
    for (std::size_t x = 0; x < 8; ++x) mean[x] += r.output.data()[x] / n;
  }
  // Each output is a sum of at most 6 terms w v / 0.6 kept with probability 0.6: its standard
  // deviation is below sum |w v| * sqrt(0.4 / 0.6) <= max|v| * 0.82; the mean's, over n seeds,
  // below 0.82 max|v| / sqrt(n). 5 of those.
  double vmax = 0;
  for (double x : v) vmax = std::max(vmax, std::abs(x));
  const double tol = 5 * 0.82 * vmax / std::sqrt(double(n));
  for (std::size_t x = 0; x < 8; ++x) {
    INFO("output " << x << ": mean " << mean[x] << " vs " << plain.output.data()[x]);
    CHECK(std::abs(mean[x] - plain.output.data()[x]) <= tol);
  }
}
