#!/bin/bash
# The 15-config GPU sweep of driver.py (prepared; it has not been run yet).
# Needs PyTorch with CUDA on the GPU machine and, at the repository root there, the five data files
# that extract.py writes (about 28 MB):
#   build/text-model/{char_train.u16,char_heldout.u16,bpe_train.u16,bpe_heldout.u16,meta.json}
# Run from anywhere:  bash scripts/text-model/device_sweep.sh
# Takes about 460 s (370 s wall cap per config, all configs at once, plus evaluation and a 90 s grace);
# allow 520 s. Results go to $OUT if set, else build/text-model/device_sweep/.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="${OUT:-$ROOT/build/text-model/device_sweep}"
mkdir -p "$DEST"
python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())" || { echo "NO TORCH on device"; echo '{"error":"no torch"}' > "$DEST/summary.json"; exit 0; }
for f in char_train.u16 char_heldout.u16 bpe_train.u16 bpe_heldout.u16 meta.json; do
  [ -f "$ROOT/build/text-model/$f" ] || { echo "missing build/text-model/$f: run scripts/text-model/extract.py first"; exit 1; }
done
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv; nproc
python3 "$ROOT/scripts/text-model/driver.py" --out "$DEST" --wall 370 2>&1 | tail -30
