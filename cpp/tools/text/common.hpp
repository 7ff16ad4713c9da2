// attn_train_text's shared pieces: its errors (a Fail carries the exit status and the message)
// and whole-file reads and writes. Every unit of the command lives in namespace train_text.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace train_text {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

inline constexpr const char* kProg = "attn_train_text";

struct Fail {
  int code = 0;  // 0 = none; 1 = runtime (corpus, files, training); 2 = usage (a flag)
  std::string message;
  bool bad() const { return code != 0; }
};

inline Fail usage_error(const std::string& flag, const std::string& what) {
  return {2, flag + ": " + what};
}
inline Fail run_error(const std::string& what) {
  return {1, what};
}

// Decimal digits only (no sign, no spaces), at most 19 of them.
bool parse_uint(const std::string& s, std::uint64_t* v);

bool read_file(const fs::path& p, std::string* out);
bool write_bytes(const fs::path& p, const std::string& bytes);

}  // namespace train_text
