// Bench driver for the attention kernels, built natively (attn_bench) and as plain
// Node programs (attn_bench_wasm: SIMD kernels; attn_bench_wasm_scalar: the same core
// built with ATTN_SCALAR). Times the attention itself on given Q, K, V (scores, mask,
// softmax, A.V; no projections) inside the program, so the number is the kernel, not
// the copying of inputs across the JS boundary. bench/run.mjs drives it.
//
//   attn_bench --kernel naive|tiled|peak|backward-naive|backward-tiled|backward-workspace
//              --T 256,512 [--dk 64] [--heads 1] [--causal 1]
//              [--reps 1] [--warmup 1] [--offset 0]
// --offset N: Q, K, V start N floats past a 64-byte boundary (default 0: aligned).
// --peak-pair 1 (wasm): after each timed call, the peak loop (both forms) for ~5 ms; "peak"
// lists its GFLOP/s per call, so each call's share of the peak is a back-to-back pair.
// prints one JSON object per line: {"kernel","T","dk","heads","causal","ms":[...],
// "gflops","heapBytes"}; for --kernel peak, {"kernel":"peak","gflops","chain","acc","step"}
// (gflops: the larger of the two peak forms; step: the kernels' P.V step alone, data in L1).
// backward-*: attn::attention_backward with a random dO and the forward result passed in
// (computed before the clock starts), so "ms" is the backward pass alone.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "attn/tiled.hpp"

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#endif
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

std::size_t heap_bytes() {
#ifdef __EMSCRIPTEN__
  return emscripten_get_heap_size();
#else
  return 0;
#endif
}

// n floats starting `offset` floats past a 64-byte boundary (--offset: the kernels must not
// depend on the caller's alignment; malloc in wasm gives 8 bytes).
struct Buf {
  std::vector<float> store;
  float* p = nullptr;
  std::size_t n = 0;
  void assign(std::size_t count, std::size_t offset) {
    store.assign(count + 16 + offset, 0.f);
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(store.data());
    p = store.data() + ((64 - a % 64) % 64) / sizeof(float) + offset;
    n = count;
  }
  float* data() const { return p; }
  std::size_t size() const { return n; }
  float* begin() const { return p; }
  float* end() const { return p + n; }
};

struct Inputs {
  Buf q, k, v;
};

Inputs make_inputs(std::size_t heads, std::size_t t, std::size_t dk, std::size_t offset) {
  std::mt19937 g(42);
  std::normal_distribution<float> d(0.f, 1.f);
  Inputs in;
  for (Buf* vec : {&in.q, &in.k, &in.v}) {
    vec->assign(heads * t * dk, offset);
    for (float& x : *vec) x = d(g);
  }
  return in;
}

bool run_once(const std::string& kernel, const Inputs& in, const attn::AttentionOptions& o,
              attn::AttentionResult<float>* r);

struct Backward {
  std::vector<float> dout;
  attn::AttentionResult<float> fwd;
  attn::AttentionGrads<float> grads;
};

bool run_backward(const std::string& kernel, const Inputs& in, const attn::AttentionOptions& o,
                  Backward* b) {
  const attn::Kernel k = kernel == "backward-tiled" ? attn::Kernel::kTiled : attn::Kernel::kNaive;
  const attn::Status st = attn::attention_backward(
      in.q.data(), in.q.size(), in.k.data(), in.k.size(), in.v.data(), in.v.size(), b->dout.data(),
      b->dout.size(), o, k, &b->fwd, &b->grads);
  if (!st.ok()) std::fprintf(stderr, "attention_backward failed: %s\n", st.message.c_str());
  return st.ok();
}

// The forward result and dO a backward run needs (untimed).
bool prepare_backward(const std::string& kernel, const Inputs& in, const attn::AttentionOptions& o,
                      Backward* b) {
  std::mt19937 g(7);
  std::normal_distribution<float> d(0.f, 1.f);
  b->dout.resize(o.shape.heads * o.shape.tq * o.shape.dv);
  for (float& x : b->dout) x = d(g);
  return kernel == "backward-tiled" ? run_once("tiled", in, o, &b->fwd)
                                    : run_once("naive", in, o, &b->fwd);
}

bool run_once(const std::string& kernel, const Inputs& in, const attn::AttentionOptions& o,
              attn::AttentionResult<float>* r) {
  const attn::Status st = kernel == "tiled"
                              ? attn::attention_tiled(in.q.data(), in.q.size(), in.k.data(),
                                                      in.k.size(), in.v.data(), in.v.size(), o, r)
                              : attn::attention(in.q.data(), in.q.size(), in.k.data(), in.k.size(),
                                                in.v.data(), in.v.size(), o, r);
  if (!st.ok()) std::fprintf(stderr, "attention failed: %s\n", st.message.c_str());
  return st.ok();
}

#if defined(__wasm_simd128__)
// Both peak forms: keeps the 12 accumulators alive (so nothing is optimised away) and turns
// `steps` steps of 12 four-lane multiply-adds in `ms` into GFLOP/s.
double peak_result(const v128_t* a, long steps, double ms) {
  v128_t s = a[0];
  for (int i = 1; i < 12; ++i) s = wasm_f32x4_add(s, a[i]);
  if (wasm_f32x4_extract_lane(s, 0) == 12345.f) std::printf("#\n");
  return 12.0 * 4 * 2 * double(steps) / (ms * 1e6);
}
#endif

// Peak multiply-add throughput, first form: 12 independent chains acc = acc * m + c (one multiply
// and one add per lane per step, fused into one relaxed_madd in the relaxed-SIMD driver),
// m and c read at run time so nothing folds away.
double peak_gflops(float m, float c, long steps) {
#if defined(__wasm_simd128__)
  v128_t a[12];
  for (int i = 0; i < 12; ++i) a[i] = wasm_f32x4_splat(float(i) * 0.01f);
  const v128_t vm = wasm_f32x4_splat(m), vc = wasm_f32x4_splat(c);
  const double t0 = now_ms();
  for (long s = 0; s < steps; ++s) {
#ifdef ATTN_RELAXED_SIMD  // fused: a * m + c in one relaxed_madd (see simd_kernels.cpp)
#define ATTN_STEP(i) \
  a[i] = (v128_t)__builtin_wasm_fma_f32x4((__f32x4)a[i], (__f32x4)vm, (__f32x4)vc);
#else
#define ATTN_STEP(i) a[i] = wasm_f32x4_add(wasm_f32x4_mul(a[i], vm), vc);
#endif
    ATTN_STEP(0)
    ATTN_STEP(1)
    ATTN_STEP(2)
    ATTN_STEP(3)
    ATTN_STEP(4)
    ATTN_STEP(5) ATTN_STEP(6) ATTN_STEP(7) ATTN_STEP(8) ATTN_STEP(9) ATTN_STEP(10) ATTN_STEP(11)
#undef ATTN_STEP
  }
  return peak_result(a, steps, now_ms() - t0);
#else
  (void)m, (void)c, (void)steps;
  return 0;
#endif
}

// The same rate in the shape of the kernels' inner loops: 12 accumulators acc += x * m, the
// x loaded each step from a small ring (two vectors, as score_tile broadcasts two keys), so
// only the add is on a chain and the multiplies overlap. The form above puts the multiply on
// the chain too; with separate mul and add it is then bound by their summed latency, not by
// the ports, and understates what the kernels can reach. The peak is the larger of the two.
double peak_acc_gflops(float m, long steps) {
#if defined(__wasm_simd128__)
  alignas(16) float ring[256 * 8];
  for (int i = 0; i < 256 * 8; ++i) ring[i] = 0.001f * float(i % 17);
  v128_t a[12];
  for (int i = 0; i < 12; ++i) a[i] = wasm_f32x4_splat(0.f);
  const v128_t vm = wasm_f32x4_splat(m);
  const double t0 = now_ms();
  for (long s = 0; s < steps; ++s) {
    const float* p = ring + (s & 255) * 8;
    const v128_t x0 = wasm_v128_load(p), x1 = wasm_v128_load(p + 4);
#ifdef ATTN_RELAXED_SIMD
#define ATTN_STEP(i, x) \
  a[i] = (v128_t)__builtin_wasm_fma_f32x4((__f32x4)x, (__f32x4)vm, (__f32x4)a[i]);
#else
#define ATTN_STEP(i, x) a[i] = wasm_f32x4_add(a[i], wasm_f32x4_mul(x, vm));
#endif
    ATTN_STEP(0, x0)
    ATTN_STEP(1, x1)
    ATTN_STEP(2, x0)
    ATTN_STEP(3, x1)
    ATTN_STEP(4, x0)
    ATTN_STEP(5, x1)
    ATTN_STEP(6, x0)
    ATTN_STEP(7, x1)
    ATTN_STEP(8, x0)
    ATTN_STEP(9, x1)
    ATTN_STEP(10, x0)
    ATTN_STEP(11, x1)
#undef ATTN_STEP
  }
  return peak_result(a, steps, now_ms() - t0);
#else
  (void)m, (void)steps;
  return 0;
#endif
}

// What the kernels' inner step reaches when nothing else runs: the tiled forward's P.V
// block (2 query rows x 16 value columns: two broadcast weights, four value vectors and
// eight multiply-adds per key, pointers stepped) over a 64 x 64 key-major weight tile, 64
// value rows and 64 output rows, all in L1. Not a peak: unlike the loops above it loads its
// operands and steps its pointers, as the kernels must. The gap between the two is what the
// instruction mix costs on this core (on some the separate multiply and add of SIMD128
// leave the front end, not the FP pipes, as the limit; fused, the step has 10 fewer
// operations).
double kernel_step_gflops(long tiles) {
#if defined(__wasm_simd128__)
  constexpr int kN = 64;
  alignas(16) static float w[kN * kN], v[kN * kN], y[kN * kN];
  for (int i = 0; i < kN * kN; ++i) {
    w[i] = 0.001f * float(i % 7), v[i] = 0.001f * float(i % 11), y[i] = 0.f;
  }
#ifdef ATTN_RELAXED_SIMD
#define ATTN_MADD(a, b, c) \
  (v128_t) __builtin_wasm_fma_f32x4((__f32x4)(a), (__f32x4)(b), (__f32x4)(c))
#else
#define ATTN_MADD(a, b, c) wasm_f32x4_add(wasm_f32x4_mul(a, b), c)
#endif
  const double t0 = now_ms();
  for (long tile = 0; tile < tiles; ++tile) {
    for (int r = 0; r < kN; r += 2) {
      float *y0 = y + r * kN, *y1 = y0 + kN;
#pragma clang loop unroll(disable)
      for (int c = 0; c < kN; c += 16) {
        v128_t a0 = wasm_v128_load(y0 + c), a1 = wasm_v128_load(y0 + c + 4),
               a2 = wasm_v128_load(y0 + c + 8), a3 = wasm_v128_load(y0 + c + 12);
        v128_t b0 = wasm_v128_load(y1 + c), b1 = wasm_v128_load(y1 + c + 4),
               b2 = wasm_v128_load(y1 + c + 8), b3 = wasm_v128_load(y1 + c + 12);
        const float* vj = v + c;
#pragma clang loop unroll(disable)
        for (const float* p = w + r; p != w + r + kN * kN; p += kN, vj += kN) {
          const v128_t x = wasm_v128_load32_splat(p), z = wasm_v128_load32_splat(p + 1);
          const v128_t v0 = wasm_v128_load(vj), v1 = wasm_v128_load(vj + 4),
                       v2 = wasm_v128_load(vj + 8), v3 = wasm_v128_load(vj + 12);
          a0 = ATTN_MADD(x, v0, a0), a1 = ATTN_MADD(x, v1, a1);
          a2 = ATTN_MADD(x, v2, a2), a3 = ATTN_MADD(x, v3, a3);
          b0 = ATTN_MADD(z, v0, b0), b1 = ATTN_MADD(z, v1, b1);
          b2 = ATTN_MADD(z, v2, b2), b3 = ATTN_MADD(z, v3, b3);
        }
        wasm_v128_store(y0 + c, a0), wasm_v128_store(y0 + c + 4, a1);
        wasm_v128_store(y0 + c + 8, a2), wasm_v128_store(y0 + c + 12, a3);
        wasm_v128_store(y1 + c, b0), wasm_v128_store(y1 + c + 4, b1);
        wasm_v128_store(y1 + c + 8, b2), wasm_v128_store(y1 + c + 12, b3);
      }
    }
  }
#undef ATTN_MADD
  const double ms = now_ms() - t0;
  if (y[5] == 12345.f) std::printf("#\n");
  return 2.0 * kN * kN * kN * double(tiles) / (ms * 1e6);
#else
  (void)tiles;
  return 0;
#endif
}

std::vector<std::size_t> parse_list(const char* s) {
  std::vector<std::size_t> v;
  for (const char* p = s; *p;) {
    v.push_back(std::strtoull(p, const_cast<char**>(&p), 10));
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernel = "tiled";
  std::vector<std::size_t> ts = {1024};
  std::size_t dk = 64, heads = 1, reps = 1, warmup = 1, offset = 0;
  bool peak_pair = false;
  bool causal = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--kernel")
      kernel = v;
    else if (a == "--T")
      ts = parse_list(v);
    else if (a == "--dk")
      dk = std::strtoull(v, nullptr, 10);
    else if (a == "--heads")
      heads = std::strtoull(v, nullptr, 10);
    else if (a == "--causal")
      causal = std::atoi(v) != 0;
    else if (a == "--reps")
      reps = std::strtoull(v, nullptr, 10);
    else if (a == "--warmup")
      warmup = std::strtoull(v, nullptr, 10);
    else if (a == "--offset")
      offset = std::strtoull(v, nullptr, 10);
    else if (a == "--peak-pair")
      peak_pair = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (kernel == "peak") {
    peak_gflops(0.999f, 0.001f, 2000000);  // warm-up
    peak_acc_gflops(0.999f, 2000000);
    kernel_step_gflops(200);
    double chain = 0, acc = 0, step = 0;
    for (std::size_t r = 0; r < reps; ++r) {
      chain = std::max(chain, peak_gflops(0.999f, 0.001f, 20000000));
      acc = std::max(acc, peak_acc_gflops(0.999f, 20000000));
      step = std::max(step, kernel_step_gflops(2000));
    }
    std::printf("{\"kernel\":\"peak\",\"gflops\":%.3f,\"chain\":%.3f,\"acc\":%.3f,\"step\":%.3f}\n",
                std::max(chain, acc), chain, acc, step);
    return 0;
  }
  if (kernel == "workspace") {  // the tiled kernel's scratch beyond Q, K, V and the output
    std::string t_list, bytes;
    for (std::size_t t : ts) {
      const attn::Shape s{heads, heads, t, t, dk, dk};
      t_list += (t_list.empty() ? "" : ",") + std::to_string(t);
      bytes += (bytes.empty() ? "" : ",") + std::to_string(attn::tiled_workspace_bytes(s, 4));
    }
    std::printf("{\"kernel\":\"workspace\",\"T\":[%s],\"bytes\":[%s]}\n", t_list.c_str(),
                bytes.c_str());
    return 0;
  }
  if (kernel == "backward-workspace") {  // the tiled backward's scratch beyond inputs/outputs
    std::string t_list, bytes;
    for (std::size_t t : ts) {
      const attn::Shape s{heads, heads, t, t, dk, dk};
      t_list += (t_list.empty() ? "" : ",") + std::to_string(t);
      bytes +=
          (bytes.empty() ? "" : ",") + std::to_string(attn::tiled_backward_workspace_bytes(s, 4));
    }
    std::printf("{\"kernel\":\"backward-workspace\",\"T\":[%s],\"bytes\":[%s]}\n", t_list.c_str(),
                bytes.c_str());
    return 0;
  }
  const bool backward = kernel.rfind("backward-", 0) == 0;
  attn::AttentionOptions o;
  attn::AttentionResult<float> r;
  Backward b;
  // Warm-up on a small problem (tiers the code up in engines that start in a baseline compiler).
  for (std::size_t w = 0; w < warmup; ++w) {
    const Inputs small = make_inputs(heads, 256, dk, offset);
    o.shape = {heads, heads, 256, 256, dk, dk};
    o.mask.causal = causal;
    if (backward) {
      if (!prepare_backward(kernel, small, o, &b)) return 1;
      for (int x = 0; x < 3; ++x)
        if (!run_backward(kernel, small, o, &b)) return 1;
      continue;
    }
    for (int x = 0; x < 3; ++x)
      if (!run_once(kernel, small, o, &r)) return 1;
  }
  for (std::size_t t : ts) {
    const Inputs in = make_inputs(heads, t, dk, offset);
    o.shape = {heads, heads, t, t, dk, dk};
    o.mask.causal = causal;
    o.memory_cap = static_cast<std::size_t>(-1);
    std::string ms, peaks;
    if (backward && !prepare_backward(kernel, in, o, &b)) return 1;
    for (std::size_t rep = 0; rep < reps; ++rep) {
      const double t0 = now_ms();
      if (backward ? !run_backward(kernel, in, o, &b) : !run_once(kernel, in, o, &r)) return 1;
      const double dt = now_ms() - t0;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.4f", rep ? "," : "", dt);
      ms += buf;
      if (peak_pair) {  // the peak right after each call: a ratio that holds on a busy machine
        const double pk =
            std::max(peak_gflops(0.999f, 0.001f, 4000000), peak_acc_gflops(0.999f, 4000000));
        std::snprintf(buf, sizeof buf, "%s%.3f", rep ? "," : "", pk);
        peaks += buf;
      }
    }
    double checksum = 0;
    if (backward) {
      for (std::size_t x = 0; x < b.grads.dq.size(); x += 97) checksum += b.grads.dq.data()[x];
    } else {
      for (std::size_t x = 0; x < r.output.size(); x += 97) checksum += r.output.data()[x];
    }
    std::printf(
        "{\"kernel\":\"%s\",\"T\":%zu,\"dk\":%zu,\"heads\":%zu,\"causal\":%s,\"ms\":[%s],"
        "\"heapBytes\":%zu,\"checksum\":%.6g%s%s%s}\n",
        kernel.c_str(), t, dk, heads, causal ? "true" : "false", ms.c_str(), heap_bytes(), checksum,
        peak_pair ? ",\"peak\":[" : "", peaks.c_str(), peak_pair ? "]" : "");
    std::fflush(stdout);
  }
  return 0;
}
