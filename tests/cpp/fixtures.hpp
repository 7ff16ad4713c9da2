// Loading the NumPy oracle's JSON fixtures (tests/fixtures, written by tests/oracle).
// Non-finite numbers are stored as the strings "nan", "inf" and "-inf".
#pragma once

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.hpp"

#ifndef ATTN_TESTS_SANITIZED
#define ATTN_TESTS_SANITIZED 0
#endif

namespace fixtures {

using json = nlohmann::json;

// The finite-difference checks probe every kFdStride-th element of each tensor (q, k, v; a
// model's parameters). Under ASan + UBSan (the native-asan preset, there for memory errors and
// undefined behaviour) a stride: every probe reruns the same forward on the same shapes, so the
// sanitizers watch the same code and memory at a fifth of the cost. Natively and in wasm every
// element is probed, against the same tolerance.
inline constexpr std::size_t kFdStride = ATTN_TESTS_SANITIZED ? 5 : 1;

inline json load(const std::string& name) {
  std::ifstream in(std::string(ATTN_FIXTURE_DIR) + "/" + name);
  if (!in)
    throw std::runtime_error("missing fixture " + name + " (run tests/oracle/gen_fixtures.py)");
  return json::parse(in);
}

inline double num(const json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("bad number string " + s);
  }
  return j.get<double>();
}

template <class T>
std::vector<T> vec(const json& j) {
  std::vector<T> v;
  if (j.is_null()) return v;
  v.reserve(j.size());
  for (const auto& x : j) v.push_back(static_cast<T>(num(x)));
  return v;
}

// Inputs are stored as float32 values in shortest decimal form: parse, round to
// float32 (exact), then widen, so a float64 run sees the oracle's very numbers.
template <class T>
std::vector<T> inputs(const json& j) {
  std::vector<T> v;
  v.reserve(j.size());
  for (const auto& x : j) v.push_back(static_cast<T>(static_cast<float>(num(x))));
  return v;
}

inline std::vector<std::uint8_t> bytes(const json& j) {
  std::vector<std::uint8_t> v;
  for (const auto& x : j)
    v.push_back(static_cast<std::uint8_t>(x.is_boolean() ? x.get<bool>() : x.get<int>()));
  return v;
}

// Largest |a - b| over two arrays; NaN must sit where NaN sits (else +inf is returned),
// and equal infinities count as 0.
template <class A, class B>
double max_abs_diff(const A* a, const B* b, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return std::numeric_limits<double>::infinity();
      continue;
    }
    m = std::max(m, std::abs(x - y));
  }
  return m;
}

// As max_abs_diff, each difference relative to max(1, |b|).
template <class A, class B>
double max_rel_diff(const A* a, const B* b, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    m = std::max(m, max_abs_diff(&x, &y, 1) / std::max(1.0, std::abs(y)));
  }
  return m;
}

// Options and owned mask buffers for one attention fixture case.
struct Case {
  std::string name, family;
  attn::AttentionOptions opts;
  std::vector<std::uint8_t> padding, mask;
  json j;
};

inline Case read_case(const json& c) {
  Case k;
  k.j = c;
  k.name = c.at("name").get<std::string>();
  k.family = c.at("family").get<std::string>();
  const json& o = c.at("opts");
  k.opts.shape = {o.at("heads").get<std::size_t>(), o.at("kvHeads").get<std::size_t>(),
                  o.at("tq").get<std::size_t>(),    o.at("tk").get<std::size_t>(),
                  o.at("dk").get<std::size_t>(),    o.at("dv").get<std::size_t>()};
  k.opts.mask.causal = o.value("causal", false);
  k.opts.mask.window = o.value("window", 0);
  if (o.contains("keyPadding") && !o["keyPadding"].is_null()) k.padding = bytes(o["keyPadding"]);
  if (o.contains("mask") && !o["mask"].is_null()) k.mask = bytes(o["mask"]);
  if (o.contains("scale") && !o["scale"].is_null()) k.opts.scale = o["scale"].get<double>();
  attn::parse_mask_fill(o.value("maskFill", std::string("neg_inf")).c_str(), &k.opts.fill);
  return k;
}

// Point the options at the case's own mask buffers (after any copy of the Case).
inline attn::AttentionOptions bind(Case& k) {
  attn::AttentionOptions o = k.opts;
  o.mask.key_padding =
      k.padding.empty() ? nullptr : attn::Bytes(k.padding.data(), k.padding.size());
  o.mask.mask = k.mask.empty() ? nullptr : attn::Bytes(k.mask.data(), k.mask.size());
  return o;
}

}  // namespace fixtures
