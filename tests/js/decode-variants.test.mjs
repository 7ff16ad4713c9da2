// Decoding a model with an attention variant (docs/train-api.md, tr.decoder): the recurrent state
// of linear attention (tr.decoder({ cache: true }) for normalizer 'linear', S = Σ φ(k)vᵀ and
// z = Σ φ(k) per layer and K/V head), the K/V cache with RoPE, ALiBi, qkNorm, softmax1, sigmoid
// and relu, and the recompute path give, at every step, the logits of the model's forward over the prefix,
// computed here in float64 from tr.weights() and the definitions (not from the module):
//   x = E[tok] (+ P[pos] when learned); per layer, head h (K/V head g = h / (H / H_kv)):
//   q, k ← qkNorm (÷ max(‖·‖₂, 1e-12)), then RoPE (pair (2p, 2p+1) rotated by pos·10000^(−2p/d_h));
//   s_ij = scale·q_i·k_j − m_h·(i − j) (ALiBi, Press et al.'s slopes) for j ≤ i;
//   softmax | softmax1 (a zero-score, zero-value sink) | σ(s + b), b = −ln n | max(s, 0)/n |
//   linear: φ(q)·φ(k) / (Σ_j φ(q)·φ(k_j) + 1e-6), φ = elu + 1, no scale;
//   x += Σ_h out_h W_O; logits = x U.
// Tolerance: 1e-4 · max(1, max |logit|) (float32 module against float64 here, 12 positions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTrain, throwsField } from './train-helpers.mjs';

/** Press et al.'s ALiBi slopes for n heads (a power of two: 2^(−8(h+1)/n); otherwise the closest
 *  lower power of two, then every other slope of twice that). */
function alibiSlopes(n) {
  const pow2 = (m) => Array.from({ length: m }, (_, h) => 2 ** (-8 * (h + 1) / m));
  if (Number.isInteger(Math.log2(n))) return pow2(n);
  const low = 2 ** Math.floor(Math.log2(n));
  return pow2(low).concat(pow2(2 * low).filter((_, i) => i % 2 === 0).slice(0, n - low));
}

const phi = (x) => (x > 0 ? x + 1 : Math.exp(x));

/** The model over tokens (length n) in float64: logits of the last position. */
function referenceLogits(c, w, tokens) {
  const n = tokens.length, D = c.dModel, H = c.heads, G = c.kvHeads, dh = D / H, V = c.vocab;
  const x = Array.from({ length: n }, (_, i) => Float64Array.from({ length: D }, (_, d) => w.embed[tokens[i] * D + d] + (c.positional === 'learned' ? w.pos[i * D + d] : 0)));
  const slopes = c.positional === 'alibi' ? alibiSlopes(H) : null;
  const scale = c.scale ?? 1 / Math.sqrt(dh);
  const proj = (W, heads, i, h) => {
    const out = new Float64Array(dh);
    for (let e = 0; e < dh; e++) for (let d = 0; d < D; d++) out[e] += x[i][d] * W[d * heads * dh + h * dh + e];
    return out;
  };
  const prep = (r, pos) => {
    if (c.qkNorm) {
      const nr = Math.max(Math.hypot(...r), 1e-12);
      for (let e = 0; e < dh; e++) r[e] /= nr;
    }
    if (c.positional === 'rope') {
      for (let p = 0; p < dh / 2; p++) {
        const a = pos * 10000 ** (-2 * p / dh), x0 = r[2 * p], x1 = r[2 * p + 1];
        r[2 * p] = x0 * Math.cos(a) - x1 * Math.sin(a);
        r[2 * p + 1] = x0 * Math.sin(a) + x1 * Math.cos(a);
      }
    }
    return r;
  };
  for (const L of w.layers) {
    const dx = Array.from({ length: n }, () => new Float64Array(D));
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / (H / G));
      const K = [], Vv = [];
      for (let j = 0; j < n; j++) { K.push(prep(proj(L.wk, G, j, g), j)); Vv.push(proj(L.wv, G, j, g)); }
      for (let i = 0; i < n; i++) {
        const q = prep(proj(L.wq, H, i, h), i);
        const s = [];
        for (let j = 0; j <= i; j++) {
          if (c.normalizer === 'linear') s.push(q.reduce((a, qe, e) => a + phi(qe) * phi(K[j][e]), 0));
          else s.push(scale * q.reduce((a, qe, e) => a + qe * K[j][e], 0) - (slopes ? slopes[h] * (i - j) : 0));
        }
        // sigmoid's default bias and relu's divisor use the call's T_k = n (the prefix's length).
        let wgt;
        if (c.normalizer === 'softmax' || c.normalizer === 'softmax1') {
          const m = Math.max(...s, c.normalizer === 'softmax1' ? 0 : -Infinity);
          const e = s.map((v) => Math.exp(v - m));
          const z = e.reduce((a, b) => a + b, 0) + (c.normalizer === 'softmax1' ? Math.exp(-m) : 0);
          wgt = e.map((v) => v / z);
        } else if (c.normalizer === 'sigmoid') wgt = s.map((v) => 1 / (1 + Math.exp(-(v + (c.sigmoidBias ?? -Math.log(n))))));
        else if (c.normalizer === 'relu') wgt = s.map((v) => Math.max(v, 0) / n);
        else { const z = s.reduce((a, b) => a + b, 0) + 1e-6; wgt = s.map((v) => v / z); }
        const out = new Float64Array(dh);
        wgt.forEach((a, j) => { for (let e = 0; e < dh; e++) out[e] += a * Vv[j][e]; });
        for (let d = 0; d < D; d++) for (let e = 0; e < dh; e++) dx[i][d] += out[e] * L.wo[(h * dh + e) * D + d];
      }
    }
    for (let i = 0; i < n; i++) for (let d = 0; d < D; d++) x[i][d] += dx[i][d];
  }
  const y = x[n - 1];
  return Float64Array.from({ length: V }, (_, v) => y.reduce((a, yd, d) => a + yd * w.unembed[d * V + v], 0));
}

const BASE = { vocab: 11, seqLen: 12, dModel: 16, heads: 4, batch: 2, seed: 4, initStd: 0.5 };
const CASES = [
  { name: 'linear, learned positions, GQA', cfg: { normalizer: 'linear', kvHeads: 2 }, mode: 'state' },
  { name: 'linear, RoPE, qkNorm, MQA', cfg: { normalizer: 'linear', positional: 'rope', qkNorm: true, kvHeads: 1 }, mode: 'state' },
  { name: 'softmax, RoPE', cfg: { positional: 'rope' }, mode: 'cache' },
  { name: 'softmax, ALiBi, 6 heads', cfg: { positional: 'alibi', heads: 6, kvHeads: 3, dModel: 24 }, mode: 'cache' },
  { name: 'softmax1, qkNorm, scale 10', cfg: { normalizer: 'softmax1', qkNorm: true, scale: 10 }, mode: 'cache' },
  { name: 'sigmoid (bias −1.5), ALiBi', cfg: { normalizer: 'sigmoid', sigmoidBias: -1.5, positional: 'alibi' }, mode: 'cache' },
  // relu's 1/T_k and sigmoid's default −ln T_k change the earlier positions' outputs with each
  // token: cacheable with one layer only (two layers: see the last test).
  { name: 'sigmoid (bias −ln t), one layer', cfg: { normalizer: 'sigmoid', layers: 1 }, mode: 'cache' },
  { name: 'relu, no positions, one layer', cfg: { normalizer: 'relu', positional: 'none', layers: 1 }, mode: 'cache' },
];

for (const { name, cfg, mode } of CASES) {
  test(`tr.decoder with ${name}: every step's logits equal the forward over the prefix (${mode})`, async () => {
    const lib = await loadTrain();
    const tr = lib.createTrainer({ ...BASE, ...cfg });
    const c = tr.config, w = tr.weights();
    const dec = tr.decoder({ cache: true });
    const kv = tr.decoder({ cache: true, state: false });
    const re = tr.decoder({ cache: false }); // the recompute path: the module's own forward
    assert.equal(dec.mode, mode);
    assert.equal(kv.mode, 'cache');
    const toks = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8];
    let worst = 0, mag = 1;
    for (let t = 0; t < toks.length; t++) {
      const ref = referenceLogits(c, w, toks.slice(0, t + 1));
      for (const v of ref) mag = Math.max(mag, Math.abs(v));
      const a = dec.append(toks[t]), b = kv.append(toks[t]), r = re.append(toks[t]);
      if (mode === 'state') assert.equal(a.weights, null, 'the recurrent state has no weights to show');
      else assert.equal(a.weights.length, c.layers * c.heads * (t + 1));
      for (let v = 0; v < c.vocab; v++) worst = Math.max(worst, Math.abs(a.logits[v] - ref[v]), Math.abs(b.logits[v] - ref[v]), Math.abs(r.logits[v] - ref[v]));
      // Greedy: the token each mode would pick next is the recompute path's.
      const pick = (x) => x.indexOf(Math.max(...x));
      assert.equal(pick(a.logits), pick(r.logits), `step ${t}: ${mode} picks another token than recompute`);
    }
    console.log(`# ${name}: max |Δ logits| ${worst.toExponential(2)} (logits up to ${mag.toFixed(2)})`);
    assert.ok(worst <= 1e-4 * mag, `${name}: max |delta| ${worst}`);
    dec.delete();
    kv.delete();
    re.delete();
    tr.delete();
  });
}

test('the recurrent state: constant bytes at every length, S and z from the K/V cache, errors name their field', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer({ ...BASE, normalizer: 'linear', kvHeads: 2 });
  const dh = 4, G = 2, L = 2;
  const st = tr.decoder();
  const kv = tr.decoder({ state: false });
  const bytes = L * G * (dh * dh + dh) * 4;
  for (let t = 0; t < 12; t++) {
    assert.equal(st.append(t % 11).cacheBytes, bytes);
    assert.equal(kv.append(t % 11).cacheBytes, 2 * L * G * 12 * dh * 4);
  }
  const { s, z } = st.state(1);
  const { k, v } = kv.cache(1);
  assert.equal(s.length, G * dh * dh);
  let worst = 0;
  for (let g = 0; g < G; g++) for (let a = 0; a < dh; a++) {
    let zr = 0;
    for (let j = 0; j < 12; j++) zr += phi(k[(g * 12 + j) * dh + a]);
    worst = Math.max(worst, Math.abs(zr - z[g * dh + a]));
    for (let b = 0; b < dh; b++) {
      let sr = 0;
      for (let j = 0; j < 12; j++) sr += phi(k[(g * 12 + j) * dh + a]) * v[(g * 12 + j) * dh + b];
      worst = Math.max(worst, Math.abs(sr - s[(g * dh + a) * dh + b]));
    }
  }
  assert.ok(worst < 1e-4, `S, z vs the cache: ${worst}`);
  throwsField(lib, () => st.cache(0), 'cache', 'the state keeps no K/V cache');
  throwsField(lib, () => kv.state(0), 'state', 'the K/V cache has no state');
  throwsField(lib, () => st.state(2), 'layer', 'layer out of range');
  throwsField(lib, () => tr.decoder({ cache: false, state: true }), 'state', 'state needs the cache');
  throwsField(lib, () => tr.decoder({ state: 'yes' }), 'state', 'state must be a boolean');
  const soft = lib.createTrainer(BASE);
  throwsField(lib, () => soft.decoder({ state: true }), 'state', 'the state needs linear attention');
  assert.equal(soft.decoder().mode, 'cache');
  assert.equal(soft.decoder({ cache: false }).mode, 'recompute');
  // Greedy decoding with the state and with the K/V cache gives the same tokens.
  const greedy = (d) => {
    d.reset();
    const out = [3, 1, 4, 1];
    let lg = null;
    for (const t of out) lg = d.append(t).logits;
    while (out.length < 12) {
      const next = lg.indexOf(Math.max(...lg));
      out.push(next);
      if (out.length < 12) lg = d.append(next).logits;
    }
    return out;
  };
  assert.deepEqual(greedy(st), greedy(kv));
  st.reset();
  assert.equal(st.length, 0);
  assert.ok(st.state(0).z.every((x) => x === 0));
  soft.delete();
  tr.delete();
});

test('relu and sigmoid\'s default bias with two layers: no cache (field cache), recompute equals the forward', async () => {
  const lib = await loadTrain();
  for (const cfg of [{ normalizer: 'relu' }, { normalizer: 'sigmoid' }]) {
    const tr = lib.createTrainer({ ...BASE, ...cfg });
    throwsField(lib, () => tr.decoder(), 'cache', `${cfg.normalizer}: a cache would hold stale keys`);
    throwsField(lib, () => tr.generate([1, 2], 3), 'cache', `${cfg.normalizer}: generate with the cache`);
    const re = tr.decoder({ cache: false });
    const toks = [3, 1, 4, 1, 5, 9];
    let worst = 0, mag = 1;
    for (let t = 0; t < toks.length; t++) {
      const ref = referenceLogits(tr.config, tr.weights(), toks.slice(0, t + 1));
      const a = re.append(toks[t]);
      for (let v = 0; v < ref.length; v++) { worst = Math.max(worst, Math.abs(a.logits[v] - ref[v])); mag = Math.max(mag, Math.abs(ref[v])); }
    }
    console.log(`# ${cfg.normalizer}, two layers, recompute: max |Δ logits| ${worst.toExponential(2)} (logits up to ${mag.toFixed(2)})`);
    assert.ok(worst <= 1e-4 * mag, `${cfg.normalizer} recompute: ${worst}`);
    assert.equal(tr.generate([1, 2], 3, { cache: false }).tokens.length, 3);
    re.delete();
    tr.delete();
  }
});
