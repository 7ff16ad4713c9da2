// Random inputs for property tests (std::mt19937, independent of attn::Rng).
#pragma once

#include <random>
#include <vector>

#include "attn/attention.hpp"

namespace testing_inputs {

template <class T>
std::vector<T> normal(std::size_t n, std::mt19937& g, double sd = 1.0) {
  std::normal_distribution<double> d(0.0, sd);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(g));
  return v;
}

template <class T>
struct Qkv {
  std::vector<T> q, k, v;
};

template <class T>
Qkv<T> make_qkv(const attn::Shape& s, std::mt19937& g, double sd = 1.0) {
  return {normal<T>(s.heads * s.tq * s.dk, g, sd), normal<T>(s.kv_heads * s.tk * s.dk, g, sd),
          normal<T>(s.kv_heads * s.tk * s.dv, g, sd)};
}

}  // namespace testing_inputs
