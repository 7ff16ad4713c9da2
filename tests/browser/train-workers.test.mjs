// Training across Workers in Chromium: the pool (web/src/train/pool.ts) with 1, 2 and 4 module
// Workers gives the same loss and weight bits as each other and as tr.train() under Node; and the
// Train tab with trw=2 records the same losses as with trw=1. Needs build/wasm (bash
// scripts/build-wasm.sh) and, for the tab, dist/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ROOT, launch, serve, servedBrowser, watch } from './helpers.mjs';
import { WORKER_CONFIGS, writePoolModule } from '../js/pool-module.mjs';

const STEPS = 12;
const env = servedBrowser();

// The shard Worker's own handler (serveShards: requests in order, awake after each reply).
const SHARD_WORKER = `import createAttnTrain from './attn_train.mjs';
import { ShardServer, serveShards } from './pool.mjs';
const serve = serveShards(new ShardServer(() => createAttnTrain()), (reply, transfer) => self.postMessage(reply, transfer));
self.onmessage = (e) => serve(e.data);
`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>train workers</title>
<script type="module">
  import createAttnTrain from './attn_train.mjs';
  import { ShardPool } from './pool.mjs';
  const lib = await createAttnTrain();
  function port() {
    const w = new Worker('./shard-worker.mjs', { type: 'module' });
    const ls = [];
    w.onmessage = (e) => ls.forEach((f) => f(e.data));
    w.onerror = (e) => ls.forEach((f) => f({ kind: 'error', id: null, message: String(e.message), field: null }));
    return { post: (m, t = []) => w.postMessage(m, t), listen: (f) => ls.push(f), terminate: () => w.terminate() };
  }
  const u32 = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
  try {
    const out = [];
    for (const cfg of ${JSON.stringify(WORKER_CONFIGS)}) {
      const row = [];
      for (const k of [1, 2, 4]) {
        const tr = lib.createTrainer(cfg);
        const pool = await ShardPool.start(tr, k, port);
        pool.awakeMs = 50; // the coordinator awake while it waits: the same bits
        const r = await pool.train(${STEPS});
        row.push({ workers: pool.workers, loss: u32(r.loss), params: u32(tr.params()) });
        pool.close();
        tr.delete();
      }
      out.push(row);
    }
    window.__result = out;
  } catch (e) {
    window.__result = String(e && e.stack || e);
  }
</script>`;

test('Chromium: 1, 2 and 4 Workers give the same loss and weight bits, and Node’s', async () => {
  const wasm = join(ROOT, 'build', 'wasm');
  assert.ok(fs.existsSync(join(wasm, 'attn_train.wasm')), 'build/wasm/attn_train.wasm missing (bash scripts/build-wasm.sh)');
  const dir = fs.mkdtempSync(join(os.tmpdir(), 'attn-workers-'));
  for (const f of ['attn_train.mjs', 'attn_train.wasm']) fs.copyFileSync(join(wasm, f), join(dir, f));
  writePoolModule(dir);
  fs.writeFileSync(join(dir, 'shard-worker.mjs'), SHARD_WORKER);
  const { default: createAttnTrain } = await import(join(wasm, 'attn_train.mjs'));
  const lib = await createAttnTrain({ wasmBinary: fs.readFileSync(join(wasm, 'attn_train.wasm')) });
  const node = WORKER_CONFIGS.map((cfg) => {
    const tr = lib.createTrainer(cfg);
    const r = tr.train(STEPS);
    const out = { loss: Array.from(new Uint32Array(r.loss.buffer)), params: Array.from(new Uint32Array(tr.params().buffer)) };
    tr.delete();
    return out;
  });
  const server = await serve(dir, { '/workers.html': PAGE });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/workers.html`);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 120000 });
    const result = await page.evaluate(() => window.__result);
    assert.equal(typeof result, 'object', `the page failed: ${result}`);
    assert.deepEqual(errors, []);
    WORKER_CONFIGS.forEach((cfg, i) => {
      result[i].forEach((run, j) => {
        assert.equal(run.workers, [1, 2, 4][j]);
        assert.deepEqual(run.loss, node[i].loss, `config ${i}, ${run.workers} Workers: losses differ from Node's one-thread train()`);
        assert.deepEqual(run.params, node[i].params, `config ${i}, ${run.workers} Workers: weights differ`);
      });
    });
  } finally {
    await browser.close();
    await server.close();
  }
});

const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));

test('the Train tab: trw=2 trains on 2 Workers and records the losses of trw=1; the control is labelled', async () => {
  const runs = {};
  for (const k of [1, 2]) {
    const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const w = watch(page);
    await page.goto(`${env.server.url}/#v=1&view=train&until=25&play=1&trw=${k}`);
    await page.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 90000 });
    runs[k] = await page.evaluate(() => window.__trainTab.history.lossArray());
    assert.equal(await page.getByTestId('train-workers').inputValue(), String(k));
    assert.equal(await page.getByLabel('Workers').count(), 1, 'the Workers control has a label');
    assert.equal(await page.evaluate(() => window.__trainTab.workers()), k);
    assert.deepEqual(w.errors, []);
    await page.close();
  }
  assert.equal(runs[1].length, 25);
  assert.deepEqual(bits(runs[2]), bits(runs[1]), 'trw=2 and trw=1 recorded different losses');
});
