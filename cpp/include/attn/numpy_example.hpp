// Examples drawn from NumPy's default_rng stream (attn/numpy_rng.hpp), so the page can
// show exactly the matrices a student prints with NumPy.
#pragma once

#include "attn/examples.hpp"
#include "attn/status.hpp"

namespace attn {

// random_example's shapes, checks, tokens and draw order (X, W_q, W_k, W_v, W_o, then X_kv with
// kv_tokens, each row-major), but every value is drawn from NumpyRng(o.seed).standard_normal(),
// i.e. numpy.random.default_rng(seed).normal(size=shape) in that order, rounded to float32. With
// lesson 2's shapes (T 6, d_model 8, one head, d_k 4, seed 0) X, W_q, W_k, W_v are the lesson's own
// `X` and three `rng.normal(size=(d, dk))` draws; W_o (which the lesson does not use) is the
// stream's next (d_k, d_model) block.
Status numpy_random_example(const RandomExampleOptions& o, Example* out);

// Lesson 2's example: seed 0, tokens t0..t5, d_model 8, one head, d_k = d_v = 4, causal.
Status lesson2_example(Example* out);

}  // namespace attn
