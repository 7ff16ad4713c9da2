// Random attention configurations for the backward and dropout tests: a shape, its inputs,
// owned mask buffers and the options pointing at them.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "attn/attention.hpp"
#include "attn/backward.hpp"
#include "random_inputs.hpp"

namespace backward_case {

struct Config {
  attn::AttentionOptions opts;
  std::vector<std::uint8_t> padding, mask;
  std::vector<double> q, k, v, dout;
};

// Every option drawn at random: GQA/MQA, T_q != T_k, causal, window, padding, custom
// mask, scale, fill policy and (if `dropout`) a dropout rate and seed. Under neg_inf a
// fully masked row makes the output NaN; `allow_nan_rows = false` switches such configs to
// the finite policy so a finite-difference check stays meaningful.
inline std::unique_ptr<Config> random_config(std::mt19937& g, bool dropout, bool allow_nan_rows,
                                             std::size_t max_t = 9) {
  auto c = std::make_unique<Config>();
  std::uniform_int_distribution<int> coin(0, 1), t(1, static_cast<int>(max_t)), d(1, 5);
  std::uniform_int_distribution<int> hv(0, 3);
  const std::size_t kv_opts[][2] = {{1, 1}, {2, 2}, {4, 2}, {3, 1}};
  const auto& hk = kv_opts[hv(g)];
  attn::AttentionOptions& o = c->opts;
  o.shape = {
      hk[0], hk[1], std::size_t(t(g)), std::size_t(t(g)), std::size_t(d(g)), std::size_t(d(g))};
  const attn::Shape& s = o.shape;
  o.mask.causal = coin(g);
  if (coin(g) && coin(g)) o.mask.window = std::size_t(1 + t(g) % 4);
  if (coin(g)) {
    c->padding.assign(s.tk, 1);
    for (auto& x : c->padding) x = std::uniform_int_distribution<int>(0, 3)(g) != 0;
  }
  if (coin(g) && coin(g)) {
    c->mask.assign(s.tq * s.tk, 1);
    for (auto& x : c->mask) x = std::uniform_int_distribution<int>(0, 4)(g) != 0;
  }
  o.mask.key_padding =
      c->padding.empty() ? nullptr : attn::Bytes(c->padding.data(), c->padding.size());
  o.mask.mask = c->mask.empty() ? nullptr : attn::Bytes(c->mask.data(), c->mask.size());
  if (coin(g)) o.scale = std::uniform_real_distribution<double>(0.2, 2.0)(g);
  o.fill = static_cast<attn::MaskFill>(std::uniform_int_distribution<int>(0, 2)(g));
  if (dropout) {
    o.dropout = std::uniform_real_distribution<double>(0.1, 0.6)(g);
    o.dropout_seed = g();
  }
  bool any_full = false;
  for (std::size_t i = 0; i < s.tq; ++i) {
    bool any = false;
    for (std::size_t j = 0; j < s.tk; ++j) any |= attn::is_allowed(o.mask, i, j, s.tq, s.tk);
    any_full |= !any;
  }
  if (any_full && !allow_nan_rows && o.fill == attn::MaskFill::kNegInf) {
    o.fill = attn::MaskFill::kFinite;
  }
  auto in = testing_inputs::make_qkv<double>(s, g);
  c->q = in.q, c->k = in.k, c->v = in.v;
  c->dout = testing_inputs::normal<double>(s.heads * s.tq * s.dv, g);
  return c;
}

}  // namespace backward_case
