// Status values returned by every fallible entry point of the core.
// The core never throws and never aborts on bad input: the wasm module is built
// without C++ exceptions, so errors travel back to JavaScript as data.
#pragma once

#include <string>
#include <utility>

namespace attn {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // an impossible shape, a bad option value, a non-finite scale, ...
  kResourceExhausted,  // the request's working memory would exceed the cap
};

struct Status {
  StatusCode code = StatusCode::kOk;
  std::string field;    // the option or argument at fault, e.g. "heads", "keyPadding"
  std::string message;  // a sentence for a person, naming the field

  bool ok() const { return code == StatusCode::kOk; }

  static Status Ok() { return {}; }
  static Status Invalid(std::string field, std::string message) {
    return {StatusCode::kInvalidArgument, std::move(field), std::move(message)};
  }
  static Status Exhausted(std::string field, std::string message) {
    return {StatusCode::kResourceExhausted, std::move(field), std::move(message)};
  }
};

}  // namespace attn
