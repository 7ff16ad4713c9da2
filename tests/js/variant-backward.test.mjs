// core.attentionBackward with the attention variants (normalizer, sigmoidBias, position,
// ropeBase, qkNorm) against every case of tests/fixtures/variant_grads.json (PyTorch autograd,
// float64; tests/oracle/gen_variant_grad_fixtures.py), with each kernel the case lists; the
// forward-only options are errors naming their field and the module keeps working; precision
// 'float64' runs in double.
// Prints max |Δ| (absolute, and relative to the array's largest expected value) per normalizer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, loadFixture, attnOpts, compareArrays, expectFieldError, f32, nums } from './helpers.mjs';

const fixture = loadFixture('variant_grads.json');
const cases = new Map(fixture.cases.map((c) => [c.name, c]));

// Tolerance per array (float32 arithmetic against float64 PyTorch): |Δ| <= 5e-5 + 5e-5·max|expected|.
const ABS = 5e-5, REL = 5e-5;
const maxAbsFinite = (a) => nums(a).reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 0);

const inputs = (c) => [f32(c.q), f32(c.k), f32(c.v), f32(c.dOut)];
function variantOpts(c, extra = {}) {
  const o = c.opts;
  return attnOpts(c, {
    normalizer: o.normalizer, position: o.position, qkNorm: o.qkNorm, ropeBase: o.ropeBase,
    sigmoidBias: o.sigmoidBias, ...extra,
  });
}

function checkCase(core, c, kernel) {
  const g = core.attentionBackward(...inputs(c), variantOpts(c, { kernel }));
  const { heads, kvHeads, tq, tk, dk, dv } = c.opts;
  const label = `${c.name} [${kernel}]`;
  const lens = { dq: heads * tq * dk, dk: kvHeads * tk * dk, dv: kvHeads * tk * dv, output: heads * tq * dv };
  const err = { abs: 0, rel: 0 };
  for (const name of ['output', 'dq', 'dk', 'dv']) {
    assert.ok(g[name] instanceof Float32Array, `${label}: ${name} is a Float32Array`);
    assert.equal(g[name].length, lens[name], `${label}: ${name} length`);
    const top = maxAbsFinite(c.expect[name]);
    const d = compareArrays(g[name], c.expect[name], ABS + REL * top, `${label} ${name}`);
    err.abs = Math.max(err.abs, d);
    err.rel = Math.max(err.rel, top > 0 ? d / top : 0);
  }
  return err;
}

test('attentionBackward with variants matches the PyTorch autograd fixtures (each kernel)', async () => {
  const core = await loadCore();
  const worst = new Map();
  let runs = 0;
  for (const c of fixture.cases) {
    for (const kernel of c.kernels) {
      const e = checkCase(core, c, kernel);
      const key = `${c.opts.normalizer} ${kernel}`;
      const w = worst.get(key) ?? { abs: 0, rel: 0, n: 0 };
      worst.set(key, { abs: Math.max(w.abs, e.abs), rel: Math.max(w.rel, e.rel), n: w.n + 1 });
      runs++;
    }
  }
  assert.ok(runs > 300, `${runs} runs`);
  const lines = [...worst].map(([key, w]) =>
    `  ${key.padEnd(16)} ${String(w.n).padStart(4)} runs  max|Δ| ${w.abs.toExponential(2)}  max|Δ|/max|expected| ${w.rel.toExponential(2)}`);
  console.log(`attentionBackward variants vs PyTorch (${fixture.cases.length} cases; tolerance ${ABS} + ${REL}·max|expected| per array):\n${lines.join('\n')}`);
});

test('variants: the forward-only options and unsupported combinations name their field; the module keeps working', async () => {
  const core = await loadCore();
  const c = cases.get('relu rope qkNorm=True custom h4/2 tq5 tk3') ??
    fixture.cases.find((x) => x.family === 'cross' && x.opts.mask !== null);
  const [q, k, v, dOut] = inputs(c);
  const o = variantOpts(c);
  const bad = [
    ['maxShift false', ['maxShift'], { normalizer: 'softmax', maxShift: false }],
    ['maskMode after', ['maskMode'], { maskMode: 'after' }],
    ['precision float16', ['precision'], { normalizer: 'softmax', position: 'none', qkNorm: false, precision: 'float16' }],
    ['linear with alibi', ['position'], { normalizer: 'linear', position: 'alibi' }],
    ['tiled linear with a custom mask', ['kernel'], { normalizer: 'linear', position: 'none', kernel: 'tiled' }],
    ['normalizer unknown', ['normalizer'], { normalizer: 'softmax2' }],
    ['position unknown', ['position'], { position: 'learned' }],
    ['sigmoidBias NaN', ['sigmoidBias'], { sigmoidBias: NaN }],
    ['ropeBase 0', ['ropeBase'], { ropeBase: 0 }],
    ['qkNorm string', ['qkNorm'], { qkNorm: 'yes' }],
  ];
  for (const [label, fields, extra] of bad) {
    expectFieldError(() => core.attentionBackward(q, k, v, dOut, { ...o, ...extra }), fields, label);
    checkCase(core, c, 'naive');
  }
});

test('precision float64: every fixture case in double, Float64Array results (naive kernel)', async () => {
  const core = await loadCore();
  // Tolerance: the fixtures carry 12 significant digits; |Δ| <= 1e-10 + 1e-10·max|expected|.
  // The inputs are float32 values (shortest decimals): round to float32, then widen, as the oracle did.
  const f64 = (a) => Float64Array.from(f32(a));
  let worst = 0, runs = 0;
  for (const c of fixture.cases) {
    for (const kernel of ['naive']) {  // the forward's tiled kernels run float32 only
      const g = core.attentionBackward(f64(c.q), f64(c.k), f64(c.v), f64(c.dOut), variantOpts(c, { kernel, precision: 'float64' }));
      for (const name of ['output', 'dq', 'dk', 'dv', 'lse']) {
        assert.ok(g[name] instanceof Float64Array, `${c.name} [${kernel}]: ${name} is a Float64Array`);
      }
      for (const name of ['output', 'dq', 'dk', 'dv']) {
        const top = maxAbsFinite(c.expect[name]);
        worst = Math.max(worst, compareArrays(g[name], c.expect[name], 1e-10 + 1e-10 * top, `${c.name} [${kernel}] float64 ${name}`));
      }
      runs++;
    }
  }
  // Float32Array inputs are widened: the same bits as Float64Array ones.
  const c = cases.get('tile softmax1 rope h2/1 tq70 tk70 causal');
  const a = core.attentionBackward(...inputs(c), variantOpts(c, { precision: 'float64' }));
  const b = core.attentionBackward(...inputs(c).map((x) => Float64Array.from(x)), variantOpts(c, { precision: 'float64' }));
  for (const name of ['dq', 'dk', 'dv']) assert.deepEqual(a[name], b[name], name);
  // As the forward: the tiled kernel runs float32 only (field 'kernel').
  expectFieldError(() => core.attentionBackward(...inputs(c), variantOpts(c, { precision: 'float64', kernel: 'tiled' })), ['kernel']);
  console.log(`attentionBackward precision 'float64' vs PyTorch: ${runs} runs, max|Δ| ${worst.toExponential(2)} (tolerance 1e-10 + 1e-10·max|expected|)`);
});

test('variants: the backward\'s output is the forward\'s (both kernels)', async () => {
  const core = await loadCore();
  for (const name of ['tile softmax1 rope h2/1 tq70 tk70 causal', 'tile linear none tq80 tk66 causal']) {
    const c = cases.get(name);
    assert.ok(c, name);
    for (const kernel of c.kernels) {
      const o = variantOpts(c, { kernel });
      const g = core.attentionBackward(...inputs(c), o);
      const f = core.attention(...inputs(c).slice(0, 3), o);
      assert.deepEqual(g.output, f.output, `${name} [${kernel}] output`);
    }
  }
});
