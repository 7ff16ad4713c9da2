#include "attn/numpy_example.hpp"

#include <cmath>

#include "attn/numpy_rng.hpp"

namespace attn {

Status numpy_random_example(const RandomExampleOptions& o, Example* out) {
  // Pass 1: random_example validates, sizes and names everything (its SplitMix64 draws
  // are then overwritten; at most the example cap of 16 Mi values, a few ms at the sizes
  // the page uses). Sharing it keeps one set of checks and limits for both generators.
  Status st = random_example(o, out);
  if (!st.ok()) return st;
  // Pass 2: redraw in the same order from NumPy's stream; the scaled init multiplies
  // each weight draw (not X) by 1/sqrt(d_model) in double, as random_example does.
  NumpyRng rng(o.seed);
  const double w_sd =
      o.init == WeightInit::kScaled ? 1.0 / std::sqrt(static_cast<double>(o.d_model)) : 1.0;
  for (float& v : out->x) v = static_cast<float>(rng.standard_normal());
  for (std::vector<float>* w : {&out->wq, &out->wk, &out->wv, &out->wo}) {
    for (float& v : *w) v = static_cast<float>(w_sd * rng.standard_normal());
  }
  for (float& v : out->x_kv) v = static_cast<float>(rng.standard_normal());  // after W_o
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
