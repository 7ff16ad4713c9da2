#include "npz.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "attn/variants.hpp"

// zlib for the zip entries' CRC-32 only: Debian's zlib1g-dev (scripts/setup.sh installs it),
// the reference implementation, already linked by half the system. The .npz entries are
// stored uncompressed (as numpy.savez writes them), so no deflate and no zip library is
// needed: the container is the few fixed headers below, which also keeps every byte under
// our control (fixed timestamps, fixed order) for byte-identical checkpoints.
#include <zlib.h>

namespace train_text {

namespace {

void put_le(std::string* s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// NPY 1.0: magic, version, header length (uint16 LE), the header dict padded with spaces to
// The binary16 bits of a float that is already a binary16 value (round_to_half's output):
// sign, 5-bit exponent (bias 15), 10-bit fraction; subnormals below 2^-14.
std::uint16_t half_bits(float h) {
  std::uint32_t f;
  std::memcpy(&f, &h, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((f >> 16) & 0x8000);
  const float a = std::fabs(h);
  if (a == 0) return sign;
  if (a < 6.103515625e-05f)  // 2^-14: subnormal, fraction = a / 2^-24 (exact for a binary16 value)
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(a * 16777216.0f));
  const int e = static_cast<int>((f >> 23) & 0xFF) - 127;  // -14 ... 15
  return static_cast<std::uint16_t>(sign | ((e + 15) << 10) | ((f >> 13) & 0x3FF));
}

// a multiple of 64 bytes in all (ending in '\n'), then little-endian float32 (or binary16) data.
bool npy_bytes(const NamedArray& a, bool half, std::string* out) {
  std::string shape = "(";
  std::size_t n = 1;
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
    n *= a.shape[i];
  }
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + (half ? "<f2" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string s = "\x93NUMPY";
  s.push_back('\x01');
  s.push_back('\x00');
  put_le(&s, header.size(), 2);
  s += header;
  s.reserve(s.size() + (half ? 2 : 4) * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (half) {
      const float h = attn::round_to_half(a.data[i]);
      if (!std::isfinite(h)) return false;
      put_le(&s, half_bits(h), 2);
    } else {
      std::uint32_t bits;
      std::memcpy(&bits, a.data + i, 4);
      put_le(&s, bits, 4);
    }
  }
  *out = std::move(s);
  return true;
}

}  // namespace

bool npz_bytes(const std::vector<NamedArray>& arrays, bool half, std::string* out) {
  std::string body, central;
  const std::uint32_t dos_time = 0, dos_date = (0 << 9) | (1 << 5) | 1;
  for (const auto& a : arrays) {
    const std::string name = a.name + ".npy";
    std::string data;
    if (!npy_bytes(a, half, &data)) return false;
    if (data.size() >= 0xFFFFFFFFull || body.size() >= 0xFFFFFFFFull) return false;
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    const std::uint64_t offset = body.size();
    put_le(&body, 0x04034b50, 4);  // local file header
    put_le(&body, 20, 2);          // version needed: 2.0
    put_le(&body, 0, 2);           // flags
    put_le(&body, 0, 2);           // method: stored
    put_le(&body, dos_time, 2);
    put_le(&body, dos_date, 2);
    put_le(&body, crc, 4);
    put_le(&body, data.size(), 4);
    put_le(&body, data.size(), 4);
    put_le(&body, name.size(), 2);
    put_le(&body, 0, 2);  // extra field length
    body += name;
    body += data;
    put_le(&central, 0x02014b50, 4);  // central directory header
    put_le(&central, 20, 2);          // made by: 2.0, MS-DOS attributes
    put_le(&central, 20, 2);
    put_le(&central, 0, 2);
    put_le(&central, 0, 2);
    put_le(&central, dos_time, 2);
    put_le(&central, dos_date, 2);
    put_le(&central, crc, 4);
    put_le(&central, data.size(), 4);
    put_le(&central, data.size(), 4);
    put_le(&central, name.size(), 2);
    put_le(&central, 0, 2);  // extra
    put_le(&central, 0, 2);  // comment
    put_le(&central, 0, 2);  // disk
    put_le(&central, 0, 2);  // internal attributes
    put_le(&central, 0, 4);  // external attributes
    put_le(&central, offset, 4);
    central += name;
  }
  if (body.size() + central.size() >= 0xFFFFFFFFull || arrays.size() > 0xFFFF) return false;
  *out = body + central;
  put_le(out, 0x06054b50, 4);  // end of central directory
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, arrays.size(), 2);
  put_le(out, arrays.size(), 2);
  put_le(out, central.size(), 4);
  put_le(out, body.size(), 4);
  put_le(out, 0, 2);
  return true;
}

std::vector<NamedArray> named_params(const attn::tr::ModelConfig& m, const attn::tr::ParamLayout& P,
                                     const float* w) {
  const std::size_t D = m.d_model, V = m.vocab, T = m.seq_len, dh = attn::tr::d_head(m);
  const std::size_t HQ = m.heads * dh, HK = m.kv_heads * dh;
  std::vector<NamedArray> a;
  a.push_back({"embed", {V, D}, w + P.embed});
  if (m.positional) a.push_back({"pos", {T, D}, w + P.pos});
  for (std::size_t l = 0; l < m.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    a.push_back({p + "wq", {D, HQ}, w + P.layer[l].wq});
    a.push_back({p + "wk", {D, HK}, w + P.layer[l].wk});
    a.push_back({p + "wv", {D, HK}, w + P.layer[l].wv});
    a.push_back({p + "wo", {HQ, D}, w + P.layer[l].wo});
  }
  if (m.layer_norm) {
    a.push_back({"ln_gain", {D}, w + P.ln_gain});
    a.push_back({"ln_bias", {D}, w + P.ln_bias});
  }
  a.push_back({"unembed", {D, V}, w + P.unembed});
  return a;
}

}  // namespace train_text
