#include "attn/roles.hpp"

namespace attn {

template <class T>
void pattern_scores(const std::int32_t* tokens, std::size_t batch, std::size_t t, std::size_t H,
                    const T* w, double* prev, double* ind, double* dup) {
  for (std::size_t h = 0; h < H; ++h) {
    double s[3] = {0, 0, 0};
    std::size_t n[3] = {0, 0, 0};
    for (std::size_t b = 0; b < batch; ++b) {
      const std::int32_t* tok = tokens + b * t;
      const T* a = w + (b * H + h) * t * t;
      double num[3] = {0, 0, 0}, den[3] = {0, 0, 0};
      for (std::size_t i = 0; i < t; ++i) {
        const T* row = a + i * t;
        double rowsum = 0;
        for (std::size_t j = 0; j <= i; ++j) rowsum += row[j];
        if (i >= 1) {  // previous token
          num[0] += row[i - 1];
          den[0] += rowsum;
        }
        double pi = 0, pd = 0;
        bool hi = false, hd = false;
        for (std::size_t j = 0; j < i; ++j) {
          if (tok[j] == tok[i]) {
            pd += row[j];
            hd = true;
            pi += row[j + 1];  // j + 1 <= i
            hi = true;
          }
        }
        if (hi) {
          num[1] += pi;
          den[1] += rowsum;
        }
        if (hd) {
          num[2] += pd;
          den[2] += rowsum;
        }
      }
      for (int k = 0; k < 3; ++k)
        if (den[k] > 0) {
          s[k] += num[k] / den[k];
          n[k] += 1;
        }
    }
    prev[h] = n[0] ? s[0] / n[0] : 0;
    ind[h] = n[1] ? s[1] / n[1] : 0;
    dup[h] = n[2] ? s[2] / n[2] : 0;
  }
}

template void pattern_scores<float>(const std::int32_t*, std::size_t, std::size_t, std::size_t,
                                    const float*, double*, double*, double*);
template void pattern_scores<double>(const std::int32_t*, std::size_t, std::size_t, std::size_t,
                                     const double*, double*, double*, double*);

}  // namespace attn
