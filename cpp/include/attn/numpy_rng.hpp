// NumPy's `numpy.random.default_rng(seed)` stream, bit for bit (checked against NumPy 1.24).
//
// default_rng(seed) is Generator(PCG64(SeedSequence(seed))). Three documented pieces:
//
// 1. SeedSequence (O'Neill's seed_seq design as NumPy writes it): the integer seed is cut
//    into 32-bit words (least significant first; 0 is one word), hashed into a pool of 4
//    words, every pool word mixed with every other, then generate_state() hashes the pool
//    out again as 8 words = 4 little-endian uint64: s0, s1, i0, i1.
// 2. PCG64 (O'Neill 2014, "XSL RR 128/64"): a 128-bit LCG
//        state <- state * M + inc  (mod 2^128),  M = 0x2360ED051FC65DA4_4385DF649FCCF645,
//    seeded with initstate = s0:s1 and inc = (i0:i1 << 1) | 1 the PCG way (state = 0,
//    step, state += initstate, step). Each output first steps, then returns
//    rotr64(hi ^ lo, hi >> 58) of the new state.
// 3. Generator methods:
//    random()           (next_u64 >> 11) * 2^-53, a double in [0, 1);
//    standard_normal()  NumPy's 256-layer ziggurat (Marsaglia & Tsang 2000): one word
//                       gives the layer (low 8 bits), the sign (next bit) and a 52-bit
//                       rabs; x = rabs * wi[layer] is accepted at once when
//                       rabs < ki[layer] (about 99 %); otherwise layer 0 samples the tail
//                       beyond r = 3.654... with two log1p draws, and other layers test
//                       the wedge against exp(-x^2/2) with one more random().
//    `rng.normal(size=n)` with the default loc 0, scale 1 is the same values.
// The tables are NumPy's (cpp/src/ziggurat_tables.hpp, written and checked by
// tests/oracle/gen_numpy_rng.py, whose docstring says why they are read, not recomputed).
//
// Used for the lesson-2 example so the page shows the matrices a student prints; the
// other examples keep attn::Rng (SplitMix64), which is simpler to re-implement.
// The 128-bit arithmetic is written with two 64-bit halves (no __int128: portable to wasm32).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn {

// NumPy's SeedSequence(seed).generate_state(n_words, np.uint32) for pool size 4 and no
// spawn key: writes n_words 32-bit words to out.
void numpy_seed_sequence(std::uint64_t seed, std::uint32_t* out, std::size_t n_words);

class NumpyRng {
 public:
  // As numpy.random.default_rng(seed) for 0 <= seed < 2^64.
  explicit NumpyRng(std::uint64_t seed);

  std::uint64_t next_u64();  // PCG64.random_raw()
  double random();           // Generator.random()
  double standard_normal();  // Generator.standard_normal() (= normal() with loc 0, scale 1)

  // The 128-bit state and increment as (high, low) words, as NumPy's
  // bit_generator.state["state"] reports them.
  struct State {
    std::uint64_t state_hi, state_lo, inc_hi, inc_lo;
  };
  State state() const { return {hi_, lo_, inc_hi_, inc_lo_}; }

 private:
  void step();
  std::uint64_t hi_ = 0, lo_ = 0, inc_hi_ = 0, inc_lo_ = 0;
};

}  // namespace attn
