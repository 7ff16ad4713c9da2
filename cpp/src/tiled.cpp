// attention_tiled (attn/tiled.hpp): the tiled entry point. dispatch.cpp validates, chooses the
// kernel and runs it.
#include "attn/tiled.hpp"

#include "dispatch.hpp"

namespace attn {

template <class T>
Status attention_tiled(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                       std::size_t v_len, const AttentionOptions& opts, AttentionResult<T>* out) {
  return detail::run_attention(q, q_len, k, k_len, v, v_len, opts, Kernel::kTiled, out);
}

template Status attention_tiled<float>(const float*, std::size_t, const float*, std::size_t,
                                       const float*, std::size_t, const AttentionOptions&,
                                       AttentionResult<float>*);
template Status attention_tiled<double>(const double*, std::size_t, const double*, std::size_t,
                                        const double*, std::size_t, const AttentionOptions&,
                                        AttentionResult<double>*);

}  // namespace attn
