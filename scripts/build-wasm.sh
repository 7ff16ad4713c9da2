#!/usr/bin/env bash
# Builds build/wasm/attn_core.{mjs,wasm}, its relaxed-SIMD twin attn_core_relaxed.{mjs,wasm} (the
# cpp/bindings/load_core.mjs picks one at load time), build/wasm/attn_core_tables.mjs (the core's
# names and the variants it refuses, for the page) and build/wasm/attn_train.{mjs,wasm}
# (configuring the 'wasm' preset on first use).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NODE_PATH=/usr/share/nodejs
# Configure every time (a second or two): an existing build folder from before a target was added
# would otherwise fail with "No rule to make target" instead of regenerating.
cmake --preset wasm >/dev/null
cmake --build --preset wasm --target attn_core_js attn_core_relaxed_js attn_train_js
