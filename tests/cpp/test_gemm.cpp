#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "attn/gemm.hpp"

namespace {

// C = A B with A, B given in their stored layouts, summed in double.
std::vector<double> reference(attn::Trans t, std::size_t m, std::size_t n, std::size_t k,
                              const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> c(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t kk = 0; kk < k; ++kk) {
        const double x = t == attn::Trans::kTN ? a[kk * m + i] : a[i * k + kk];
        const double y = t == attn::Trans::kNT ? b[j * k + kk] : b[kk * n + j];
        s += x * y;
      }
      c[i * n + j] = s;
    }
  return c;
}

}  // namespace

TEST_CASE("gemm - NN, TN and NT match a float64 reference, with tails and accumulation", "[gemm]") {
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t dims[] = {1, 3, 4, 5, 8, 13, 17, 32};
  double worst = 0;
  for (auto t : {attn::Trans::kNN, attn::Trans::kTN, attn::Trans::kNT})
    for (std::size_t m : dims)
      for (std::size_t n : dims)
        for (std::size_t k : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{300}}) {
          std::vector<float> a(m * k), b(k * n), c(m * n), c0(m * n);
          for (auto& x : a) x = nd(gen);
          for (auto& x : b) x = nd(gen);
          for (auto& x : c0) x = nd(gen);
          const std::size_t lda = t == attn::Trans::kTN ? m : k;
          const std::size_t ldb = t == attn::Trans::kNT ? k : n;
          const auto ref = reference(t, m, n, k, a, b);
          std::vector<float> scratch;
          attn::gemm(t, m, n, k, a.data(), lda, b.data(), ldb, 0.0f, c.data(), n, &scratch);
          for (std::size_t i = 0; i < m * n; ++i) {
            const double d = std::abs(c[i] - ref[i]);
            worst = std::max(worst, d);
            REQUIRE(d <= 1e-5 * static_cast<double>(k));
          }
          c = c0;
          attn::gemm(t, m, n, k, a.data(), lda, b.data(), ldb, 1.0f, c.data(), n, &scratch);
          for (std::size_t i = 0; i < m * n; ++i)
            REQUIRE(std::abs(c[i] - (ref[i] + c0[i])) <= 1e-5 * static_cast<double>(k + 1));
        }
  WARN("gemm float32 vs float64 reference: max |delta| = "
       << worst << (attn::gemm_simd() ? " (SIMD128)" : " (scalar)"));
}

TEST_CASE("gemm - the SIMD path is bit-identical to the scalar loop (fixed summation order)",
          "[gemm][determinism]") {
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto t : {attn::Trans::kNN, attn::Trans::kTN, attn::Trans::kNT})
    for (std::size_t m : {1, 4, 9, 64})  // k = 300, 600: past the 256-deep k blocks
      for (std::size_t n : {3, 8, 12, 33, 72})
        for (std::size_t k : {1, 5, 64, 300, 600}) {
          std::vector<float> a(m * k), b(k * n), c1(m * n), c2(m * n), scratch;
          for (auto& x : a) x = nd(gen);
          for (auto& x : b) x = nd(gen);
          const std::size_t lda = t == attn::Trans::kTN ? m : k;
          const std::size_t ldb = t == attn::Trans::kNT ? k : n;
          attn::gemm(t, m, n, k, a.data(), lda, b.data(), ldb, 0.0f, c1.data(), n, &scratch);
          attn::gemm_scalar(t, m, n, k, a.data(), lda, b.data(), ldb, 0.0f, c2.data(), n, &scratch);
          REQUIRE(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)) == 0);
        }
}

TEST_CASE("gemm - float64 overload with strided operands", "[gemm]") {
  // A is the left 2x3 block of a 2x5 buffer (lda 5); C is a 2x2 block of a 2x4 buffer.
  const std::vector<double> a = {1, 2, 3, 99, 99, 4, 5, 6, 99, 99};
  const std::vector<double> b = {1, 0, 0, 1, 1, 1};  // (3, 2)
  std::vector<double> c(8, -1.0), scratch;
  attn::gemm(attn::Trans::kNN, 2, 2, 3, a.data(), 5, b.data(), 2, 0.0, c.data(), 4, &scratch);
  CHECK(c[0] == 4);
  CHECK(c[1] == 5);
  CHECK(c[2] == -1);  // outside the block: untouched
  CHECK(c[4] == 10);
  CHECK(c[5] == 11);
}
