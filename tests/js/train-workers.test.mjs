// Training across Workers (Node worker_threads): each step's fixed shards are shared out among
// 1, 2 or 4 Workers (web/src/train/pool.ts) and the loss history, gradient norms and final
// weights are the same bits as tr.train() on one thread, for every count. The shard Workers run
// the very ShardServer the browser runs (tests/js/shard-worker-node.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadTrain, TRAIN_MJS, TRAIN_WASM, bitsEqual, throwsField } from './train-helpers.mjs';
import { WORKER_CONFIGS as CONFIGS, writePoolModule } from './pool-module.mjs';

const STEPS = 12;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-pool-'));
const poolFile = writePoolModule(tmp);
const poolUrl = pathToFileURL(poolFile).href;
const { ShardPool, assignShards, defaultWorkers, keepAwake, coordinatorAwakeMs, serveShards } = await import(poolUrl);
const WORKER = new URL('./shard-worker-node.mjs', import.meta.url);

function nodePort() {
  const w = new Worker(WORKER, { workerData: { poolUrl, trainMjs: pathToFileURL(TRAIN_MJS).href, trainWasm: TRAIN_WASM } });
  const listeners = [];
  w.on('message', (m) => listeners.forEach((f) => f(m)));
  w.on('error', (e) => listeners.forEach((f) => f({ kind: 'error', id: null, message: String(e), field: null })));
  return { post: (m, transfer = []) => w.postMessage(m, transfer), listen: (f) => listeners.push(f), terminate: () => void w.terminate() };
}

const u32 = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

async function runWith(lib, cfg, workers) {
  const tr = lib.createTrainer(cfg);
  const pool = await ShardPool.start(tr, workers, nodePort);
  pool.awakeMs = 50; // the coordinator stays awake while it waits: scheduling only, the same bits
  try {
    assert.equal(pool.workers, workers);
    // Two calls, so a history spanning train() calls is covered too.
    const a = await pool.train(STEPS - 5);
    const b = await pool.train(5);
    return { loss: [...u32(a.loss), ...u32(b.loss)], gradNorm: [...u32(a.gradNorm), ...u32(b.gradNorm)], params: tr.params(), step: tr.step };
  } finally {
    pool.close();
    tr.delete();
  }
}

test('shards are shared out in order: contiguous groups, the coordinator first', () => {
  assert.deepEqual(assignShards([0, 1, 2, 3], 1), [[0, 1, 2, 3]]);
  assert.deepEqual(assignShards([0, 1, 2, 3], 2), [[0, 1], [2, 3]]);
  assert.deepEqual(assignShards([0, 1, 2, 3], 4), [[0], [1], [2], [3]]);
  assert.deepEqual(assignShards([1, 2, 3], 2), [[1], [2, 3]]);
  assert.deepEqual(assignShards([1, 3], 4), [[], [], [1], [3]]);
  assert.deepEqual(assignShards([0, 1, 2, 3], 2, 0), [[], [0, 1, 2, 3]]);
  assert.deepEqual(assignShards([0, 1, 2, 3], 3, 2), [[0, 1], [2], [3]]);
  assert.equal(defaultWorkers(8), 4);
  assert.equal(defaultWorkers(1), 1);
  assert.equal(defaultWorkers(undefined), 2);
});

test('keepAwake turns the event loop until its promise settles or its time is up, handling other work meanwhile', async () => {
  // Settles first: stops then, having turned.
  let settle;
  const done = new Promise((r) => { settle = r; });
  const t0 = performance.now();
  const turnsP = keepAwake(done, 2000);
  // A timer set meanwhile fires on time: the loop turns, it does not block.
  const set = performance.now();
  const late = await new Promise((r) => setTimeout(() => r(performance.now() - set - 20), 20));
  // Bounds that hold on a busy machine (the test command runs suites side by side) and still
  // catch a loop that blocks: that one fires the timer only after its promise settles.
  assert.ok(late < 250, `a 20 ms timer fired ${late.toFixed(0)} ms late`);
  settle();
  const turns = await turnsP;
  const took = performance.now() - t0;
  assert.ok(turns >= 1, `${turns} turns in ${took.toFixed(0)} ms`);
  assert.ok(took < 1000, `kept awake ${took.toFixed(0)} ms after its promise settled`);
  // Never settles: stops when its time is up.
  const t1 = performance.now();
  await keepAwake(new Promise(() => {}), 30);
  const t = performance.now() - t1;
  assert.ok(t >= 29 && t < 1000, `a 30 ms window lasted ${t.toFixed(0)} ms`);
  assert.equal(await keepAwake(Promise.resolve(), 0), 0);
});

test('the coordinator stays awake only where every working thread has a core', () => {
  assert.equal(coordinatorAwakeMs(2, 2, 0), 50); // Node: coordinator + helper on 2 cores
  assert.equal(coordinatorAwakeMs(2, 2, 1), 0); // the page's main thread needs one of them
  assert.equal(coordinatorAwakeMs(4, 2, 1), 50);
  assert.equal(coordinatorAwakeMs(4, 4, 1), 0);
  assert.equal(coordinatorAwakeMs(8, 1, 0), 0); // no helpers, nothing to wait for
  assert.equal(coordinatorAwakeMs(undefined, 2, 0), 0);
});

test('serveShards answers requests one at a time in arrival order, with their transfers', async () => {
  const log = [];
  const server = {
    async handle(m) {
      log.push(`start ${m.id}`);
      await new Promise((r) => setTimeout(r, m.id === 1 ? 30 : 1)); // the first one is slow
      log.push(`end ${m.id}`);
      const buf = new ArrayBuffer(8);
      return { reply: { kind: 'result', id: m.id, results: [] }, transfer: [buf] };
    },
  };
  const posted = [];
  const serve = serveShards(server, (reply, transfer) => posted.push([reply.id, transfer.length]), 5);
  serve({ kind: 'job', id: 1 });
  serve({ kind: 'job', id: 2 });
  serve({ kind: 'job', id: 3 });
  await new Promise((r) => setTimeout(r, 120));
  assert.deepEqual(log, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  assert.deepEqual(posted, [[1, 1], [2, 1], [3, 1]]);
});

test('1, 2 and 4 Workers give the bits of tr.train() on one thread (losses, gradient norms, weights)', async () => {
  const lib = await loadTrain();
  for (const [i, cfg] of CONFIGS.entries()) {
    const solo = lib.createTrainer(cfg);
    const r = solo.train(STEPS);
    assert.ok(r.finite);
    const want = { loss: u32(r.loss), gradNorm: u32(r.gradNorm), params: solo.params() };
    solo.delete();
    for (const k of [1, 2, 4]) {
      const got = await runWith(lib, cfg, k);
      assert.equal(got.step, STEPS);
      assert.deepEqual(got.loss, want.loss, `config ${i}, ${k} Workers: loss history differs`);
      assert.deepEqual(got.gradNorm, want.gradNorm, `config ${i}, ${k} Workers: gradient norms differ`);
      assert.ok(bitsEqual(got.params, want.params), `config ${i}, ${k} Workers: final weights differ`);
    }
  }
});

test('the shard API in JS: shard gradients add up to lossAndGradients, and errors name the field', async () => {
  const lib = await loadTrain();
  const tr = lib.createTrainer({ seed: 2, dModel: 16, batch: 6 });
  assert.equal(lib.SHARDS, 4);
  const b = tr.nextBatch();
  assert.equal(b.step, 0);
  assert.deepEqual(tr.shards(b), [0, 1, 2, 3]);
  const parts = tr.shards(b).map((s) => tr.shardGradient(b, s));
  for (const p of parts) assert.ok(p.grads.buffer.byteLength === p.grads.length * 4, 'a gradient owns its buffer (transferable)');
  const ref = tr.lossAndGradients(b.tokens, b.lossMask);
  const flat = (w) => {
    const out = [];
    out.push(...w.embed, ...(w.pos ?? []));
    for (const L of w.layers) out.push(...L.wq, ...L.wk, ...L.wv, ...L.wo);
    out.push(...(w.lnGain ?? []), ...(w.lnBias ?? []), ...w.unembed);
    return out;
  };
  const want = flat(ref.grads);
  let scale = 0, err = 0;
  for (let i = 0; i < want.length; i++) {
    const s = parts.reduce((acc, p) => acc + p.grads[i], 0);
    scale = Math.max(scale, Math.abs(want[i]));
    err = Math.max(err, Math.abs(s - want[i]));
  }
  assert.ok(scale > 0 && err <= 1e-5 * scale, `shard sum vs batch gradient: ${err} (scale ${scale})`);
  const loss = parts.reduce((a, p) => a + p.loss, 0);
  assert.ok(Math.abs(loss - ref.loss) <= 1e-6 * ref.loss);
  throwsField(lib, () => tr.shardGradient(b, 4), 'shard', 'shard 4');
  throwsField(lib, () => tr.shardGradient({ ...b, step: -1 }, 0), 'batch.step', 'negative step');
  throwsField(lib, () => tr.shardGradient({ ...b, tokens: [1, 2] }, 0), 'batch.tokens', 'tokens not Int32Array');
  throwsField(lib, () => tr.applyGradients(b, parts.slice(1)), 'shards', 'a shard missing');
  throwsField(lib, () => tr.applyGradients(b, [parts[1], parts[0], parts[2], parts[3]]), 'shards[0]', 'arrival order');
  throwsField(lib, () => tr.applyGradients({ ...b, step: 3 }, parts), 'step', 'stale step');
  throwsField(lib, () => tr.setParams(new Float32Array(3)), 'weights', 'short weights');
  // `into` (the pool recycles its arrays): the same values, in the caller's array; a wrong one is
  // refused before any work.
  const into = new Float32Array(parts[2].grads.length).fill(7);
  const again = tr.shardGradient(b, 2, into);
  assert.equal(again.grads, into);
  assert.deepEqual(u32(again.grads), u32(parts[2].grads));
  assert.equal(again.loss, parts[2].loss);
  throwsField(lib, () => tr.shardGradient(b, 2, new Float32Array(5)), 'into', 'short into');
  throwsField(lib, () => tr.params(new Float64Array(into.length)), 'into', 'Float64Array into');
  const pInto = tr.params(new Float32Array(into.length));
  assert.deepEqual(u32(pInto), u32(tr.params()));
  const r = tr.applyGradients(b, parts);
  assert.equal(r.step, 1);
  assert.ok(r.finite);
  // Ablations are honoured by the shard path (a replica mirrors them).
  const b2 = tr.nextBatch();
  const g0 = tr.shardGradient(b2, 0);
  tr.setAblation(0, 0, true);
  const g1 = tr.shardGradient(b2, 0);
  assert.notEqual(g0.loss, g1.loss);
  tr.delete();
});

test('kept shard gradients (the coordinator\'s own, never copied out) apply with the same bits, and only where they were kept', async () => {
  const lib = await loadTrain();
  const cfg = { seed: 6, dModel: 16, batch: 8 };
  const a = lib.createTrainer(cfg);
  const b = lib.createTrainer(cfg);
  for (let step = 0; step < 3; step++) {
    const ba = a.nextBatch();
    const bb = b.nextBatch();
    const copied = a.shards(ba).map((s) => a.shardGradient(ba, s));
    // Shards 0 and 1 kept (as the pool's coordinator does), 2 and 3 copied.
    const mixed = b.shards(bb).map((s) => (s < 2 ? b.keepShardGradient(bb, s) : b.shardGradient(bb, s)));
    assert.equal(mixed[0].grads, null);
    assert.equal(mixed[0].loss, copied[0].loss);
    const ra = a.applyGradients(ba, copied);
    const rb = b.applyGradients(bb, mixed);
    assert.deepEqual(u32(new Float32Array([rb.loss, rb.gradNorm])), u32(new Float32Array([ra.loss, ra.gradNorm])), `step ${step}`);
  }
  assert.deepEqual(u32(b.params()), u32(a.params()), 'weights after three steps');
  // Refused: a kept result of a step already applied, one another trainer kept, one kept
  // before the weights were replaced; nothing is applied.
  const bn = b.nextBatch();
  const stale = b.keepShardGradient(bn, 0);
  const rest = [1, 2, 3].map((s) => b.shardGradient(bn, s));
  const other = a.nextBatch();
  const forged = { shard: 0, loss: stale.loss, grads: null, kept: true };
  throwsField(lib, () => a.applyGradients(other, [forged, ...[1, 2, 3].map((s) => a.shardGradient(other, s))]), 'grads', 'shard 0 kept by the other trainer');
  b.setParams(b.params());
  throwsField(lib, () => b.applyGradients(bn, [stale, ...rest]), 'grads', 'kept before setParams');
  const fresh = b.keepShardGradient(bn, 0);
  assert.equal(b.applyGradients(bn, [fresh, ...rest]).step, 4);
  throwsField(lib, () => b.applyGradients({ ...bn, step: 4 }, [fresh, ...rest]), 'grads', 'kept for the step before');
  throwsField(lib, () => b.keepShardGradient(bn, 7), 'shard', 'shard 7');
  a.delete();
  b.delete();
});

test('a step begun early (helpers working while the coordinator evaluates) and handed to a new pool keeps the bits', async () => {
  const lib = await loadTrain();
  for (const [i, cfg] of CONFIGS.entries()) {
    const solo = lib.createTrainer(cfg);
    const want = u32(solo.train(STEPS).loss);
    const wantParams = solo.params();
    solo.delete();
    const tr = lib.createTrainer(cfg);
    const got = [];
    const take = (r) => got.push(...u32(r.loss));
    const pools = [];
    const start = async (...a) => {
      const p = await ShardPool.start(...a);
      pools.push(p);
      return p;
    };
    try {
      let pool = await start(tr, 2, nodePort);
      take(await pool.train(4));
      pool.begin(0); // the helper takes every shard while this thread evaluates
      tr.evaluate();
      tr.headScores();
      take(await pool.train(3));
      pool.begin(1);
      tr.setAblation(0, 0, true); // a begun step is asked again with the new ablations...
      tr.setAblation(0, 0, false); // ...and back: the bits must not move
      pool.setAblation(0, 0, false);
      const pending = pool.close(); // e.g. the Worker count changed while paused
      assert.ok(pending, 'close() hands the begun step on');
      pool = await start(tr, 4, nodePort, pending);
      take(await pool.train(3));
      pool.close();
      pool = await start(tr, 1, nodePort);
      pool.begin(); // no helpers: nothing begun
      take(await pool.train(2));
      pool.close();
      assert.deepEqual(got, want, `config ${i}: losses differ`);
      assert.ok(bitsEqual(tr.params(), wantParams), `config ${i}: weights differ`);
    } finally {
      for (const p of pools) p.close();
      tr.delete();
    }
  }
});

test('an adaptive pool (all shards here or shared out, whichever is faster) keeps the bits', async () => {
  const lib = await loadTrain();
  const cfg = CONFIGS[1];
  const solo = lib.createTrainer(cfg);
  const want = u32(solo.train(30).loss);
  solo.delete();
  const tr = lib.createTrainer(cfg);
  const pool = await ShardPool.start(tr, 2, nodePort);
  try {
    pool.adaptive = true;
    const got = u32((await pool.train(30)).loss);
    assert.deepEqual(got, want);
  } finally {
    pool.close();
    tr.delete();
  }
});
