#include "attn/tr/schedule.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace attn::tr {

namespace {

constexpr double kPi = 3.141592653589793;

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace

Status validate_schedule(const LrSchedule& s) {
  if (!(std::isfinite(s.lr) && s.lr > 0 && s.lr <= 1e3)) {
    return Status::Invalid("lr", "lr must be a number in (0, 1000] (got " + num(s.lr) + ")");
  }
  if (s.steps < 1) return Status::Invalid("steps", "the run must have at least one step");
  // The cosine needs T_max = N - W >= 1 (torch's CosineAnnealingLR divides by it).
  if (s.warmup >= s.steps) {
    return Status::Invalid(
        "warmup", "warmup must leave at least one cosine step: " + std::to_string(s.warmup) +
                      " warmup steps of " + std::to_string(s.steps));
  }
  if (!(std::isfinite(s.warmup_start) && s.warmup_start > 0 && s.warmup_start <= 1)) {
    return Status::Invalid("warmup-start",
                           "warmup-start must be in (0, 1] (got " + num(s.warmup_start) + ")");
  }
  if (!(std::isfinite(s.final_lr_frac) && s.final_lr_frac >= 0 && s.final_lr_frac <= 1)) {
    return Status::Invalid("final-lr-frac",
                           "final-lr-frac must be in [0, 1] (got " + num(s.final_lr_frac) + ")");
  }
  return Status::Ok();
}

double lr_at(const LrSchedule& s, std::size_t k) {
  const double peak = s.lr, low = s.final_lr_frac * s.lr, s0 = s.warmup_start;
  const std::size_t W = s.warmup;
  if (W > 0) {
    if (k < W) return peak * (s0 + (1 - s0) * static_cast<double>(k) / static_cast<double>(W));
    // pi * j / T_max in torch's order.
    const double x = kPi * static_cast<double>(k - W) / static_cast<double>(s.steps - W);
    return low + (peak - low) * (1 + std::cos(x)) / 2;
  }
  // W = 0: torch never reaches milestone 0 (see the header).
  if (k == 0) return s0 * peak;
  const std::size_t j = k - 1;
  const double amp = (j <= s.steps ? s0 * peak : peak) - low;
  return low +
         amp * (1 + std::cos(kPi * static_cast<double>(j) / static_cast<double>(s.steps))) / 2;
}

}  // namespace attn::tr
