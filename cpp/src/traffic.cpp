#include "attn/traffic.hpp"

#include <algorithm>
#include <string>

namespace attn {

namespace {

// Checked 64-bit arithmetic: a false return means the count overflowed.
struct Count {
  std::uint64_t v = 0;
  bool ok = true;
};
Count operator*(Count a, Count b) {
  Count r;
  r.ok = a.ok && b.ok && !__builtin_mul_overflow(a.v, b.v, &r.v);
  return r;
}
Count operator+(Count a, Count b) {
  Count r;
  r.ok = a.ok && b.ok && !__builtin_add_overflow(a.v, b.v, &r.v);
  return r;
}
Count c(std::uint64_t v) {
  return Count{v, true};
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0);
}

Status positive(const char* field, std::uint64_t v) {
  if (v == 0) return Status::Invalid(field, std::string(field) + " must be at least 1");
  return Status::Ok();
}

// Keys the query block ending at row `last` loads under the mask: every key block up to the
// one holding that row's diagonal (bottom-right alignment), or all keys without a mask.
std::uint64_t keys_loaded(const TrafficOptions& o, std::uint64_t last, std::uint64_t bc) {
  if (!o.causal) return o.tk;
  // Row `last` sees keys j <= last + tk - tq; none when that is negative.
  if (last + o.tk < o.tq) return 0;
  const std::uint64_t visible = last + o.tk - o.tq + 1;  // keys 0 .. visible - 1
  return std::min(o.tk, bc * ceil_div(std::min(visible, o.tk), bc));
}

using u128 = unsigned __int128;
using i128 = __int128;

// sum_{i=0}^{n-1} floor((a i + b) / m) for a, b >= 0, m >= 1, in O(log) steps (the classic
// floor-sum recursion written as a loop).
u128 floor_sum(u128 n, u128 m, u128 a, u128 b) {
  u128 ans = 0;
  while (true) {
    if (a >= m) {
      ans += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const u128 y = a * n + b;
    if (y < m) break;
    n = y / m;
    b = y % m;
    const u128 t = m;
    m = a;
    a = t;
  }
  return ans;
}

// Sum over the query blocks of keys_loaded, without a loop over the blocks (T / B_r of them
// can be 2^31): the full blocks i < T_r - 1 end at row (i + 1) B_r - 1, so their count is
// 0 while (i + 1) B_r + tk - tq <= 0, tk once the diagonal reaches the last key block, and
// B_c ceil(((i + 1) B_r + tk - tq) / B_c) in between (a floor sum); the last block apart.
u128 keys_all_blocks(const TrafficOptions& o, std::uint64_t br, std::uint64_t bc) {
  const std::uint64_t tr = ceil_div(o.tq, br);
  const u128 last_block = keys_loaded(o, o.tq - 1, bc);
  if (!o.causal) return u128(tr) * o.tk;
  const i128 n = tr - 1, off = i128(o.tk) - i128(o.tq);
  // Zero region: (i + 1) B_r <= tq - tk.
  i128 zero_end = off < 0 ? (-off) / i128(br) : 0;
  zero_end = std::min(zero_end, n);
  // Saturated region: (i + 1) B_r + off > B_c (ceil(tk / B_c) - 1).
  const i128 thr = i128(bc) * (i128(ceil_div(o.tk, bc)) - 1);
  const i128 x = thr - off;
  i128 sat_start = x < 0 ? 0 : x / i128(br);
  sat_start = std::max(zero_end, std::min(sat_start, n));
  const i128 cnt = sat_start - zero_end;
  u128 sum = u128(n - sat_start) * o.tk;
  if (cnt > 0) {
    const i128 b0 = (zero_end + 1) * i128(br) + off + i128(bc) - 1;  // >= B_c
    sum += u128(bc) * floor_sum(u128(cnt), bc, br, u128(b0));
  }
  return sum + last_block;
}

// Key blocks outside (Algorithm 1): the query rows loaded over all key blocks, i.e. for each key
// block j (first key c_j = j B_c) the rows of the query blocks whose last row sees key c_j:
// all tq rows while c_j <= tk - tq, else the rows from the block holding row c_j - (tk - tq)
// on, tq - B_r floor((c_j - tk + tq) / B_r) (a floor sum over those j). Every key block is
// loaded: the last query row sees every key (bottom-right alignment).
u128 rows_all_key_blocks(const TrafficOptions& o, std::uint64_t br, std::uint64_t bc) {
  const std::uint64_t tc = ceil_div(o.tk, bc);
  if (!o.causal) return u128(tc) * o.tq;
  const i128 off = i128(o.tk) - i128(o.tq);
  // Key blocks whose first key every row sees: j B_c <= off.
  const i128 full = off < 0 ? 0 : std::min<i128>(i128(tc), off / i128(bc) + 1);
  const i128 n = i128(tc) - full;
  u128 rows = u128(full) * o.tq;
  if (n > 0) {
    const i128 b = full * i128(bc) - off;  // >= 1: row c_j - off of the first such block
    rows += u128(n) * o.tq - u128(br) * floor_sum(u128(n), br, bc, u128(b));
  }
  return rows;
}

}  // namespace

Status traffic(const TrafficOptions& o, Traffic* out) {
  Status st;
  for (auto [name, v] : {std::pair<const char*, std::uint64_t>{"tq", o.tq},
                         {"tk", o.tk},
                         {"dk", o.dk},
                         {"dv", o.dv},
                         {"heads", o.heads},
                         {"kvHeads", o.kv_heads}}) {
    if (!(st = positive(name, v)).ok()) return st;
  }
  if (o.heads % o.kv_heads != 0) {
    return Status::Invalid("kvHeads", "kvHeads (" + std::to_string(o.kv_heads) +
                                          ") must divide heads (" + std::to_string(o.heads) + ")");
  }
  const Count H = c(o.heads), Hkv = c(o.kv_heads), tq = c(o.tq), tk = c(o.tk), dk = c(o.dk),
              dv = c(o.dv);
  // Inputs and output, in every algorithm: Q (H, tq, dk), K (Hkv, tk, dk), V (Hkv, tk, dv),
  // O (H, tq, dv).
  const Count io = H * tq * dk + Hkv * tk * dk + Hkv * tk * dv + H * tq * dv;
  Count footprint, loads, stores;
  Traffic t;
  if (o.kernel == TrafficKernel::kStandard) {
    const Count sp = H * tq * tk;  // S or P
    footprint = io + c(2) * sp;
    // Per head: Q, K (pass 1); S (pass 2); P, V (pass 3). Stores: S, P, O.
    loads = H * (tq * dk + tk * dk + tk * dv) + c(2) * sp;
    stores = c(2) * sp + H * tq * dv;
  } else {
    const std::uint64_t d = std::max(o.dk, o.dv);
    const std::uint64_t m = o.sram_bytes / 4;  // floats on chip
    // One block of K_j, V_j, Q_i and O_i (M / 4 floats each) needs a row of width d.
    if (m / 4 < d) {
      return Status::Invalid(
          "sramBytes", "sramBytes (" + std::to_string(o.sram_bytes) +
                           ") is too small for one block: the tiled algorithm needs at least 16 "
                           "bytes per column of max(dk, dv) = " +
                           std::to_string(d) + ", i.e. " + std::to_string(16 * d) + " bytes");
    }
    const std::uint64_t bc = ceil_div(m, 4 * d), br = std::min(bc, d);
    t.block_rows = br;
    t.block_cols = bc;
    footprint = io + c(2) * H * tq;  // + m and l per row
    if (o.loop_order == TrafficLoopOrder::kQueryBlocksOuter) {
      // Per head: Q once, then for each query block the keys it loads (K and V), then O, m, l.
      const u128 k = keys_all_blocks(o, br, bc);
      const Count keys{static_cast<std::uint64_t>(k), k >> 64 == 0};
      loads = H * (tq * dk + keys * (dk + dv));
      stores = H * (tq * dv + c(2) * tq);
    } else {
      // Per head: O, l, m initialised; K and V once; for each visited (key block, query block)
      // pair Q_i, O_i, l_i, m_i read and O_i, l_i, m_i written.
      const u128 r = rows_all_key_blocks(o, br, bc);
      const Count rows{static_cast<std::uint64_t>(r), r >> 64 == 0};
      loads = H * (tk * (dk + dv) + rows * (dk + dv + c(2)));
      stores = H * (tq * (dv + c(2)) + rows * (dv + c(2)));
    }
  }
  const Count total = loads + stores, fb = footprint * c(4), tb = total * c(4);
  if (!fb.ok || !tb.ok) {
    return Status::Invalid("tq",
                           "tq, tk, dk, dv and heads give byte counts beyond 2^64; use "
                           "smaller sizes");
  }
  t.footprint_bytes = fb.v;
  t.slow_memory_bytes = tb.v;
  t.loaded_bytes = loads.v * 4;
  t.stored_bytes = stores.v * 4;
  *out = t;
  return Status::Ok();
}

}  // namespace attn
