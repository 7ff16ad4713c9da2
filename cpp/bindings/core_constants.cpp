// What attn_core's JS glue reads once when the module starts (api.js): the core's constants
// (core.limits) and the names each option takes (core.names, from attn/names.hpp), so neither
// the glue nor the page keeps its own copy.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstddef>
#include <string>

#include "attn/attention.hpp"
#include "attn/check.hpp"
#include "attn/introspect.hpp"
#include "attn/names.hpp"
#include "attn/tiled.hpp"

using emscripten::val;

namespace {

// The core's constants, read once by api.js into core.limits.
val coreConstants() {
  val r = val::object();
  r.set("memoryCap", static_cast<double>(attn::kDefaultMemoryCap));
  r.set("tileQueries", static_cast<double>(attn::kTileQ));
  r.set("tileKeys", static_cast<double>(attn::kTileK));
  r.set("tileKeysSimd", static_cast<double>(attn::kTileKSimd));
  r.set("simd", attn::simd_kernels_built());
#ifdef ATTN_RELAXED_SIMD  // the attn_core_relaxed build (fused multiply-adds)
  r.set("relaxedSimd", true);
#else
  r.set("relaxedSimd", false);
#endif
  r.set("checkUnitRoundoff", attn::kCheckUnitRoundoff);
  r.set("checkF32VsF64Abs", attn::kCheckF32VsF64Abs);
  r.set("checkTiledVsNaiveAbs", attn::kCheckTiledVsNaiveAbs);
  return r;
}

// {option: [name, ...]} in enum order, e.g. {normalizer: ['softmax', ...], maskFill: [...]}.
val coreNames() {
  val r = val::object();
  for (std::size_t l = 0; l < attn::kNameListCount; ++l) {
    const attn::NameList& list = *attn::all_name_lists()[l];
    val names = val::array();
    for (std::size_t i = 0; i < list.size; ++i) names.call<void>("push", std::string(list[i]));
    r.set(list.option, names);
  }
  return r;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attn_constants) {
  emscripten::function("coreConstants", &coreConstants);
  emscripten::function("coreNames", &coreNames);
}
