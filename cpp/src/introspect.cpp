#include "attn/introspect.hpp"

#include "attn/mask.hpp"
#include "diagnostics.hpp"
#include "simd_kernels.hpp"

namespace attn {

Status allowed_mask(const MaskSpec& m, std::size_t tq, std::size_t tk, std::size_t memory_cap,
                    std::vector<std::uint8_t>* out) {
  // Pass 1: the same checks (sizes, mask lengths, cap) as a one-head call with d = 1 whose
  // weights hold tq*tk floats, which is more than the tq*tk bytes this mask needs.
  AttentionOptions o;
  o.shape = Shape{1, 1, tq, tk, 1, 1};
  o.mask = m;
  o.memory_cap = memory_cap;
  Status st = validate(o, tq, tk, tk, true);
  if (!st.ok()) return st;
  // Pass 2: the rule itself, row by row through the kernels' own key range.
  out->assign(tq * tk, 0);
  for (std::size_t i = 0; i < tq; ++i) {
    const KeyRange r = key_range(m, i, tq, tk);
    for (std::size_t j = r.lo; j < r.hi; ++j) (*out)[i * tk + j] = is_allowed(m, i, j, tq, tk);
  }
  return Status::Ok();
}

template <class T>
std::vector<std::size_t> nan_rows_per_head(const AttentionResult<T>& r) {
  const std::size_t heads = r.output.shape()[0], tq = r.output.shape()[1];
  const std::size_t rows = heads * tq;
  const std::size_t tk = rows ? r.weights.size() / rows : 0;
  const std::size_t dv = rows ? r.output.size() / rows : 0;
  std::vector<std::size_t> out(heads, 0);
  for (std::size_t row = 0; row < rows; ++row) {
    out[row / tq] += detail::any_nan(r.weights.data() + row * tk, tk) ||
                     detail::any_nan(r.output.data() + row * dv, dv);
  }
  return out;
}

template std::vector<std::size_t> nan_rows_per_head<float>(const AttentionResult<float>&);
template std::vector<std::size_t> nan_rows_per_head<double>(const AttentionResult<double>&);

bool simd_kernels_built() {
  return detail::kSimdKernels;
}

}  // namespace attn
