// The student's Q (3 × 2) with K, V of 5 rows, linked as the notebook helper links them (uq, uk,
// uv): drawn as cross-attention, a 3 × 5 heatmap; the weights are NumPy's softmax(QKᵀ/√d_k) and
// "Why this weight?" takes a cell's score apart as q·k/√d_k.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, waitReady, ROOT } from './helpers.mjs';

let app, browser;
before(async () => {
  ensureBuilt();
  app = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const Q = [
  [0.5, -1],
  [1.5, 0.25],
  [-0.75, 2],
];
const K = [
  [1, 0],
  [0, 1],
  [-1, 1],
  [0.5, 0.5],
  [2, -0.5],
];
const V = [
  [1, 2],
  [3, 4],
  [5, 6],
  [7, 8],
  [9, 10],
];

// The link by the notebook helper, and NumPy's weights.
const oracle = JSON.parse(
  execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      `
import sys, json
sys.path.insert(0, sys.argv[1])
import numpy as np
import attention_playground as ap
a = json.loads(sys.argv[2])
q, k, v = (np.array(a[n], np.float32) for n in ("q", "k", "v"))
url = ap.show(Q=q, K=k, V=v, url="http://x/").url
s = q.astype(float) @ k.astype(float).T / np.sqrt(q.shape[1])
w = np.exp(s - s.max(axis=1, keepdims=True)); w /= w.sum(axis=1, keepdims=True)
print(json.dumps({"hash": url[url.index("#"):], "w": w.tolist(), "s": s.tolist()}))
`,
      join(ROOT, 'web/public'),
      JSON.stringify({ q: Q, k: K, v: V }),
    ],
    { encoding: 'utf8' },
  ),
);

test('your Q (3 × 2) with K, V of 5 rows: a 3 × 5 cross-attention, NumPy’s softmax, the score q·k/√d_k', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(app.url + '/' + oracle.hash);
  await waitReady(page);
  const size = await page.locator('.zoom-panel canvas.hm-data').evaluate((c) => [c.width, c.height]);
  assert.deepEqual(size, [5, 3]);
  const shown = await page.evaluate(() => window.__attentionPlayground.weights());
  assert.equal(shown.weights.length, 15);
  oracle.w.flat().forEach((x, i) => assert.ok(Math.abs(shown.weights[i] - x) < 1e-5, `weight ${i}: ${shown.weights[i]} vs ${x}`));
  // Query 2 → key 4: click the cell.
  const box = await page.locator('.zoom-panel canvas.hm-data').boundingBox();
  await page.mouse.click(box.x + (4.5 * box.width) / 5, box.y + (2.5 * box.height) / 3);
  await page.waitForFunction(() => document.querySelector('[data-testid="breakdown"]')?.dataset.cell === '0,2,4');
  const score = Number(await page.getByTestId('breakdown').getAttribute('data-score'));
  const want = (Q[2][0] * K[4][0] + Q[2][1] * K[4][1]) / Math.sqrt(2);
  assert.ok(Math.abs(score - want) < 1e-5, `score ${score} vs q·k/√d_k ${want}`);
  assert.ok(Math.abs(score - oracle.s[2][4]) < 1e-5);
  assert.deepEqual(w.errors, []);
  await ctx.close();
});
