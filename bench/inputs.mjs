// Shared by every runner of `npm run bench -- --peers` (issue 12): the same input bytes for all
// implementations and a float64 reference for checking their outputs.
//
// Inputs: q, k, v of shape (T, d) float32, uniform(-1, 1) from a 32-bit LCG seeded per T, so a
// file is not needed to reproduce them; run.mjs still writes them once to bench/out/ so the
// Python runner reads the very same bytes.
// Reference: causal scaled dot-product attention in float64 (scores, -inf above the diagonal,
// max-subtracted softmax, A.V) for a sample of rows; maxAbsError compares an output with it.
import fs from 'node:fs';
import path from 'node:path';

export function inputs(T, d, seed = 12345) {
  let s = (seed + T) >>> 0;
  const r = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const mk = () => { const a = new Float32Array(T * d); for (let i = 0; i < a.length; i++) a[i] = r(); return a; };
  return [mk(), mk(), mk()];
}

// 33 rows spread over [0, T): first, last and evenly in between.
export function sampleRows(T) {
  const rows = new Set([0, T - 1]);
  for (let i = 1; i < 32; i++) rows.add(Math.floor((i * (T - 1)) / 32));
  return [...rows].sort((a, b) => a - b);
}

export function referenceRows(q, k, v, T, d, rows) {
  const scale = 1 / Math.sqrt(d), out = [];
  for (const i of rows) {
    const s = new Float64Array(i + 1);
    let m = -Infinity;
    for (let j = 0; j <= i; j++) {
      let acc = 0;
      for (let c = 0; c < d; c++) acc += q[i * d + c] * k[j * d + c];
      s[j] = acc * scale;
      if (s[j] > m) m = s[j];
    }
    let l = 0;
    for (let j = 0; j <= i; j++) l += (s[j] = Math.exp(s[j] - m));
    const y = new Float64Array(d);
    for (let j = 0; j <= i; j++) for (let c = 0; c < d; c++) y[c] += (s[j] / l) * v[j * d + c];
    out.push(Array.from(y));
  }
  return out;
}

export function maxAbsError(output, ref, rows, d) {
  let worst = 0;
  rows.forEach((i, n) => {
    for (let c = 0; c < d; c++) {
      const e = Math.abs(output[i * d + c] - ref[n][c]);
      worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
    }
  });
  return worst;
}

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
