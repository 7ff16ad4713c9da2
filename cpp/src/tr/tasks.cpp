#include "attn/tr/tasks.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace attn::tr {

bool parse_task(const std::string& name, Task* out) {
  if (name == "induction")
    *out = Task::kInduction;
  else if (name == "induction-fixed")
    *out = Task::kInductionFixed;
  else if (name == "random")
    *out = Task::kRandom;
  else
    return false;
  return true;
}

const char* task_name(Task t) {
  switch (t) {
    case Task::kInduction:
      return "induction";
    case Task::kInductionFixed:
      return "induction-fixed";
    case Task::kRandom:
      return "random";
  }
  return "?";
}

Status validate_task(Task task, std::size_t vocab, std::size_t T) {
  if (task == Task::kRandom) return Status::Ok();
  // [noise, s, s] fits any T >= 4 (an odd T gives the noise one more token); [s, s] needs
  // an even T.
  if (task == Task::kInduction && T < 4) {
    return Status::Invalid("seqLen", std::string("task '") + task_name(task) +
                                         "' needs a seqLen of at least 4 (got " +
                                         std::to_string(T) + ")");
  }
  if (task == Task::kInductionFixed && (T % 2 != 0 || T < 4)) {
    return Status::Invalid("seqLen", std::string("task '") + task_name(task) +
                                         "' needs an even seqLen of at least 4 (got " +
                                         std::to_string(T) + ")");
  }
  const std::size_t n = T / 2;  // floor: an odd T has one more noise token
  // The longest run of distinct tokens: T - ceil(n/2) with noise, n for [s, s].
  const std::size_t need = task == Task::kInduction ? T - (n + 1) / 2 : n;
  if (vocab < need) {
    return Status::Invalid(
        "vocab", std::string("task '") + task_name(task) + "' with seqLen " + std::to_string(T) +
                     " needs vocab >= " + std::to_string(need) + " (distinct tokens per sequence)");
  }
  return Status::Ok();
}

namespace {

std::size_t below(Rng* rng, std::size_t m) {
  return static_cast<std::size_t>(rng->uniform() * static_cast<double>(m));
}

}  // namespace

void sample_task(Task task, Rng* rng, std::size_t batch, std::size_t T, std::size_t V,
                 std::int32_t* tokens, std::uint8_t* mask) {
  std::vector<std::int32_t> perm(V);
  const std::size_t n = T / 2;
  for (std::size_t b = 0; b < batch; ++b) {
    std::int32_t* tok = tokens + b * T;
    std::uint8_t* m = mask + b * T;
    if (task == Task::kRandom) {
      for (std::size_t i = 0; i < T; ++i) {
        tok[i] = static_cast<std::int32_t>(below(rng, V));
        m[i] = i >= 1;
      }
      continue;
    }
    // At least 2: a copy of length 1 has no target (its only token is the copy's first), and
    // seqLen 4 (n = 2, ceil(n/2) = 1) could then draw a batch with nothing to learn from.
    const std::size_t lo = std::max<std::size_t>(2, (n + 1) / 2);
    const std::size_t len = task == Task::kInduction ? lo + below(rng, n - lo + 1) : n;
    const std::size_t distinct = T - len;  // noise + s
    for (std::size_t i = 0; i < V; ++i) perm[i] = static_cast<std::int32_t>(i);
    for (std::size_t i = 0; i < distinct; ++i) std::swap(perm[i], perm[i + below(rng, V - i)]);
    for (std::size_t i = 0; i < distinct; ++i) tok[i] = perm[i];
    for (std::size_t i = 0; i < len; ++i) tok[T - len + i] = tok[T - 2 * len + i];
    for (std::size_t i = 0; i < T; ++i) m[i] = i >= T - len + 1;
  }
}

}  // namespace attn::tr
