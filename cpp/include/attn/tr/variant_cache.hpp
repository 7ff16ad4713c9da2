// What one layer's variant attention (cpp/src/tr/variant_attention.hpp) keeps for its backward:
// vocabulary shared by the model's workspace (attn/tr/model.hpp) and those kernels.
#pragma once

#include <vector>

namespace attn::tr {

template <class T>
struct VariantCache {
  std::vector<T> qp, kp;        // (B*H, t, dh), (B*Hkv, t, dh): after qkNorm and RoPE
  std::vector<T> qf, kf;        // linear only: phi(qp), phi(kp)
  std::vector<T> qnorm, knorm;  // (B*H*t), (B*Hkv*t): max(|row|, 1e-12), qkNorm only
  std::vector<T> z;             // (B*H*t) linear's row denominators (naive kernel)
};

}  // namespace attn::tr
