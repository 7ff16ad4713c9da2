#include "common.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace train_text {

bool parse_uint(const std::string& s, std::uint64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  *v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

bool read_file(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

bool write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  return static_cast<bool>(out);
}

}  // namespace train_text
