// The one place that decides which kernel runs (internal header). Every entry point
// (attention, attention_tiled, attention_backward) comes here; docs/kernels.md is the map of
// the kernels it chooses from, with when each runs, why it exists and which test pins it.
#pragma once

#include <cstddef>

#include "attn/status.hpp"
#include "attn/types.hpp"

namespace attn::detail {

// Validates (attn::validate), sizes the outputs, runs the forward kernel the options and
// `kernel` call for, then the shared bookkeeping (the NaN-row count, rowSums).
template <class T>
Status run_attention(const T* q, std::size_t q_len, const T* k, std::size_t k_len, const T* v,
                     std::size_t v_len, const AttentionOptions& opts, Kernel kernel,
                     AttentionResult<T>* out);

// Runs the backward kernel the options and `kernel` call for. The caller has validated
// (attn::validate_backward), checked `fwd` and zeroed g->dq, g->dk, g->dv in their shapes.
template <class T>
void run_backward(const T* q, const T* k, const T* v, const T* d_out, const AttentionOptions& opts,
                  Kernel kernel, const AttentionResult<T>& fwd, AttentionGrads<T>* g);

}  // namespace attn::detail
