// tr.textScores(tokens) and lib.headRoles through the wasm module: every text of probe.json (the
// NumPy oracle, tests/oracle/gen_probe_fixtures.py) with the case's weights, the roles, the
// ablation mask, and bad tokens (an AttnError naming 'tokens', the instance still usable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './helpers.mjs';
import { loadTrain, throwsField, bitsEqual } from './train-helpers.mjs';

const KEYS = ['previous', 'induction', 'duplicate', 'first'];

function probeTrainer(lib, c) {
  const f = (a) => (a === null ? null : Float32Array.from(a));
  const p = c.params;
  const weights = {
    embed: f(p.embed), pos: f(p.pos), lnGain: f(p.lnGain), lnBias: f(p.lnBias), unembed: f(p.unembed),
    layers: p.layers.map((L) => ({ wq: f(L.wq), wk: f(L.wk), wv: f(L.wv), wo: f(L.wo) })),
  };
  const cfg = { ...c.config, task: 'random', batch: 1, scale: c.config.scale === null ? 'sqrt' : c.config.scale };
  return lib.createTrainer({ ...cfg, weights });
}

// max |a - b| / max(1, max |b|), as test_probe.cpp measures it.
function relDiff(a, b) {
  assert.equal(a.length, b.length);
  let big = 1, d = 0;
  for (const x of b) big = Math.max(big, Math.abs(x));
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d / big;
}

test('lib.headRoles: the core\'s role names and threshold, as the oracle spells them; frozen', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('probe.json');
  assert.deepEqual([...lib.headRoles.names], fx.roles.names);
  assert.equal(lib.headRoles.threshold, fx.roles.threshold);
  assert.ok(Object.isFrozen(lib.headRoles) && Object.isFrozen(lib.headRoles.names));
});

test('textScores matches the NumPy oracle on every text of probe.json (float32: 2e-5 relative), roles included', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('probe.json');
  let worst = 0, texts = 0, roles = 0;
  for (const c of fx.cases) {
    const tr = probeTrainer(lib, c);
    const LH = c.config.layers * c.config.heads;
    for (const tx of c.texts) {
      const r = tr.textScores(Int32Array.from(tx.tokens));
      for (const k of KEYS) {
        assert.ok(r[k] instanceof Float64Array && r[k].length === LH, `${c.name}: ${k}`);
        const d = relDiff(r[k], tx[k]);
        assert.ok(d <= 2e-5, `${c.name} [${tx.tokens}] ${k}: relative max |delta| ${d}`);
        worst = Math.max(worst, d);
      }
      assert.ok(Array.isArray(r.roles) && r.roles.length === LH);
      for (let i = 0; i < LH; i++) {
        assert.ok(lib.headRoles.names.includes(r.roles[i]), r.roles[i]);
        if (tx.roleClose[i]) continue;  // a float32 forward may flip a role this close to a boundary
        assert.equal(r.roles[i], tx.roles[i], `${c.name} [${tx.tokens}] head ${i}`);
        roles++;
      }
      // An array of integers reads as the Int32Array does.
      assert.ok(bitsEqual(tr.textScores(tx.tokens).induction, r.induction));
      texts++;
    }
    tr.delete();
  }
  assert.ok(texts >= 9 && roles >= 30, `${texts} texts, ${roles} roles`);
  console.log(`# probe.json text scores through the wasm module: max relative |delta| ${worst.toExponential(2)}`);
});

test('textScores: the ablation mask (layer 0 unchanged, layer 1 moves; off restores the bits)', async () => {
  const lib = await loadTrain();
  const c = loadFixture('probe.json').cases.find((x) => x.name === 'learned-2l');
  const tr = probeTrainer(lib, c);
  const H = c.config.heads, tokens = c.texts[0].tokens;
  const a = tr.textScores(tokens);
  tr.setAblation(0, 0, true);
  const b = tr.textScores(tokens);
  for (const k of KEYS) assert.ok(bitsEqual(a[k].subarray(0, H), b[k].subarray(0, H)), `layer 0 ${k}`);
  assert.ok(!bitsEqual(a.induction.subarray(H), b.induction.subarray(H)), 'layer 1 reads the ablated output');
  tr.setAblation(0, 0, false);
  const d = tr.textScores(tokens);
  for (const k of KEYS) assert.ok(bitsEqual(a[k], d[k]), k);
  tr.delete();
});

test('textScores: bad tokens name the field; the instance keeps working', async () => {
  const lib = await loadTrain();
  const c = loadFixture('probe.json').cases[0];
  const tr = probeTrainer(lib, c);
  const T = c.config.seqLen, V = c.config.vocab, good = c.texts[0].tokens;
  const want = tr.textScores(good);
  const bad = [
    [[], 'empty'], [[3], 'one token'], [new Int32Array(T + 1), 'longer than seqLen'],
    [[1, V], 'id = vocab'], [[1, -1, 2], 'negative id'], [[1, 2.5], 'not an integer'],
    ['abc', 'a string'], [null, 'null'], [new Float32Array(4), 'a Float32Array'],
  ];
  for (const [tokens, label] of bad) {
    throwsField(lib, () => tr.textScores(tokens), 'tokens', label);
    const r = tr.textScores(good);
    for (const k of KEYS) assert.ok(bitsEqual(r[k], want[k]), `${label}: ${k} after the error`);
    assert.deepEqual(r.roles, want.roles);
  }
  tr.delete();
  throwsField(lib, () => tr.textScores(good), 'trainer', 'after delete()');
});

test('textLoss, makeProbe and probeScores with a knocked-out head match the NumPy oracle; bad input names its field', async () => {
  const lib = await loadTrain();
  const fx = loadFixture('probe.json');
  const rel = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));
  for (const c of fx.cases) {
    const tr = probeTrainer(lib, c);
    const ab = c.ablated;
    const windows = Int32Array.from(ab.windows);
    assert.ok(rel(tr.textLoss(windows), ab.windowLoss) <= 2e-5, `${c.name}: intact loss`);
    tr.setAblation(0, 0, true);
    assert.ok(rel(tr.textLoss(windows), ab.windowLossAblated) <= 2e-5, `${c.name}: ablated loss`);
    // A seed past 2^53 (one case has 2^63 + 7) cannot be a JS number: the API refuses it.
    if (!Number.isSafeInteger(c.seed)) {
      throwsField(lib, () => tr.makeProbe(c.candidates, 2, c.seed), 'seed', `${c.name}: seed`);
      tr.delete();
      continue;
    }
    // The case's own rows: makeProbe draws the documented tokens.
    assert.deepEqual([...tr.makeProbe(c.candidates, c.count, c.seed)], c.probe);
    const probe = tr.makeProbe(c.candidates, ab.probeRows, c.seed);
    const s = tr.probeScores(probe);
    assert.ok(rel(s.inContext, ab.inContext) <= 2e-5, `${c.name}: inContext ${s.inContext} vs ${ab.inContext}`);
    assert.ok(rel(s.ceSecond - s.ceFirst, s.inContext) <= 1e-12);
    assert.ok(s.induction instanceof Float64Array && relDiff(s.induction, ab.induction) <= 2e-5, `${c.name}: induction`);
    assert.ok(relDiff(s.previous, ab.previous) <= 2e-5, `${c.name}: previous`);
    tr.setAblation(0, 0, false);
    // Bad input: an AttnError naming the argument, the trainer still usable.
    throwsField(lib, () => tr.textLoss(windows.subarray(1)), 'windows', `${c.name}: windows`);
    throwsField(lib, () => tr.textLoss(new Int32Array(0)), 'windows', `${c.name}: windows`);
    throwsField(lib, () => tr.probeScores(probe.subarray(1)), 'probe', `${c.name}: probe`);
    throwsField(lib, () => tr.makeProbe([], 2, 0), 'candidates', `${c.name}: candidates`);
    throwsField(lib, () => tr.makeProbe([c.config.vocab], 2, 0), 'candidates', `${c.name}: candidates`);
    throwsField(lib, () => tr.makeProbe(c.candidates, 0, 0), 'rows', `${c.name}: rows`);
    throwsField(lib, () => tr.makeProbe(c.candidates, 1e9, 0), 'rows', `${c.name}: rows`);
    throwsField(lib, () => tr.makeProbe(c.candidates, 2, -1), 'seed', `${c.name}: seed`);
    assert.ok(rel(tr.textLoss(windows), ab.windowLoss) <= 2e-5);
    tr.delete();
  }
});
