// core.example and core.entropyStudy against tests/fixtures/examples.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, compareArrays, nums, num, maxAbs, ABS_TOL, U32 } from './helpers.mjs';

const ex = loadFixture('examples.json');
const deltas = [];

test('induction: the example builder reproduces the oracle matrices exactly', async () => {
  const core = await loadCore();
  const fx = ex.induction;
  for (const e of [core.example('induction'), core.example('induction', { sharpness: 14 }),
    core.example('induction', { tokens: fx.tokens })]) {
    assert.deepEqual(e.tokens, fx.tokens);
    for (const key of ['t', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'causal']) {
      assert.equal(e[key], fx[key], `induction ${key}`);
    }
    for (const key of ['x', 'wq', 'wk', 'wv', 'wo']) {
      assert.ok(e[key] instanceof Float32Array, `${key} must be a Float32Array`);
      compareArrays(e[key], fx[key], 0, `induction ${key} (vocabulary order sorted(set(tokens)))`);
    }
  }
});

test("induction: lesson 1's figures 0.471 (head 1, keys 1 and 8) and 0.877 (head 2, key 7) at row 8", async () => {
  const core = await loadCore();
  const fx = ex.induction;
  const e = core.example('induction');
  for (const kernel of ['naive', 'tiled']) {
    const r = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, { ...e, kernel });
    const d = compareArrays(r.output, fx.expect.output, ABS_TOL, `induction output [${kernel}]`);
    compareArrays(r.headOutputs, fx.expect.headOutputs, ABS_TOL, `induction headOutputs [${kernel}]`);
    compareArrays(r.entropy, fx.expect.entropy, ABS_TOL, `induction entropy [${kernel}]`);
    deltas.push(['induction', kernel, 'output', d]);
    if (kernel === 'tiled') continue;
    const dw = compareArrays(r.weights, fx.expect.weights, ABS_TOL, 'induction weights');
    deltas.push(['induction', kernel, 'weights', dw]);
    const T = fx.t;
    const w = (h, i, j) => r.weights[(h * T + i) * T + j];
    const { row, head1, head2 } = fx.figures;
    for (const key of head1.keys) {
      assert.equal(Math.round(w(0, row, key) * 1000) / 1000, head1.weight, `head 1 row ${row} key ${key}: ${w(0, row, key)}`);
    }
    assert.equal(Math.round(w(1, row, head2.key) * 1000) / 1000, head2.weight, `head 2 row ${row} key ${head2.key}: ${w(1, row, head2.key)}`);
    assert.equal(head1.weight, 0.471);
    assert.equal(head2.weight, 0.877);
  }
});

// random examples: the matrices come from the documented SplitMix64 + Box-Muller generator,
// re-implemented in Python by the oracle.
function randomOpts(fx) {
  return {
    seed: fx.seed, t: fx.t, dModel: fx.dModel, heads: fx.heads, kvHeads: fx.kvHeads, dk: fx.dk,
    dv: fx.dv, causal: fx.causal,
  };
}

test('random examples: matrices match the Python re-implementation of the generator within 1e-6', async () => {
  const core = await loadCore();
  for (const fx of ex.random) {
    const variants = [core.example('random', randomOpts(fx))];
    if (fx.seed === 0 && fx.t === 6 && fx.dModel === 8 && fx.heads === 1) {
      variants.push(core.example('random'), core.example('random', {})); // documented defaults
    }
    for (const [n, e] of variants.entries()) {
      for (const key of ['t', 'dModel', 'heads', 'kvHeads', 'dk', 'dv', 'causal']) {
        assert.equal(e[key], fx[key], `random seed ${fx.seed}: ${key}`);
      }
      assert.deepEqual(e.tokens, fx.tokens, `random seed ${fx.seed}: tokens`);
      for (const key of ['x', 'wq', 'wk', 'wv', 'wo']) {
        compareArrays(e[key], fx[key], 1e-6, `random seed ${fx.seed} ${key}`);
        if (n > 0) continue;
        // report how many entries are bit-identical to the oracle's float32 values
        const exp = nums(fx[key]);
        let diff = 0, worst = 0;
        for (let i = 0; i < exp.length; i++) {
          const d = Math.abs(e[key][i] - Math.fround(exp[i]));
          if (d !== 0) diff++;
          worst = Math.max(worst, d);
        }
        deltas.push([`random seed ${fx.seed}`, '-', `${key} (${exp.length - diff}/${exp.length} bit-identical)`, worst]);
      }
    }
  }
  // tokens, when given, set T and are echoed; the draws are those of the same T
  const fx0 = ex.random[0];
  const toks = ['a', 'b', 'c', 'd', 'e', 'f'];
  const et = core.example('random', { seed: 0, tokens: toks });
  assert.deepEqual(et.tokens, toks);
  assert.equal(et.t, 6);
  for (const key of ['x', 'wq', 'wk', 'wv', 'wo']) compareArrays(et[key], fx0[key], 1e-6, `random with tokens: ${key}`);
  // different seeds give different matrices
  const a = core.example('random', { seed: 1 }), b = core.example('random', { seed: 2 });
  assert.notDeepEqual(Array.from(a.x), Array.from(b.x));
});

test("random examples: init 'scaled' gives the oracle's draws times 1/sqrt(dModel) (X unchanged)", async () => {
  const core = await loadCore();
  for (const fx of ex.random) {
    const e = core.example('random', { ...randomOpts(fx), init: 'scaled' });
    const sd = 1 / Math.sqrt(fx.dModel);
    compareArrays(e.x, fx.x, 1e-6, `scaled init seed ${fx.seed}: x`);
    for (const key of ['wq', 'wk', 'wv', 'wo']) {
      compareArrays(e[key], nums(fx[key]).map((w) => w * sd), 1e-6, `scaled init seed ${fx.seed}: ${key}`);
    }
  }
  // 'normal' is the default, spelled out or not
  const a = core.example('random', { seed: 5, init: 'normal' });
  const b = core.example('random', { seed: 5 });
  assert.deepEqual(Array.from(a.wq), Array.from(b.wq));
});

test('random examples: causal multi-head output and weights match the oracle', async () => {
  const core = await loadCore();
  for (const fx of ex.random) {
    const e = core.example('random', randomOpts(fx));
    // N(0,1) weights make scores of tens: float32 rounding grows with them.
    // Bound: |Δ| <= 2e-5 + 16·u32·S·M, S = max |expected score| (from the oracle's q, k),
    // M = max(1, max |expected array|).
    const S = scoreBound(fx);
    for (const kernel of ['naive', 'tiled']) {
      const r = core.multiHeadAttention(e.x, e.wq, e.wk, e.wv, e.wo, { ...e, kernel });
      for (const key of ['output', 'merged', 'headOutputs', 'entropy', ...(kernel === 'naive' ? ['weights'] : [])]) {
        const M = Math.max(1, maxAbs(nums(fx.expect[key])));
        const d = compareArrays(r[key], fx.expect[key], ABS_TOL + 16 * U32 * S * M,
          `random seed ${fx.seed} ${key} [${kernel}]`);
        deltas.push([`random seed ${fx.seed}`, kernel, key, d]);
      }
    }
  }
});

// max |q.k| * scale over the example, in float64 from the fixture matrices.
function scoreBound(fx) {
  const x = nums(fx.x), wq = nums(fx.wq), wk = nums(fx.wk);
  const { t, dModel, heads, kvHeads, dk } = fx;
  const proj = (w, cols) => {
    const out = new Float64Array(t * cols);
    for (let i = 0; i < t; i++) for (let c = 0; c < cols; c++) {
      let s = 0;
      for (let m = 0; m < dModel; m++) s += x[i * dModel + m] * w[m * cols + c];
      out[i * cols + c] = s;
    }
    return out;
  };
  const Q = proj(wq, heads * dk), K = proj(wk, kvHeads * dk);
  let top = 0;
  for (let h = 0; h < heads; h++) {
    const g = Math.floor(h / (heads / kvHeads));
    for (let i = 0; i < t; i++) for (let j = 0; j < t; j++) {
      let s = 0;
      for (let d = 0; d < dk; d++) s += Q[i * heads * dk + h * dk + d] * K[j * kvHeads * dk + g * dk + d];
      top = Math.max(top, Math.abs(s) / Math.sqrt(dk));
    }
  }
  return top;
}

test('entropy study: core figures within the statistical spread of the NumPy study and the lesson targets', async () => {
  const core = await loadCore();
  const fx = ex.entropy_study;
  const sMean = nums(fx.spread.scaledMean), sStd = nums(fx.spread.scaledStd);
  const uMean = nums(fx.spread.unscaledMean), uStd = nums(fx.spread.unscaledStd);
  const [lo, hi] = fx.lesson.scaledRange;
  const ceiling = num(fx.ceiling);
  const seen = [];
  for (const seed of [0, 1, 2]) {
    const r = core.entropyStudy({ dks: fx.dks, keys: fx.keys, queries: fx.queries, seed });
    assert.deepEqual(Array.from(r.dk), fx.dks);
    assert.ok(Math.abs(r.ceiling - ceiling) < 1e-9, `ceiling ${r.ceiling} != ln 16`);
    for (let i = 0; i < fx.dks.length; i++) {
      const s = r.scaled[i], u = r.unscaled[i];
      // the core uses its own generator: compare with NumPy's distribution over seeds (4 sd)
      assert.ok(Math.abs(s - sMean[i]) <= 4 * sStd[i],
        `seed ${seed} d_k ${fx.dks[i]}: scaled ${s} vs NumPy ${sMean[i]} ± 4·${sStd[i]}`);
      assert.ok(Math.abs(u - uMean[i]) <= 4 * uStd[i],
        `seed ${seed} d_k ${fx.dks[i]}: unscaled ${u} vs NumPy ${uMean[i]} ± 4·${uStd[i]}`);
      // lesson: scaled ~2.36-2.43 at every d_k (with the same statistical slack)
      assert.ok(s >= lo - 4 * sStd[i] && s <= hi + 4 * sStd[i], `scaled ${s} outside the lesson's band`);
      assert.ok(s < ceiling);
      if (i > 0) assert.ok(u < r.unscaled[i - 1], 'unscaled entropy must fall as d_k grows');
    }
    const u1024 = r.unscaled[fx.dks.indexOf(1024)];
    assert.ok(Math.abs(u1024 - fx.lesson.unscaledAt1024) <= 4 * uStd[3] + 0.01,
      `unscaled at d_k 1024: ${u1024}, lesson ≈ 0.10`);
    seen.push(`seed ${seed}: scaled ${Array.from(r.scaled, (x) => x.toFixed(3)).join(', ')}; ` +
      `unscaled ${Array.from(r.unscaled, (x) => x.toFixed(3)).join(', ')}`);
  }
  const dflt = core.entropyStudy();
  assert.deepEqual(Array.from(dflt.dk), [16, 64, 256, 1024], 'default dks');
  assert.ok(Math.abs(dflt.ceiling - Math.log(16)) < 1e-9, 'default keys = 16');
  for (let i = 0; i < 4; i++) {
    // default 1000 queries: the query noise is still far below the key-set spread
    assert.ok(Math.abs(dflt.scaled[i] - sMean[i]) <= 4 * sStd[i] + 0.01, `default study scaled[${i}] ${dflt.scaled[i]}`);
  }
  seen.push(`defaults: scaled ${Array.from(dflt.scaled, (x) => x.toFixed(3)).join(', ')}; ` +
    `unscaled ${Array.from(dflt.unscaled, (x) => x.toFixed(3)).join(', ')}`);
  console.log('\nentropy study (core, own generator):\n' + seen.join('\n') +
    `\nNumPy seed ${fx.seed}: scaled ${nums(fx.scaled).map((x) => x.toFixed(3)).join(', ')}; ` +
    `unscaled ${nums(fx.unscaled).map((x) => x.toFixed(3)).join(', ')}`);
});

test('max |Δ| for the examples', () => {
  assert.ok(deltas.length > 0);
  const lines = deltas.map(([w, k, q, d]) => `${w.padEnd(16)} ${k.padEnd(6)} ${q.padEnd(30)} ${d.toExponential(2)}`);
  console.log('\nmax |Δ| vs NumPy oracle, examples\n' + lines.join('\n'));
});
