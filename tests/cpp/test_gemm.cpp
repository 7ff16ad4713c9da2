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
    for (std::size_t m : {1, 4, 9, 64})  // k = 300, 600: past the 128-deep k blocks
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

namespace {

// One product through gemm and through gemm_scalar on the same inputs; true if C matches bit
// for bit. Operands sit in buffers wider than they need (lda, ldb, ldc past the minimum), so a
// kernel that ignores a stride, or writes past a row's n columns, is caught too.
bool same_bits(attn::Trans t, std::size_t m, std::size_t n, std::size_t k, float beta,
               std::mt19937* gen) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t a_rows = t == attn::Trans::kTN ? k : m, a_cols = t == attn::Trans::kTN ? m : k;
  const std::size_t b_rows = t == attn::Trans::kNT ? n : k, b_cols = t == attn::Trans::kNT ? k : n;
  const std::size_t lda = a_cols + 3, ldb = b_cols + 5, ldc = n + 2;
  std::vector<float> a(a_rows * lda), b(b_rows * ldb), c1(m * ldc), scratch;
  for (auto& x : a) x = nd(*gen);
  for (auto& x : b) x = nd(*gen);
  for (auto& x : c1) x = nd(*gen);
  std::vector<float> c2 = c1;
  attn::gemm(t, m, n, k, a.data(), lda, b.data(), ldb, beta, c1.data(), ldc, &scratch);
  attn::gemm_scalar(t, m, n, k, a.data(), lda, b.data(), ldb, beta, c2.data(), ldc, &scratch);
  return std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)) == 0;
}

const char* trans_name(attn::Trans t) {
  return t == attn::Trans::kNN ? "NN" : t == attn::Trans::kTN ? "TN" : "NT";
}

}  // namespace

TEST_CASE("gemm - every row and column remainder of the register blocks, strided, beta 0 and 1",
          "[gemm][determinism]") {
  // m 1..13 and n 1..29 cover every leftover of the row blocks and of the 4-, 8- and
  // 12-column blocks (and the scalar columns past a multiple of 4), for k below, at and past
  // the four-fold unrolled step.
  std::mt19937 gen(13);
  for (auto t : {attn::Trans::kNN, attn::Trans::kTN, attn::Trans::kNT})
    for (float beta : {0.0f, 1.0f})
      for (std::size_t m = 1; m <= 13; ++m)
        for (std::size_t n = 1; n <= 29; ++n)
          for (std::size_t k : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{9}}) {
            INFO(trans_name(t) << " m " << m << " n " << n << " k " << k << " beta " << beta);
            REQUIRE(same_bits(t, m, n, k, beta, &gen));
          }
}

TEST_CASE("gemm - the training step's shapes give the scalar loop's bits", "[gemm][determinism]") {
  // The attention-only transformer's products for d_model 64 and 32 (V = 32, H*d_h = D,
  // W_QKV 3D wide), over a whole batch (N = 32 x 32 rows) and over one shard of 8 sequences
  // (N = 256): forward x W (NN), weight gradients X^T dY (TN), input gradients dY W^T (NT).
  std::mt19937 gen(17);
  for (std::size_t rows : {std::size_t{1024}, std::size_t{256}})
    for (std::size_t d : {std::size_t{64}, std::size_t{32}}) {
      const std::size_t v = 32, w3 = 3 * d;
      struct Case {
        attn::Trans t;
        std::size_t m, n, k;
        float beta;
      };
      const Case cases[] = {
          {attn::Trans::kNN, rows, w3, d, 0.0f}, {attn::Trans::kNN, rows, d, d, 1.0f},
          {attn::Trans::kNN, rows, v, d, 0.0f},  {attn::Trans::kTN, d, v, rows, 0.0f},
          {attn::Trans::kTN, d, d, rows, 0.0f},  {attn::Trans::kTN, d, w3, rows, 0.0f},
          {attn::Trans::kNT, rows, d, v, 0.0f},  {attn::Trans::kNT, rows, d, d, 0.0f},
          {attn::Trans::kNT, rows, d, w3, 1.0f},
      };
      for (const Case& c : cases) {
        INFO(trans_name(c.t) << " " << c.m << " x " << c.n << " x " << c.k << " beta " << c.beta);
        REQUIRE(same_bits(c.t, c.m, c.n, c.k, c.beta, &gen));
      }
    }
}

TEST_CASE("gemm - k = 0 is the empty sum: beta 0 gives zeros, beta 1 leaves C as it was",
          "[gemm][edge]") {
  // Every register block runs (m 1..9, n up to 36: the 16-, 8- and 4-column blocks and the
  // scalar columns), with a row stride past n so writes outside the block are seen.
  for (auto t : {attn::Trans::kNN, attn::Trans::kTN, attn::Trans::kNT})
    for (std::size_t m : {1, 2, 4, 9})
      for (std::size_t n : {3, 4, 16, 36}) {
        INFO(trans_name(t) << " m " << m << " n " << n);
        const std::size_t ldc = n + 3;
        const float a[1] = {7.0f}, b[1] = {5.0f};
        std::vector<float> c(m * ldc, 2.5f), scratch;
        attn::gemm(t, m, n, 0, a, 1, b, t == attn::Trans::kNT ? 1 : n, 1.0f, c.data(), ldc,
                   &scratch);
        for (float x : c) REQUIRE(x == 2.5f);
        attn::gemm(t, m, n, 0, a, 1, b, t == attn::Trans::kNT ? 1 : n, 0.0f, c.data(), ldc,
                   &scratch);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < ldc; ++j) REQUIRE(c[i * ldc + j] == (j < n ? 0.0f : 2.5f));
      }
}
