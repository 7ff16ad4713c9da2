// Soak test of the training module (attn_train): random calls, valid and hostile, through one
// instance. Every call either returns or throws an AttnError naming a field; nothing may abort
// the instance. Every 200 calls a fresh reference trainer must reproduce the bits of the first
// one's loss history; the wasm heap measured after the first half must not grow again in the
// second half (same distribution of calls).
//
// Run: node --test tests/soak/   (TRAIN_SOAK_CALLS=n, default 2000)
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CALLS = Number(process.env.TRAIN_SOAK_CALLS || 2000);

function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (x) => x[Math.floor(next() * x.length)],
    bool: (p = 0.5) => next() < p };
}

const HOSTILE = [NaN, Infinity, -1, 0, 1.5, 1e9, '3', null, undefined, {}, []];

test(`train soak: ${CALLS} random calls through one instance`, async () => {
  const { default: createAttnTrain } = await import(path.join(ROOT, 'build/wasm/attn_train.mjs'));
  const lib = await createAttnTrain({ wasmBinary: fs.readFileSync(path.join(ROOT, 'build/wasm/attn_train.wasm')) });
  const REF = { vocab: 16, seqLen: 12, dModel: 16, heads: 2, batch: 4, seed: 5 };
  const refRun = () => {
    const t = lib.createTrainer(REF);
    const l = t.train(5).loss;
    t.delete();
    return l;
  };
  const ref = refRun();
  const r = rng(1);
  const live = [];
  const decoders = [];
  let thrown = 0, heapHalf = 0;
  const cfg = () => {
    const heads = r.pick([1, 2, 4]);
    const c = { vocab: r.pick([8, 16, 24]), seqLen: r.pick([4, 8, 12]), heads, kvHeads: r.pick([1, heads]),
      dModel: heads * r.pick([2, 4, 8]), layers: r.int(1, 3), batch: r.int(1, 6), seed: r.int(0, 99),
      layerNorm: r.bool(), positional: r.pick(['learned', 'none']), kernel: r.pick(['naive', 'tiled']),
      dropout: r.pick([0, 0, 0.2]), task: r.pick(['induction', 'induction-fixed', 'random']), lr: r.pick([1e-2, 1e-3, 50]) };
    if (r.bool(0.2)) c[r.pick(Object.keys(c))] = r.pick(HOSTILE);
    return c;
  };
  for (let i = 0; i < CALLS; i++) {
    const op = live.length === 0 ? 'create' : r.pick(['create', 'train', 'evaluate', 'headScores', 'attention',
      'sampleBatch', 'lossAndGradients', 'trainOn', 'weights', 'setLearningRate', 'setAblation', 'decoder',
      'append', 'generate', 'delete', 'shards', 'setParams']);
    const tr = live.length ? r.pick(live) : null;
    try {
      switch (op) {
        case 'create': {
          const c = cfg();
          if (tr && r.bool(0.2)) c.weights = tr.weights();
          live.push(lib.createTrainer(c));
          if (live.length > 4) live.shift().delete();
          break;
        }
        case 'train': tr.train(r.bool(0.9) ? r.int(0, 3) : r.pick(HOSTILE)); break;
        case 'evaluate': tr.evaluate(); break;
        case 'headScores': tr.headScores(); break;
        case 'attention': {
          const n = r.int(0, tr.config.seqLen + 1);
          tr.attention(r.bool(0.9) ? Int32Array.from({ length: n }, () => r.int(-1, tr.config.vocab)) : r.pick(HOSTILE));
          break;
        }
        case 'sampleBatch': tr.sampleBatch(); break;
        case 'lossAndGradients':
        case 'trainOn': {
          const b = tr.sampleBatch();
          if (r.bool(0.3)) b.tokens[r.int(0, b.tokens.length - 1)] = r.int(-3, 40);
          if (r.bool(0.2)) b.lossMask = b.lossMask.subarray(1);
          if (r.bool(0.1)) b.lossMask.fill(0);
          tr[op](b.tokens, b.lossMask);
          break;
        }
        case 'weights': tr.weights(); break;
        case 'setLearningRate': tr.setLearningRate(r.pick([1e-3, 1e-2, NaN, -1, 1e5])); break;
        case 'setAblation': tr.setAblation(r.int(-1, 3), r.int(-1, 4), r.bool(0.9) ? r.bool() : 1); break;
        case 'decoder': decoders.push(tr.decoder({ cache: r.bool() })); if (decoders.length > 4) decoders.shift().delete(); break;
        case 'append': if (decoders.length) r.pick(decoders).append(r.int(-2, 30)); break;
        case 'generate': tr.generate(Int32Array.from({ length: r.int(0, 4) }, () => r.int(0, 8)), r.int(0, 10),
          { cache: r.bool(), temperature: r.pick([0, 0.7, -1]), seed: r.int(0, 5) }); break;
        case 'delete': live.splice(live.indexOf(tr), 1); tr.delete(); break;
        case 'shards': {
          // The shard API, valid and hostile: a step from shards, or a malformed batch / result.
          const b = tr.nextBatch();
          if (r.bool(0.2)) b[r.pick(['step', 'targets', 'tokens', 'lossMask'])] = r.pick(HOSTILE);
          const parts = [0, 1, 2, 3].filter(() => r.bool(0.95)).map((s) => tr.shardGradient(b, s));
          if (r.bool(0.2) && parts.length > 1) parts.reverse();
          if (r.bool(0.1) && parts.length) parts[0].grads = parts[0].grads.subarray(1);
          tr.applyGradients(b, parts);
          break;
        }
        case 'setParams': {
          const w = tr.params();
          if (r.bool(0.3)) w[r.int(0, w.length - 1)] = r.pick([NaN, Infinity]);
          tr.setParams(r.bool(0.9) ? w : r.pick(HOSTILE));
          break;
        }
      }
    } catch (e) {
      assert.ok(e instanceof lib.AttnError, `call ${i} (${op}): ${e && e.stack}`);
      assert.ok(typeof e.field === 'string' && e.field.length > 0, `call ${i} (${op}): no field`);
      thrown++;
    }
    if ((i + 1) % 200 === 0) {
      const l = refRun();
      assert.deepEqual(Array.from(l), Array.from(ref), `call ${i}: reference loss history changed`);
    }
    if (i + 1 === CALLS >> 1) heapHalf = lib.heapBytes();
  }
  for (const t of live) t.delete();
  for (const d of decoders) d.delete();
  const heapEnd = lib.heapBytes();
  console.log(`${CALLS} calls, ${thrown} AttnErrors, heap ${(heapHalf / 2 ** 20).toFixed(0)} MiB at half, ${(heapEnd / 2 ** 20).toFixed(0)} MiB at the end`);
  assert.ok(heapEnd <= heapHalf * 1.25 + (4 << 20), 'the heap kept growing in the second half');
});
