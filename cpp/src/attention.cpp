// attention (attn/attention.hpp): the naive entry point, its xtensor form, and the form that
// names the kernel. dispatch.cpp validates, chooses the kernel and runs it.
#include "attn/attention.hpp"

#include <string>

#include "dispatch.hpp"

namespace attn {

template <class T>
Status attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                 std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out) {
  return detail::run_attention(q, q_len, k, k_len, v, v_len, opts, Kernel::kNaive, out);
}

template <class T>
Status attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                 std::size_t v_len, const AttentionOptions& opts, Kernel kernel,
                 AttentionResult<T>* out) {
  return detail::run_attention(q, q_len, k, k_len, v, v_len, opts, kernel, out);
}

template <class T>
Status attention(const xt::xtensor<T, 3>& q, const xt::xtensor<T, 3>& k, const xt::xtensor<T, 3>& v,
                 AttentionOptions opts, AttentionResult<T>* out) {
  opts.shape = Shape{q.shape(0), k.shape(0), q.shape(1), k.shape(1), q.shape(2), v.shape(2)};
  if (k.shape(2) != q.shape(2)) {
    return Status::Invalid("k", "k's last axis (" + std::to_string(k.shape(2)) +
                                    ") must equal q's d_k (" + std::to_string(q.shape(2)) + ")");
  }
  if (v.shape(0) != k.shape(0) || v.shape(1) != k.shape(1)) {
    return Status::Invalid("v", "v must have the same heads and positions as k");
  }
  return attention(q.data(), q.size(), k.data(), k.size(), v.data(), v.size(), opts, out);
}

template Status attention<float>(const float*, std::size_t, const float*, std::size_t, const float*,
                                 std::size_t, const AttentionOptions&, AttentionResult<float>*);
template Status attention<double>(const double*, std::size_t, const double*, std::size_t,
                                  const double*, std::size_t, const AttentionOptions&,
                                  AttentionResult<double>*);
template Status attention<float>(const float*, std::size_t, const float*, std::size_t, const float*,
                                 std::size_t, const AttentionOptions&, Kernel,
                                 AttentionResult<float>*);
template Status attention<double>(const double*, std::size_t, const double*, std::size_t,
                                  const double*, std::size_t, const AttentionOptions&, Kernel,
                                  AttentionResult<double>*);
template Status attention<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&,
                                 const xt::xtensor<float, 3>&, AttentionOptions,
                                 AttentionResult<float>*);
template Status attention<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&,
                                  const xt::xtensor<double, 3>&, AttentionOptions,
                                  AttentionResult<double>*);

}  // namespace attn
