#include "attn/numpy_example.hpp"

#include "attn/numpy_rng.hpp"

namespace attn {

Status numpy_random_example(const RandomExampleOptions& o, Example* out) {
  // Pass 1: random_example validates, sizes and names everything (its SplitMix64 draws
  // are then overwritten; at most the example cap of 16 Mi values, a few ms at the sizes
  // the page uses). Sharing it keeps one set of checks and limits for both generators.
  Status st = random_example(o, out);
  if (!st.ok()) return st;
  // Pass 2: redraw in the same order from NumPy's stream.
  NumpyRng rng(o.seed);
  for (std::vector<float>* w : {&out->x, &out->wq, &out->wk, &out->wv, &out->wo}) {
    for (float& v : *w) v = static_cast<float>(rng.standard_normal());
  }
  return Status::Ok();
}

Status lesson2_example(Example* out) {
  RandomExampleOptions o;
  o.seed = 0;
  o.t = 6;
  o.d_model = 8;
  o.heads = o.kv_heads = 1;
  o.dk = o.dv = 4;
  o.causal = true;
  return numpy_random_example(o, out);
}

}  // namespace attn
