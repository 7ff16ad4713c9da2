#!/usr/bin/env bash
# The playground: installs what is missing, builds the wasm core and the page,
# then serves dist/ on http://127.0.0.1:$PORT (default 5173) until Ctrl-C.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
bash scripts/build-wasm.sh
npm run --silent build
PORT="${PORT:-5173}"
echo
echo "Attention Playground is being served at http://127.0.0.1:${PORT}/"
echo "(embed view: http://127.0.0.1:${PORT}/?embed=1 — stop with Ctrl-C)"
echo
exec npx vite preview --config web/vite.config.ts --host 127.0.0.1 --port "$PORT" --strictPort
