// Every check an entry point makes before it allocates, and the memory estimates those checks
// compare with the cap. Callers that copy their inputs first (the wasm bindings) run these
// before copying; the entry points (attention.hpp, tiled.hpp, backward.hpp) run them again.
#pragma once

#include <cstddef>

#include "attn/status.hpp"
#include "attn/types.hpp"

namespace attn {

// Checks every field (shapes, divisibility, scale, mask sizes, the variant's options and
// which kernel supports them, memory) without allocating; the masks' sizes are the ones opts.mask
// carries. `materialise_weights` is true for the naive kernel; `elem_size` is sizeof the element
// type (float32 by default).
Status validate(const AttentionOptions& opts, std::size_t q_len, std::size_t k_len,
                std::size_t v_len, bool materialise_weights, std::size_t elem_size = sizeof(float));

// Bytes a call will allocate (outputs plus working memory), for the memory cap. `variant`
// adds the variant kernels' working copies of q and k (and v under float16).
std::size_t estimate_bytes(const Shape& s, std::size_t elem_size, bool materialise_weights,
                           bool return_scores, const Variant& variant = Variant{});

// Bytes of scratch the tiled kernel uses, independent of T.
std::size_t tiled_workspace_bytes(const Shape& s, std::size_t elem_size);

// Every check attention_backward makes before allocating (the forward's fields, "dOut",
// "kernel", "memory"), for callers that copy inputs first (the wasm bindings).
// The masks' sizes are the ones opts.mask carries, as in attn::validate.
Status validate_backward(const AttentionOptions& opts, std::size_t q_len, std::size_t k_len,
                         std::size_t v_len, std::size_t d_out_len, Kernel kernel,
                         std::size_t elem_size);

// Bytes attention_backward allocates (gradients, forward if recomputed, working memory);
// `variant` adds the variants' working copies of q and k and their per-row state.
std::size_t estimate_backward_bytes(const Shape& s, std::size_t elem_size, Kernel kernel,
                                    const Variant& variant = Variant{});

// Bytes of scratch the tiled backward uses beyond inputs, outputs and gradients: a few
// tiles, independent of T.
std::size_t tiled_backward_workspace_bytes(const Shape& s, std::size_t elem_size);

}  // namespace attn
