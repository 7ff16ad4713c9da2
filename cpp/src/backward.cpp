// attention_backward (attn/backward.hpp): checks, the forward pass when the caller gives none,
// zeroed gradients; dispatch.cpp chooses the backward kernel and runs it (backward_kernels.hpp,
// and the SIMD128 one where it applies). Maths and fill-policy semantics: attn/backward.hpp.
#include "attn/backward.hpp"

#include <string>

#include "dispatch.hpp"

namespace attn {

namespace {

template <class T>
Status check_forward(const Shape& s, Kernel kernel, const AttentionResult<T>& f) {
  const std::size_t rows = s.heads * s.tq;
  if (f.output.size() != rows * s.dv || f.lse.size() != rows) {
    return Status::Invalid("forward",
                           "forward must be the result of the same attention call (output has " +
                               std::to_string(f.output.size()) + " values, expected " +
                               std::to_string(rows * s.dv) + ")");
  }
  if (kernel == Kernel::kNaive && f.weights.size() != rows * s.tk) {
    return Status::Invalid("forward",
                           "the naive backward needs the forward's weights (heads*tq*tk = " +
                               std::to_string(rows * s.tk) + " values), got " +
                               std::to_string(f.weights.size()));
  }
  return Status::Ok();
}

}  // namespace

template <class T>
Status attention_backward(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                          std::size_t v_len, const T* d_out, std::size_t d_out_len,
                          const AttentionOptions& opts, Kernel kernel,
                          const AttentionResult<T>* forward, AttentionGrads<T>* out) {
  const Shape& s = opts.shape;
  Status st = validate_backward(opts, q_len, k_len, v_len, d_out_len, kernel, sizeof(T));
  if (!st.ok()) return st;
  if (forward) {
    st = check_forward(s, kernel, *forward);
    if (!st.ok()) return st;
  }
  // The forward pass, unless given (then out->forward is left as it was: the caller's
  // result may even be out->forward itself).
  const AttentionResult<T>* fwd = forward;
  if (!fwd) {
    st = detail::run_attention(q, q_len, k, k_len, v, v_len, opts, kernel, &out->forward);
    if (!st.ok()) return st;
    fwd = &out->forward;
  }
  out->dq = xt::zeros<T>({s.heads, s.tq, s.dk});
  out->dk = xt::zeros<T>({s.kv_heads, s.tk, s.dk});
  out->dv = xt::zeros<T>({s.kv_heads, s.tk, s.dv});
  detail::run_backward(q, k, v, d_out, opts, kernel, *fwd, out);
  return Status::Ok();
}

template Status attention_backward<float>(const float*, std::size_t, const float*, std::size_t,
                                          const float*, std::size_t, const float*, std::size_t,
                                          const AttentionOptions&, Kernel,
                                          const AttentionResult<float>*, AttentionGrads<float>*);
template Status attention_backward<double>(const double*, std::size_t, const double*, std::size_t,
                                           const double*, std::size_t, const double*, std::size_t,
                                           const AttentionOptions&, Kernel,
                                           const AttentionResult<double>*, AttentionGrads<double>*);

}  // namespace attn
