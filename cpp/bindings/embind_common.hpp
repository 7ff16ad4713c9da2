// Helpers shared by the two Embind surfaces (attn_core: attention_session.cpp and its
// neighbours, attn_train: train_bindings.cpp). Only cpp/bindings/ includes Emscripten headers.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstddef>

#include "attn/status.hpp"

namespace attn_bind {

using emscripten::val;

// A typed-array view of the wasm heap; the JS layer copies it at once (views go stale when
// memory grows).
template <class T>
val view(const T* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data));
}

// A Status as the plain object the JS layer turns into an AttnError naming the field.
// {ok: true}: the start of a successful result.
inline val ok() {
  val r = val::object();
  r.set("ok", true);
  return r;
}

inline val error(const attn::Status& st) {
  val r = val::object();
  r.set("ok", false);
  r.set("field", st.field);
  r.set("message", st.message);
  r.set("code", st.code == attn::StatusCode::kResourceExhausted ? "resource_exhausted"
                                                                : "invalid_argument");
  return r;
}

// A size option the JS layer has already checked to be a non-negative integer.
inline std::size_t size_field(const val& o, const char* name) {
  return static_cast<std::size_t>(o[name].as<double>());
}

}  // namespace attn_bind
