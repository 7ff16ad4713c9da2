// Shared by every runner of `npm run bench -- --peers`: the same input bytes for all
// implementations and a float64 reference for checking their outputs.
//
// Inputs: q, k, v of shape (T, d) float32, uniform(-1, 1) from a 32-bit LCG seeded per T, so a
// file is not needed to reproduce them; run.mjs still writes them once to bench/out/ so the
// Python runner reads the very same bytes.
// Reference: causal scaled dot-product attention in float64 (scores, -inf above the diagonal,
// max-subtracted softmax, A.V) for a sample of rows; maxAbsError compares an output with it.
import fs from 'node:fs';
import path from 'node:path';
import { inputs, sampleRows, referenceRows, maxAbsError } from './inputs_core.mjs';

export { inputs, sampleRows, referenceRows, maxAbsError };

// bench/out/inputs-T{T}-d{d}.bin (q, k, v float32 little-endian) and ref-T{T}-d{d}.json.
export function writeCase(dir, T, d) {
  fs.mkdirSync(dir, { recursive: true });
  const bin = path.join(dir, `inputs-T${T}-d${d}.bin`), refFile = path.join(dir, `ref-T${T}-d${d}.json`);
  const [q, k, v] = inputs(T, d);
  if (!fs.existsSync(bin)) {
    const all = new Float32Array(3 * T * d);
    all.set(q, 0), all.set(k, T * d), all.set(v, 2 * T * d);
    fs.writeFileSync(bin, Buffer.from(all.buffer));
  }
  if (!fs.existsSync(refFile)) {
    const rows = sampleRows(T);
    fs.writeFileSync(refFile, JSON.stringify({ T, d, rows, ref: referenceRows(q, k, v, T, d, rows) }));
  }
  return { bin, refFile };
}

export function readCase(dir, T, d) {
  const buf = fs.readFileSync(path.join(dir, `inputs-T${T}-d${d}.bin`));
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const n = T * d;
  const ref = JSON.parse(fs.readFileSync(path.join(dir, `ref-T${T}-d${d}.json`), 'utf8'));
  return { q: all.slice(0, n), k: all.slice(n, 2 * n), v: all.slice(2 * n, 3 * n), ...ref };
}
