// What the attn_core sessions share (attention_session.cpp, backward_session.cpp,
// introspect_bindings.cpp): reading the options api.js has already normalised, the masks
// declared before they are copied, the session-owned input copies and the diagnostics of a
// result. Nothing here throws or aborts: errors are Status values.
#pragma once

#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "attn/attention.hpp"
#include "attn/introspect.hpp"
#include "embind_common.hpp"

namespace attn_bind {

// Options common to attention and multi-head attention, already normalised by api.js.
attn::Status read_common(const val& o, attn::MaskSpec* mask, std::optional<double>* scale,
                         attn::MaskFill* fill, std::size_t* cap);

// The variant's options (attn/variants.hpp), already type-checked by api.js (withVariant).
attn::Status read_variant(const val& o, attn::Variant* v);

// Shape, masks (declared with their lengths until copied), scale, fill, kernel, dropout.
attn::Status read_attention(const val& o, attn::AttentionOptions* opts, bool* tiled);

// opts.kernel ('naive' | 'tiled', checked by api.js) is the tiled kernel.
bool tiled_kernel(const val& o);

// The masks of an options object with their real lengths, before their bytes are in the
// heap: validate() needs only which masks are present and their sizes, so a wrong length or
// an over-cap shape fails before anything is copied. The data points at kNotCopied until
// Inputs::copy_masks() points it at the session's copies.
inline constexpr std::uint8_t kNotCopied = 1;
void declare_masks(const val& o, attn::MaskSpec* m);

// The copies of q, k, v, dOut and the masks one session keeps between calls (after validation).
struct Inputs {
  std::vector<float> q, k, v, d_out;
  std::vector<double> q64, k64, v64, d_out64;  // precision 'float64'
  std::vector<std::uint8_t> pad, mask;

  void copy_masks(const val& o, attn::MaskSpec* m);
  void copy(const val& q_in, const val& k_in, const val& v_in, const val& o,
            attn::AttentionOptions* opts);
  // q, k and v widened to doubles (Float32Array or Float64Array in), and the masks.
  void copy64(const val& q_in, const val& k_in, const val& v_in, const val& o, attn::MaskSpec* m);
};

// {ok: true, bytes} with Infinity for a saturated estimate.
val bytes_result(std::size_t n);

// The diagnostics of a result into r (entropy, lse, rowSums, counts, NaN rows per head,
// weights, scores, scale), as views the JS layer copies at once.
template <class T>
val diag_into(val r, const attn::AttentionResult<T>& a, double scale) {
  r.set("entropy", view(a.entropy.data(), a.entropy.size()));
  r.set("lse", view(a.lse.data(), a.lse.size()));
  r.set("rowSums", view(a.row_sums.data(), a.row_sums.size()));
  r.set("fullyMaskedRows", static_cast<double>(a.diag.fully_masked_rows));
  r.set("nanRows", static_cast<double>(a.diag.nan_rows));
  r.set("infScoreRows", static_cast<double>(a.diag.inf_score_rows));
  r.set("scale", scale);
  val per_head = val::array();                    // NaN rows per query head (sum = nanRows)
  const std::size_t heads = a.output.shape()[0];  // the counts sum to nanRows: skip the scan at 0
  const std::vector<std::size_t> counts =
      a.diag.nan_rows ? attn::nan_rows_per_head(a) : std::vector<std::size_t>(heads, 0);
  for (std::size_t n : counts) per_head.call<void>("push", static_cast<double>(n));
  r.set("nanRowsPerHead", per_head);
  r.set("weights", a.weights.size() ? view(a.weights.data(), a.weights.size()) : val::null());
  r.set("scores", a.scores.size() ? view(a.scores.data(), a.scores.size()) : val::null());
  return r;
}

}  // namespace attn_bind
