// The pure part of bench/inputs.mjs (no Node modules), also loaded by the browser benchmark.

// A seeded uniform generator on [0, 1) (a 32-bit LCG): the inputs' bytes, and the Chromium
// bench's order of implementations.
export function uniform(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

export function inputs(T, d, seed = 12345) {
  const u = uniform(seed + T);
  const r = () => u() * 2 - 1;
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

