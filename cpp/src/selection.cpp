#include "attn/selection.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "attn/checked.hpp"

namespace attn {
namespace {

// idx (count) must name distinct entries below bound; field "queries" or "keys", axis "T_q" or
// "T_k" for the message. Memory O(count), whatever the bound.
Status check_indices(const std::size_t* idx, std::size_t count, std::size_t bound,
                     const char* field, const char* axis) {
  const auto at = [&](std::size_t n) {
    return std::string(field) + "[" + std::to_string(n) + "] = " + std::to_string(idx[n]);
  };
  for (std::size_t n = 0; n < count; ++n)
    if (idx[n] >= bound)
      return Status::Invalid(field, at(n) + " is outside " + axis + " " + std::to_string(bound) +
                                        " (indices count from 0)");
  // Duplicates: (index, position) sorted, so equal indices sit together in the order given;
  // the one reported is the earliest position that repeats an earlier one.
  std::vector<std::pair<std::size_t, std::size_t>> sorted(count);
  for (std::size_t n = 0; n < count; ++n) sorted[n] = {idx[n], n};
  std::sort(sorted.begin(), sorted.end());
  std::size_t repeat = count, first = 0;
  for (std::size_t n = 1; n < count; ++n) {
    // sorted[n] the second occurrence of its index: a repeat of sorted[n - 1], its first.
    const bool second =
        sorted[n].first == sorted[n - 1].first && (n < 2 || sorted[n - 2].first != sorted[n].first);
    if (second && sorted[n].second < repeat) {
      repeat = sorted[n].second;
      first = sorted[n - 1].second;
    }
  }
  if (repeat != count)
    return Status::Invalid(field, at(repeat) + " repeats " + field + "[" + std::to_string(first) +
                                      "] (each index may be given once)");
  return Status::Ok();
}

}  // namespace

Status weight_selection(const float* weights, std::size_t n, std::size_t heads, std::size_t tq,
                        std::size_t tk, std::size_t head, const std::size_t* queries,
                        std::size_t nq, const std::size_t* keys, std::size_t nk, Selection* out) {
  // 1. The checks, before anything is allocated beyond the index tables.
  std::size_t expect = 0;
  if (!detail::checked_product({heads, tq, tk}, &expect) || n != expect)
    return Status::Invalid(
        "weights", "weights holds " + std::to_string(n) +
                       " values, expected heads × T_q × T_k = " + std::to_string(heads) + " × " +
                       std::to_string(tq) + " × " + std::to_string(tk));
  if (head >= heads)
    return Status::Invalid("head", "head " + std::to_string(head) + " is outside heads " +
                                       std::to_string(heads) + " (heads count from 0)");
  Status st = check_indices(queries, nq, tq, "queries", "T_q");
  if (st.ok()) st = check_indices(keys, nk, tk, "keys", "T_k");
  if (!st.ok()) return st;
  const float* a = weights + head * tq * tk;  // (T_q, T_k)

  // 2. The selected rows, summed column by column; their mean.
  out->sum.assign(nq ? tk : 0, 0.0);
  out->mean.assign(nq ? tk : 0, 0.0);
  for (std::size_t p = 0; p < nq; ++p)
    for (std::size_t j = 0; j < tk; ++j) out->sum[j] += static_cast<double>(a[queries[p] * tk + j]);
  for (std::size_t j = 0; j < out->mean.size(); ++j)
    out->mean[j] = out->sum[j] / static_cast<double>(nq);

  // 3. Every query's weight on the selected keys.
  out->column.assign(nk ? tq : 0, 0.0);
  for (std::size_t i = 0; i < out->column.size(); ++i)
    for (std::size_t p = 0; p < nk; ++p) out->column[i] += static_cast<double>(a[i * tk + keys[p]]);
  return Status::Ok();
}

}  // namespace attn
