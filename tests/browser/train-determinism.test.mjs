// The training module in Chromium: same config and seed give bit-identical loss histories,
// and the very same bits as under Node (one thread, fixed summation orders, no FMA, no relaxed
// SIMD: the result must not depend on the engine). Serves build/wasm/ (run
// bash scripts/build-wasm.sh first); no dist/ build needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { join } from 'node:path';
import { ROOT, serve, launch } from './helpers.mjs';

const CONFIGS = [
  { seed: 3 },
  { seed: 4, dModel: 32, heads: 4, kvHeads: 2, layerNorm: true, dropout: 0.1, kernel: 'tiled' },
];
const STEPS = 25;

const PAGE = `<!doctype html><meta charset="utf-8"><title>train determinism</title>
<script type="module">
  import createAttnTrain from './attn_train.mjs';
  const lib = await createAttnTrain();
  const out = [];
  for (const cfg of ${JSON.stringify(CONFIGS)}) {
    const runs = [];
    for (let k = 0; k < 2; k++) {
      const tr = lib.createTrainer(cfg);
      runs.push(Array.from(new Uint32Array(tr.train(${STEPS}).loss.buffer)));
      tr.delete();
    }
    out.push(runs);
  }
  window.__result = out;
</script>`;

test('Chromium: two trainers with the same seed, and Node, give the same loss bits', async () => {
  const dir = join(ROOT, 'build', 'wasm');
  assert.ok(fs.existsSync(join(dir, 'attn_train.wasm')), 'build/wasm/attn_train.wasm missing (bash scripts/build-wasm.sh)');
  // Node first.
  const { default: createAttnTrain } = await import(join(dir, 'attn_train.mjs'));
  const lib = await createAttnTrain({ wasmBinary: fs.readFileSync(join(dir, 'attn_train.wasm')) });
  const node = CONFIGS.map((cfg) => {
    const tr = lib.createTrainer(cfg);
    const bits = Array.from(new Uint32Array(tr.train(STEPS).loss.buffer));
    tr.delete();
    return bits;
  });
  const server = await serve(dir, { '/train.html': PAGE });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/train.html`);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60000 });
    const result = await page.evaluate(() => window.__result);
    assert.deepEqual(errors, []);
    CONFIGS.forEach((cfg, i) => {
      assert.deepEqual(result[i][0], result[i][1], `config ${i}: two Chromium runs differ`);
      assert.deepEqual(result[i][0], node[i], `config ${i}: Chromium and Node differ`);
    });
  } finally {
    await browser.close();
    await server.close();
  }
});
