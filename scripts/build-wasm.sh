#!/usr/bin/env bash
# Builds build/wasm/attn_core.{mjs,wasm} and build/wasm/attn_train.{mjs,wasm} (configuring the 'wasm' preset on first use).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NODE_PATH=/usr/share/nodejs
[ -f build/wasm/CMakeCache.txt ] || cmake --preset wasm >/dev/null
cmake --build --preset wasm --target attn_core_js attn_train_js
