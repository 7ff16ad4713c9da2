// attn::traffic against simulations of the algorithms (standard; tiled with query blocks or key
// blocks outside): each one runs for real on random data through a "slow memory" that counts
// every float loaded and stored and the bytes it holds, and its output is checked against
// attention computed directly, so the counts belong to algorithms that compute attention. The
// closed form must equal the counts exactly. The NumPy oracle's own walk of the loops
// (tests/oracle/flash_io.py, in tests/fixtures/lesson.json) is compared too.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/traffic.hpp"
#include "fixtures.hpp"

namespace {

using attn::Traffic;
using attn::TrafficKernel;
using attn::TrafficOptions;

// Slow memory: named buffers; every element access through load/store is counted.
struct Slow {
  std::uint64_t loads = 0, stores = 0, live = 0, peak = 0;
  std::vector<std::vector<float>> bufs;
  int alloc(std::size_t n) {
    bufs.emplace_back(n, 0.f);
    live += n * 4;
    peak = std::max(peak, live);
    return static_cast<int>(bufs.size()) - 1;
  }
  float load(int b, std::size_t i) {
    ++loads;
    return bufs[b].at(i);
  }
  void store(int b, std::size_t i, float x) {
    ++stores;
    bufs[b].at(i) = x;
  }
};

struct Problem {
  TrafficOptions o;
  std::vector<float> q, k, v;  // (H, tq, dk), (Hkv, tk, dk), (Hkv, tk, dv)
  bool allowed(std::size_t i, std::size_t j) const {
    // Bottom-right causal alignment, written independently of the library.
    return !o.causal || static_cast<long long>(j) <= static_cast<long long>(i) +
                                                         static_cast<long long>(o.tk) -
                                                         static_cast<long long>(o.tq);
  }
};

Problem make_problem(TrafficOptions o, std::uint32_t seed) {
  Problem p;
  p.o = o;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  p.q.resize(o.heads * o.tq * o.dk);
  p.k.resize(o.kv_heads * o.tk * o.dk);
  p.v.resize(o.kv_heads * o.tk * o.dv);
  for (auto* a : {&p.q, &p.k, &p.v})
    for (float& x : *a) x = u(rng);
  return p;
}

// Attention in double, straight from the definition; rows with no allowed key are NaN.
std::vector<double> reference(const Problem& p) {
  const auto& o = p.o;
  const std::size_t group = o.heads / o.kv_heads;
  const double scale = 1 / std::sqrt(double(o.dk));
  std::vector<double> out(o.heads * o.tq * o.dv, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t h = 0; h < o.heads; ++h)
    for (std::size_t i = 0; i < o.tq; ++i) {
      const std::size_t g = h / group;
      std::vector<double> s(o.tk, -INFINITY);
      double mx = -INFINITY;
      for (std::size_t j = 0; j < o.tk; ++j) {
        if (!p.allowed(i, j)) continue;
        double d = 0;
        for (std::size_t c = 0; c < o.dk; ++c)
          d += double(p.q[(h * o.tq + i) * o.dk + c]) * p.k[(g * o.tk + j) * o.dk + c];
        s[j] = d * scale;
        mx = std::max(mx, s[j]);
      }
      if (mx == -INFINITY) continue;
      double l = 0;
      for (double& x : s) l += (x = std::exp(x - mx));
      for (std::size_t c = 0; c < o.dv; ++c) {
        double y = 0;
        for (std::size_t j = 0; j < o.tk; ++j) y += s[j] / l * p.v[(g * o.tk + j) * o.dv + c];
        out[(h * o.tq + i) * o.dv + c] = y;
      }
    }
  return out;
}

struct Sim {
  std::uint64_t loads, stores, footprint;
  std::uint64_t br = 0, bc = 0;
  std::vector<float> out;
};

// The standard algorithm, head by head: S = scale Q K^T to slow memory; S back, mask,
// softmax, P to slow memory; P and V back, O = P V to slow memory. S and P are allocated for
// every head at once, as a batched (H, tq, tk) computation holds them.
Sim simulate_standard(const Problem& p) {
  const auto& o = p.o;
  const std::size_t group = o.heads / o.kv_heads;
  const float scale = 1.f / std::sqrt(float(o.dk));
  Slow m;
  const int Q = m.alloc(p.q.size()), K = m.alloc(p.k.size()), V = m.alloc(p.v.size());
  m.bufs[Q] = p.q;
  m.bufs[K] = p.k;
  m.bufs[V] = p.v;
  const int O = m.alloc(o.heads * o.tq * o.dv);
  const int S = m.alloc(o.heads * o.tq * o.tk), P = m.alloc(o.heads * o.tq * o.tk);
  for (std::size_t h = 0; h < o.heads; ++h) {
    const std::size_t g = h / group;
    // Pass 1: Q_h and K_g on chip once, every score stored.
    std::vector<float> qh(o.tq * o.dk), kg(o.tk * o.dk), vg(o.tk * o.dv);
    for (std::size_t e = 0; e < qh.size(); ++e) qh[e] = m.load(Q, h * o.tq * o.dk + e);
    for (std::size_t e = 0; e < kg.size(); ++e) kg[e] = m.load(K, g * o.tk * o.dk + e);
    for (std::size_t i = 0; i < o.tq; ++i)
      for (std::size_t j = 0; j < o.tk; ++j) {
        float d = 0;
        for (std::size_t c = 0; c < o.dk; ++c) d += qh[i * o.dk + c] * kg[j * o.dk + c];
        m.store(S, (h * o.tq + i) * o.tk + j, scale * d);
      }
    // Pass 2: each row of S back, masked softmax, the row of P stored (dense).
    for (std::size_t i = 0; i < o.tq; ++i) {
      std::vector<float> row(o.tk);
      float mx = -INFINITY;
      for (std::size_t j = 0; j < o.tk; ++j) {
        row[j] = m.load(S, (h * o.tq + i) * o.tk + j);
        if (!p.allowed(i, j)) row[j] = -INFINITY;
        mx = std::max(mx, row[j]);
      }
      float l = 0;
      for (float& x : row) l += (x = std::exp(x - mx));
      for (std::size_t j = 0; j < o.tk; ++j) m.store(P, (h * o.tq + i) * o.tk + j, row[j] / l);
    }
    // Pass 3: V_g once, each row of P back, O stored.
    for (std::size_t e = 0; e < vg.size(); ++e) vg[e] = m.load(V, g * o.tk * o.dv + e);
    for (std::size_t i = 0; i < o.tq; ++i) {
      std::vector<float> y(o.dv, 0.f);
      for (std::size_t j = 0; j < o.tk; ++j) {
        const float w = m.load(P, (h * o.tq + i) * o.tk + j);
        for (std::size_t c = 0; c < o.dv; ++c) y[c] += w * vg[j * o.dv + c];
      }
      for (std::size_t c = 0; c < o.dv; ++c) m.store(O, (h * o.tq + i) * o.dv + c, y[c]);
    }
  }
  return {m.loads, m.stores, m.peak, 0, 0, m.bufs[O]};
}

// The tiled algorithm: FlashAttention's block sizes (Algorithm 1: B_c = ceil(M / 4d),
// B_r = min(B_c, d)), query blocks outside. A key block is visited when some row of the query
// block may see some key of it (checked cell by cell); m, l and O_i live on chip until the
// query block is done, then O_i, m_i, l_i are stored.
Sim simulate_tiled(const Problem& p) {
  const auto& o = p.o;
  const std::size_t group = o.heads / o.kv_heads;
  const float scale = 1.f / std::sqrt(float(o.dk));
  const std::size_t d = std::max(o.dk, o.dv), M = o.sram_bytes / 4;
  const std::size_t bc = (M + 4 * d - 1) / (4 * d), br = std::min(bc, d);
  Slow m;
  const int Q = m.alloc(p.q.size()), K = m.alloc(p.k.size()), V = m.alloc(p.v.size());
  m.bufs[Q] = p.q;
  m.bufs[K] = p.k;
  m.bufs[V] = p.v;
  const int O = m.alloc(o.heads * o.tq * o.dv);
  const int Ms = m.alloc(o.heads * o.tq), Ls = m.alloc(o.heads * o.tq);
  for (std::size_t h = 0; h < o.heads; ++h) {
    const std::size_t g = h / group;
    for (std::size_t r0 = 0; r0 < o.tq; r0 += br) {
      const std::size_t r1 = std::min(r0 + br, std::size_t(o.tq)), rows = r1 - r0;
      std::vector<float> qi(rows * o.dk), acc(rows * o.dv, 0.f), mx(rows, -INFINITY), l(rows, 0.f);
      for (std::size_t e = 0; e < qi.size(); ++e) qi[e] = m.load(Q, (h * o.tq + r0) * o.dk + e);
      for (std::size_t c0 = 0; c0 < o.tk; c0 += bc) {
        const std::size_t c1 = std::min(c0 + bc, std::size_t(o.tk)), cols = c1 - c0;
        bool any = false;
        for (std::size_t i = r0; i < r1 && !any; ++i)
          for (std::size_t j = c0; j < c1 && !any; ++j) any = p.allowed(i, j);
        if (!any) continue;  // the mask skips this block: nothing loaded
        std::vector<float> kj(cols * o.dk), vj(cols * o.dv);
        for (std::size_t e = 0; e < kj.size(); ++e) kj[e] = m.load(K, (g * o.tk + c0) * o.dk + e);
        for (std::size_t e = 0; e < vj.size(); ++e) vj[e] = m.load(V, (g * o.tk + c0) * o.dv + e);
        for (std::size_t r = 0; r < rows; ++r) {
          std::vector<float> s(cols, -INFINITY);
          float bm = -INFINITY;
          for (std::size_t j = 0; j < cols; ++j) {
            if (!p.allowed(r0 + r, c0 + j)) continue;
            float dd = 0;
            for (std::size_t c = 0; c < o.dk; ++c) dd += qi[r * o.dk + c] * kj[j * o.dk + c];
            s[j] = scale * dd;
            bm = std::max(bm, s[j]);
          }
          if (bm == -INFINITY) continue;
          const float mn = std::max(mx[r], bm), alpha = std::exp(mx[r] - mn);
          l[r] *= alpha;
          for (std::size_t c = 0; c < o.dv; ++c) acc[r * o.dv + c] *= alpha;
          for (std::size_t j = 0; j < cols; ++j) {
            const float e = std::exp(s[j] - mn);
            l[r] += e;
            for (std::size_t c = 0; c < o.dv; ++c) acc[r * o.dv + c] += e * vj[j * o.dv + c];
          }
          mx[r] = mn;
        }
      }
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < o.dv; ++c)
          m.store(O, (h * o.tq + r0 + r) * o.dv + c, acc[r * o.dv + c] / l[r]);
        m.store(Ms, h * o.tq + r0 + r, mx[r]);
        m.store(Ls, h * o.tq + r0 + r, l[r]);
      }
    }
  }
  return {m.loads, m.stores, m.peak, br, bc, m.bufs[O]};
}

// The paper's Algorithm 1 (key blocks outside): O, l, m start in slow memory (line 2); for each
// key block K_j, V_j are loaded once, then every query block with a visible cell loads Q_i, O_i,
// l_i, m_i, updates them with the block's scores and stores O_i, l_i, m_i back (lines 8-13).
Sim simulate_tiled_kv_outer(const Problem& p) {
  const auto& o = p.o;
  const std::size_t group = o.heads / o.kv_heads;
  const float scale = 1.f / std::sqrt(float(o.dk));
  const std::size_t d = std::max(o.dk, o.dv), M = o.sram_bytes / 4;
  const std::size_t bc = (M + 4 * d - 1) / (4 * d), br = std::min(bc, d);
  Slow m;
  const int Q = m.alloc(p.q.size()), K = m.alloc(p.k.size()), V = m.alloc(p.v.size());
  m.bufs[Q] = p.q;
  m.bufs[K] = p.k;
  m.bufs[V] = p.v;
  const int O = m.alloc(o.heads * o.tq * o.dv);
  const int Ms = m.alloc(o.heads * o.tq), Ls = m.alloc(o.heads * o.tq);
  for (std::size_t h = 0; h < o.heads; ++h) {
    const std::size_t g = h / group;
    for (std::size_t i = 0; i < o.tq; ++i) {  // line 2: O = 0, l = 0, m = -inf
      for (std::size_t c = 0; c < o.dv; ++c) m.store(O, (h * o.tq + i) * o.dv + c, 0.f);
      m.store(Ls, h * o.tq + i, 0.f);
      m.store(Ms, h * o.tq + i, -INFINITY);
    }
    for (std::size_t c0 = 0; c0 < o.tk; c0 += bc) {
      const std::size_t c1 = std::min(c0 + bc, std::size_t(o.tk)), cols = c1 - c0;
      std::vector<float> kj(cols * o.dk), vj(cols * o.dv);
      for (std::size_t e = 0; e < kj.size(); ++e) kj[e] = m.load(K, (g * o.tk + c0) * o.dk + e);
      for (std::size_t e = 0; e < vj.size(); ++e) vj[e] = m.load(V, (g * o.tk + c0) * o.dv + e);
      for (std::size_t r0 = 0; r0 < o.tq; r0 += br) {
        const std::size_t r1 = std::min(r0 + br, std::size_t(o.tq)), rows = r1 - r0;
        bool any = false;
        for (std::size_t i = r0; i < r1 && !any; ++i)
          for (std::size_t j = c0; j < c1 && !any; ++j) any = p.allowed(i, j);
        if (!any) continue;  // the mask skips this pair of blocks
        std::vector<float> qi(rows * o.dk), oi(rows * o.dv), li(rows), mi(rows);
        for (std::size_t e = 0; e < qi.size(); ++e) qi[e] = m.load(Q, (h * o.tq + r0) * o.dk + e);
        for (std::size_t e = 0; e < oi.size(); ++e) oi[e] = m.load(O, (h * o.tq + r0) * o.dv + e);
        for (std::size_t r = 0; r < rows; ++r) li[r] = m.load(Ls, h * o.tq + r0 + r);
        for (std::size_t r = 0; r < rows; ++r) mi[r] = m.load(Ms, h * o.tq + r0 + r);
        for (std::size_t r = 0; r < rows; ++r) {
          std::vector<float> s(cols, -INFINITY);
          float bm = -INFINITY;
          for (std::size_t j = 0; j < cols; ++j) {
            if (!p.allowed(r0 + r, c0 + j)) continue;
            float dd = 0;
            for (std::size_t c = 0; c < o.dk; ++c) dd += qi[r * o.dk + c] * kj[j * o.dk + c];
            s[j] = scale * dd;
            bm = std::max(bm, s[j]);
          }
          if (bm == -INFINITY) continue;  // this row sees no key of the block: O_i row as it was
          float bl = 0;
          std::vector<float> pv(o.dv, 0.f);
          for (std::size_t j = 0; j < cols; ++j) {
            const float e = std::exp(s[j] - bm);
            bl += e;
            for (std::size_t c = 0; c < o.dv; ++c) pv[c] += e * vj[j * o.dv + c];
          }
          const float mn = std::max(mi[r], bm);
          const float a = std::exp(mi[r] - mn), b = std::exp(bm - mn);
          const float ln = a * li[r] + b * bl;
          for (std::size_t c = 0; c < o.dv; ++c)
            oi[r * o.dv + c] = (li[r] * a * oi[r * o.dv + c] + b * pv[c]) / ln;
          li[r] = ln;
          mi[r] = mn;
        }
        for (std::size_t e = 0; e < oi.size(); ++e) m.store(O, (h * o.tq + r0) * o.dv + e, oi[e]);
        for (std::size_t r = 0; r < rows; ++r) m.store(Ls, h * o.tq + r0 + r, li[r]);
        for (std::size_t r = 0; r < rows; ++r) m.store(Ms, h * o.tq + r0 + r, mi[r]);
      }
    }
  }
  return {m.loads, m.stores, m.peak, br, bc, m.bufs[O]};
}

void check_output(const Problem& p, const std::vector<float>& out) {
  const std::vector<double> ref = reference(p);
  for (std::size_t e = 0; e < ref.size(); ++e) {
    if (std::isnan(ref[e])) continue;  // a row that sees no key
    REQUIRE(std::abs(out[e] - ref[e]) <= 1e-5);
  }
}

Traffic closed_form(const TrafficOptions& o) {
  Traffic t;
  const attn::Status st = attn::traffic(o, &t);
  INFO(st.field << ": " << st.message);
  REQUIRE(st.ok());
  return t;
}

}  // namespace

TEST_CASE("traffic - the closed forms equal the counted loads and stores of both algorithms",
          "[traffic]") {
  std::uint32_t seed = 1;
  std::size_t cases = 0;
  for (std::uint64_t tq : {1u, 3u, 8u, 13u})
    for (std::uint64_t tk : {1u, 5u, 8u, 17u})
      for (auto dims : {std::pair<std::uint64_t, std::uint64_t>{1, 1}, {2, 3}, {4, 4}, {5, 2}})
        for (auto hh : {std::pair<std::uint64_t, std::uint64_t>{1, 1}, {2, 1}, {4, 2}})
          for (bool causal : {false, true}) {
            TrafficOptions o;
            o.tq = tq;
            o.tk = tk;
            o.dk = dims.first;
            o.dv = dims.second;
            o.heads = hh.first;
            o.kv_heads = hh.second;
            o.causal = causal;
            const Problem p = make_problem(o, seed++);
            INFO("tq " << tq << " tk " << tk << " dk " << o.dk << " dv " << o.dv << " heads "
                       << o.heads << "/" << o.kv_heads << " causal " << causal);
            o.kernel = TrafficKernel::kStandard;
            const Sim s = simulate_standard(p);
            check_output(p, s.out);
            const Traffic ts = closed_form(o);
            CHECK(ts.loaded_bytes == 4 * s.loads);
            CHECK(ts.stored_bytes == 4 * s.stores);
            CHECK(ts.slow_memory_bytes == 4 * (s.loads + s.stores));
            CHECK(ts.footprint_bytes == s.footprint);
            CHECK(ts.block_rows == 0);
            CHECK(ts.block_cols == 0);
            const std::uint64_t d = std::max(o.dk, o.dv);
            // SRAM from the smallest legal size (B_c = 1) to blocks wider than the sequence.
            for (std::uint64_t sram : {16 * d, 16 * d + 7, 40 * d, 64 * d + 4, 400 * d}) {
              INFO("sramBytes " << sram);
              Problem pt = p;
              pt.o.sram_bytes = sram;
              pt.o.kernel = TrafficKernel::kTiled;
              for (auto order : {attn::TrafficLoopOrder::kQueryBlocksOuter,
                                 attn::TrafficLoopOrder::kKeyBlocksOuter}) {
                const bool q_outer = order == attn::TrafficLoopOrder::kQueryBlocksOuter;
                INFO((q_outer ? "query blocks outer" : "key blocks outer"));
                pt.o.loop_order = order;
                const Sim st = q_outer ? simulate_tiled(pt) : simulate_tiled_kv_outer(pt);
                check_output(pt, st.out);
                const Traffic tt = closed_form(pt.o);
                CHECK(tt.loaded_bytes == 4 * st.loads);
                CHECK(tt.stored_bytes == 4 * st.stores);
                CHECK(tt.slow_memory_bytes == 4 * (st.loads + st.stores));
                CHECK(tt.footprint_bytes == st.footprint);
                CHECK(tt.block_rows == st.br);
                CHECK(tt.block_cols == st.bc);
              }
              ++cases;
            }
          }
  CHECK(cases == 4 * 4 * 4 * 3 * 2 * 5);
}

// Longer sequences: the closed form (a floor sum over the query blocks) against a plain loop
// over the blocks, which the element-level simulation above validates on small shapes.
TEST_CASE("traffic - causal tiled counts on long sequences match a loop over the blocks",
          "[traffic]") {
  for (std::uint64_t tq : {1000u, 4097u, 65536u})
    for (std::uint64_t tk : {999u, 4097u, 70000u})
      for (std::uint64_t d : {1u, 16u, 64u, 100u})
        for (std::uint64_t sram : {16 * d, std::uint64_t{100000}, std::uint64_t{192 * 1024}}) {
          if (sram < 16 * d) continue;
          TrafficOptions o;
          o.tq = tq;
          o.tk = tk;
          o.dk = o.dv = d;
          o.causal = true;
          o.kernel = TrafficKernel::kTiled;
          o.sram_bytes = sram;
          const Traffic t = closed_form(o);
          const std::uint64_t bc = t.block_cols, br = t.block_rows;
          std::uint64_t keys = 0;
          for (std::uint64_t r0 = 0; r0 < tq; r0 += br) {
            const long long last = static_cast<long long>(std::min(r0 + br, tq)) - 1;
            const long long diag = last + static_cast<long long>(tk) - static_cast<long long>(tq);
            if (diag < 0) continue;
            const std::uint64_t blocks = static_cast<std::uint64_t>(diag) / bc + 1;
            keys += std::min(tk, blocks * bc);
          }
          INFO("tq " << tq << " tk " << tk << " d " << d << " sram " << sram);
          CHECK(t.loaded_bytes == 4 * (tq * d + keys * 2 * d));
        }
}

TEST_CASE("traffic - the tiled footprint is linear in N, its traffic Theta(N^2 d^2 / M)",
          "[traffic]") {
  TrafficOptions o;
  o.dk = o.dv = 64;
  o.kernel = TrafficKernel::kTiled;
  o.sram_bytes = 100 * 1024;  // M = 25600 floats: B_c = 100, B_r = 64
  std::uint64_t prev_fp = 0, prev_tr = 0;
  for (std::uint64_t n = 4096; n <= 65536; n *= 2) {
    o.tq = o.tk = n;
    const Traffic t = closed_form(o);
    if (prev_fp) {
      CHECK(t.footprint_bytes == 2 * prev_fp);                     // linear
      CHECK(double(t.slow_memory_bytes) / double(prev_tr) > 3.9);  // quadratic
    }
    prev_fp = t.footprint_bytes;
    prev_tr = t.slow_memory_bytes;
    // K and V: ceil(N / B_r) N 2d elements, within 2 % of 8 N^2 d^2 / M at B_r = M / 4d.
    o.sram_bytes = 4 * 4 * 64 * 64;  // M = 4d^2: B_r = B_c = d
    const Traffic u = closed_form(o);
    const double m = double(o.sram_bytes) / 4, kv = double(u.loaded_bytes) / 4 - double(n) * 64;
    CHECK(std::abs(kv / (8.0 * n * n * 64 * 64 / m) - 1) < 0.02);
    o.sram_bytes = 100 * 1024;
  }
  // Standard: S and P make the footprint quadratic.
  o.kernel = TrafficKernel::kStandard;
  o.tq = o.tk = 8192;
  const Traffic a = closed_form(o);
  o.tq = o.tk = 16384;
  CHECK(double(closed_form(o).footprint_bytes) / double(a.footprint_bytes) > 3.9);
}

// Key blocks outside on long sequences: the closed form (a floor sum over the key blocks)
// against a plain loop over the key blocks, each visiting the query blocks from the one holding
// the first row that sees the block's first key (the element-level simulation above validates
// that rule on small shapes).
TEST_CASE("traffic - key-blocks-outer counts on long sequences match a loop over the blocks",
          "[traffic]") {
  for (bool causal : {false, true})
    for (std::uint64_t tq : {1000u, 4097u, 65536u})
      for (std::uint64_t tk : {999u, 4097u, 70000u})
        for (std::uint64_t d : {1u, 16u, 64u, 100u})
          for (std::uint64_t sram : {16 * d, std::uint64_t{100000}, std::uint64_t{192 * 1024}}) {
            TrafficOptions o;
            o.tq = tq;
            o.tk = tk;
            o.dk = o.dv = d;
            o.causal = causal;
            o.kernel = TrafficKernel::kTiled;
            o.loop_order = attn::TrafficLoopOrder::kKeyBlocksOuter;
            o.sram_bytes = sram;
            const Traffic t = closed_form(o);
            const std::uint64_t bc = t.block_cols, br = t.block_rows;
            std::uint64_t rows = 0;
            for (std::uint64_t c0 = 0; c0 < tk; c0 += bc) {
              // The first query row that sees key c0: c0 - (tk - tq), at least 0.
              const long long first = static_cast<long long>(c0) - static_cast<long long>(tk) +
                                      static_cast<long long>(tq);
              if (!causal || first <= 0) {
                rows += tq;
              } else {
                const std::uint64_t start = static_cast<std::uint64_t>(first) / br * br;
                rows += tq - start;  // the blocks from the one holding that row on
              }
            }
            INFO("tq " << tq << " tk " << tk << " d " << d << " sram " << sram << " causal "
                       << causal);
            CHECK(t.loaded_bytes == 4 * (tk * 2 * d + rows * (2 * d + 2)));
            CHECK(t.stored_bytes == 4 * (tq * (d + 2) + rows * (d + 2)));
          }
}

// The NumPy oracle walks both loop orders block by block (tests/oracle/flash_io.py); its counts
// for the Lesson card's table and for small masked shapes are in tests/fixtures/lesson.json.
TEST_CASE("traffic - both loop orders equal the NumPy oracle's walk of the loops", "[traffic]") {
  const fixtures::json f = fixtures::load("lesson.json").at("flash");
  std::size_t n = 0;
  for (const auto& c : f.at("cases")) {
    TrafficOptions o;
    o.tq = c.at("tq");
    o.tk = c.at("tk");
    o.dk = c.at("dk");
    o.dv = c.at("dv");
    o.heads = c.at("heads");
    o.kv_heads = c.at("kvHeads");
    o.causal = c.at("causal");
    const std::string kernel = c.at("kernel");
    o.kernel = kernel == "naive" ? TrafficKernel::kStandard : TrafficKernel::kTiled;
    o.loop_order = kernel == "kv-outer" ? attn::TrafficLoopOrder::kKeyBlocksOuter
                                        : attn::TrafficLoopOrder::kQueryBlocksOuter;
    o.sram_bytes = c.at("sramBytes");
    INFO(c.dump());
    const Traffic t = closed_form(o);
    CHECK(t.loaded_bytes == c.at("loaded").get<std::uint64_t>());
    CHECK(t.stored_bytes == c.at("stored").get<std::uint64_t>());
    CHECK(t.footprint_bytes == c.at("footprint").get<std::uint64_t>());
    CHECK(t.block_rows == c.at("br").get<std::uint64_t>());
    CHECK(t.block_cols == c.at("bc").get<std::uint64_t>());
    ++n;
  }
  CHECK(n > 200);
}

TEST_CASE("traffic - bad sizes name their field", "[traffic][errors]") {
  TrafficOptions base;
  base.tq = base.tk = 16;
  base.dk = base.dv = 8;
  base.heads = 4;
  base.kv_heads = 2;
  base.kernel = TrafficKernel::kTiled;
  base.sram_bytes = 1024;
  Traffic t;
  REQUIRE(attn::traffic(base, &t).ok());
  auto field = [&](TrafficOptions o) {
    Traffic r;
    const attn::Status st = attn::traffic(o, &r);
    CHECK(st.message.find(st.field) != std::string::npos);
    return st.field;
  };
  TrafficOptions o = base;
  o.tq = 0;
  CHECK(field(o) == "tq");
  o = base;
  o.tk = 0;
  CHECK(field(o) == "tk");
  o = base;
  o.dk = 0;
  CHECK(field(o) == "dk");
  o = base;
  o.dv = 0;
  CHECK(field(o) == "dv");
  o = base;
  o.heads = 0;
  CHECK(field(o) == "heads");
  o = base;
  o.kv_heads = 3;
  CHECK(field(o) == "kvHeads");
  o = base;
  o.sram_bytes = 16 * 8 - 1;  // one block of width 8 needs 128 bytes
  CHECK(field(o) == "sramBytes");
  o.sram_bytes = 16 * 8;
  CHECK(attn::traffic(o, &t).ok());
  CHECK(t.block_cols == 1);
  o = base;
  o.kernel = TrafficKernel::kStandard;
  o.sram_bytes = 0;  // the standard algorithm does not use it
  CHECK(attn::traffic(o, &t).ok());
  o.tq = o.tk = std::uint64_t{1} << 31;
  o.heads = 1u << 20;
  o.kv_heads = 1;
  CHECK(field(o) == "tq");  // heads tq tk 4 bytes overflows 64 bits
}
