// Queries and keys as points, the d_k = 2 playground and several queries at once, in Chromium.
// The map's points are checked against NumPy (an uncentred SVD of the exported q and k, up to each
// axis's sign); the playground's drag against softmax recomputed in NumPy from the exported
// vectors with the moved one; the selection's bars against sums of the exported weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { waitReady, exportJson, servedBrowser, SHOTS, reusedTab } from './helpers.mjs';

const env = servedBrowser();

// Each test's page is a fresh load, in the tab the last one used (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 }, acceptDownloads: true });
async function open(hash, viewport) {
  const opened = await tab.load(env.server.url + '/' + hash, viewport);
  await waitReady(opened.page);
  return opened;
}

const numpy = (code, input) => JSON.parse(execFileSync('/usr/bin/python3', ['-c', code], { input: JSON.stringify(input), encoding: 'utf8' }));

/** The page's map (data-map), once drawn. */
async function pageMap(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="qk-map"]')?.dataset.map);
  return JSON.parse(await page.getByTestId('qk-map').getAttribute('data-map'));
}

const PCA = `
import sys, json
import numpy as np
a = json.load(sys.stdin)
q, k = np.array(a["q"], float), np.array(a["k"], float)
x = np.vstack([q, k])
u, s, vt = np.linalg.svd(x, full_matrices=False)
ax = vt[:2]
for i in range(2):
    if ax[i][np.argmax(np.abs(ax[i]))] < 0: ax[i] = -ax[i]
tot = (x ** 2).sum()
print(json.dumps({"queries": (q @ ax.T).tolist(), "keys": (k @ ax.T).tolist(),
  "explained": [float(((x @ ax[i]) ** 2).sum() / tot) for i in range(2)]}))
`;

test('lesson 1’s head 1: the map is NumPy’s PCA of the exported q and k; the “cat” query points at both “cat” keys; keyboard reads a key', async () => {
  const { page, errors } = await open('#v=1&view=heads&cell=0,8,1');
  const m = await pageMap(page);
  const j = await exportJson(page);
  const want = numpy(PCA, { q: j.heads[0].q, k: j.heads[0].k });
  const close = (a, b, what) => a.forEach((p, i) => p.forEach((v, c) => assert.ok(Math.abs(Math.abs(v) - Math.abs(b[i][c])) < 1e-4 * Math.max(1, Math.abs(b[i][c])), `${what}[${i}][${c}]: page ${v}, NumPy ${b[i][c]}`)));
  close(m.queries, want.queries, 'queries');
  close(m.keys, want.keys, 'keys');
  m.explained.forEach((e, i) => assert.ok(Math.abs(e - want.explained[i]) < 1e-5, `explained ${i}`));
  // The JSON export carries each head's map: head 1's is the drawn one.
  assert.equal(j.heads.length, 2);
  close(j.heads[0].map.queries, want.queries, 'export queries');
  close(j.heads[0].map.keys, want.keys, 'export keys');
  assert.equal(j.heads[1].map.keys.length, 11);
  // At a glance: the cosine between the "cat" query (8) and each "cat" key (1, 8) on the map is ~1.
  const cos = (a, b) => (a[0] * b[0] + a[1] * b[1]) / Math.hypot(...a) / Math.hypot(...b);
  for (const key of [1, 8]) assert.ok(cos(m.queries[8], m.keys[key]) > 0.99, `cat query vs cat key ${key}`);
  const info = await page.getByTestId('qk-map-info').innerText();
  assert.match(info, /on the two directions that hold most of their squared length: \d+\u00a0% and \d+\u00a0% of it/);
  assert.match(info, /The keys are drawn 14\.0 times longer than they are/);
  // Keyboard: Tab-reachable canvas, Down moves to the keys, Right to key 1: its weight and score.
  await page.getByTestId('qk-map-canvas').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  const said = await page.getByTestId('qk-map-readout').innerText();
  assert.equal(said, `key 'cat' (1): weight ${j.heads[0].weights[8][1].toFixed(3)}, score 4.04`);
  // √d_k: without the scale, the cat query's top weight grows (the NumPy figure from q, k).
  await page.getByTestId('qk-unscaled').check();
  const spread = await page.getByTestId('qk-spread').innerText();
  const row = numpy(`
import sys, json
import numpy as np
a = json.load(sys.stdin); q = np.array(a["q"]); k = np.array(a["k"])
s = q[8] @ k[:9].T
w = np.exp(s - s.max()); w /= w.sum()
print(json.dumps([float(w.max()), float(np.std(q @ k.T)), float(np.std(q[:, None, :] * k[None, :, :]))]))`, { q: j.heads[0].q, k: j.heads[0].k });
  assert.ok(spread.includes(`, ${row[0].toFixed(3)} on 'cat' (1) without it`), spread);
  assert.ok(spread.includes(`standard deviation ${row[1].toFixed(2)};`), spread);
  assert.ok(spread.includes(`of one dimension’s product q_c·k_c: ${row[2].toFixed(2)}.`), spread);
  await page.getByTestId('qk-map').screenshot({ path: join(SHOTS, 'why-map-lesson1.png') });
  assert.deepEqual(errors, []);
});

test('the d_k = 2 playground: dragging a key moves the weights as NumPy’s softmax says; the output stays in the values’ hull; Put back restores', async () => {
  const { page, errors } = await open('#v=1&src=random&tokens=the+cat+sat+on+the+mat&seed=3&heads=1&kv=1&dm=4&dk=2&causal=0&cell=0,5,2');
  const m = await pageMap(page);
  const j = await exportJson(page);
  // Exact map: the points are the exported vectors.
  m.queries.forEach((p, i) => p.forEach((v, c) => assert.ok(Math.abs(v - j.heads[0].q[i][c]) < 1e-6)));
  assert.match(await page.getByTestId('qk-map-info').innerText(), /^d_k = 2: the map is exact/);
  // The preset's figure: “mat” (5) gives key “sat” (2) 0.98 of its weight.
  assert.equal(j.heads[0].weights[5][2].toFixed(2), '0.98');
  assert.match(await page.getByTestId('qk-values-text').innerText(), /inside the values’ hull/);
  // Keyboard drag: focus the map, go to the keys, key 0, Shift+Right ×4 moves it right.
  const canvas = page.getByTestId('qk-map-canvas');
  await canvas.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Home');
  for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+ArrowRight');
  const moved = await pageMap(page);
  assert.ok(moved.keys[0][0] > m.keys[0][0] + 0.1, 'key 0 moved right');
  assert.ok(Math.abs(moved.keys[0][1] - m.keys[0][1]) < 1e-6, 'not up or down');
  const text = await page.getByTestId('qk-spread').innerText();
  const want = numpy(`
import sys, json
import numpy as np
a = json.load(sys.stdin); q = np.array(a["q"]); k = np.array(a["k"]); k[0] = a["k0"]
s = q[5] @ k.T / np.sqrt(2)
w = np.exp(s - s.max()); w /= w.sum()
print(json.dumps([float(w.max()), int(w.argmax())]))`, { q: j.heads[0].q, k: j.heads[0].k, k0: moved.keys[0] });
  const toks = j.tokens;
  assert.ok(text.includes(`Query 'mat' (5): top weight ${want[0].toFixed(3)} on '${toks[want[1]]}' (${want[1]}) with the scale.`), text);
  assert.equal(await page.locator('.map-mini').isVisible(), true);
  // The drawn heatmaps are the model's: the export did not change.
  assert.deepEqual((await exportJson(page)).heads[0].weights, j.heads[0].weights);
  await page.getByTestId('qk-map').screenshot({ path: join(SHOTS, 'why-map-dk2.png') });
  await page.getByRole('button', { name: 'Put the vectors back' }).click();
  const back = await pageMap(page);
  assert.deepEqual(back.keys, m.keys);
  assert.deepEqual(errors, []);
});

test('several queries, several keys: chips, the heatmap’s Q and K, bars = sums of the exported weights, the link and the export', async () => {
  const { page, errors } = await open('#v=1&view=heads');
  // Closed until asked: the panel opens from its summary (a keyboard's Enter works the same).
  assert.equal(await page.getByTestId('sel-queries').isVisible(), false);
  await page.locator('.selection > summary').focus();
  await page.keyboard.press('Enter');
  // Chips: query 8, then Shift-click query 10 (a span 8…10); key 1.
  const q = page.getByTestId('sel-queries'),
    k = page.getByTestId('sel-keys');
  await q.locator('button[data-index="8"]').click();
  await q.locator('button[data-index="10"]').click({ modifiers: ['Shift'] });
  await k.locator('button[data-index="1"]').click();
  await page.waitForFunction(() => /qsel=8,9,10/.test(location.hash) && /ksel=1(&|$)/.test(location.hash));
  const j = await exportJson(page);
  assert.deepEqual(j.selection.queries, [8, 9, 10]);
  assert.deepEqual(j.selection.keys, [1]);
  const w = j.heads[0].weights;
  for (let c = 0; c < 11; c++) {
    const sum = w[8][c] + w[9][c] + w[10][c];
    assert.ok(Math.abs(j.selection.sum[c] - sum) < 1e-6 && Math.abs(j.selection.mean[c] - sum / 3) < 1e-6, `key ${c}`);
  }
  for (let i = 0; i < 11; i++) assert.ok(Math.abs(j.selection.column[i] - w[i][1]) < 1e-6, `query ${i}`);
  const text = await page.getByTestId('sel-column-text').innerText();
  assert.match(text, /^Who attends to key 'cat' \(1\): query 'cat' \(1\) the most/);
  // The heatmap's keyboard: focus, move to row 2, press Q (adds query 2), K (adds key 0).
  await page.locator('.zoom-panel .hm-frame').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('q');
  await page.keyboard.press('k');
  await page.waitForFunction(() => /qsel=2,8,9,10/.test(location.hash) && /ksel=0,1(&|$)/.test(location.hash));
  // The chips say what is picked; the chips are one tab stop with arrows inside.
  assert.equal(await q.locator('button[data-index="2"]').getAttribute('aria-pressed'), 'true');
  await q.locator('button[data-index="0"]').focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.index), '1');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => /qsel=1,2,8,9,10/.test(location.hash));
  await page.getByRole('button', { name: 'Clear the picks' }).click();
  await page.waitForFunction(() => !/qsel|ksel/.test(location.hash));
  assert.deepEqual(errors, []);
});

test('the map and the selection fit a phone (375 px)', async () => {
  const { page, errors } = await open('#v=1&view=heads&cell=0,8,1&qsel=8&ksel=1', { width: 375, height: 800 });
  await pageMap(page);
  for (const id of ['qk-map', 'selection']) {
    const over = await page.evaluate((t) => {
      const e = document.querySelector(`[data-testid="${t}"]`);
      return e.scrollWidth - e.clientWidth;
    }, id);
    assert.ok(over <= 1, `${id} overflows by ${over}px`);
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll');
  await page.getByTestId('qk-map').screenshot({ path: join(SHOTS, 'why-map-375.png') });
  assert.deepEqual(errors, []);
});

test('the Train tab’s model is taken apart too: the score is q·k × scale of the module’s own rows; the map draws its layer', async () => {
  const { page, errors } = await open('#v=1&view=train&until=20&play=1');
  await page.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 60000 });
  await page.getByTestId('train-probe').fill('5 9 2 7 5 9 2 7');
  await page.getByTestId('train-probe-use').click();
  await page.waitForFunction(() => /Probe: 8 tokens/.test(document.querySelector('[data-testid=train-status]').textContent));
  await page.getByTestId('train-open-heads').click();
  await page.waitForSelector('[data-testid=trained-banner]:not([hidden])');
  const box = await page.locator('.zoom-panel canvas.hm-data').boundingBox();
  await page.mouse.click(box.x + (2.5 * box.width) / 8, box.y + (6.5 * box.height) / 8); // query 6 → key 2
  await page.waitForFunction(() => document.querySelector('[data-testid="breakdown"]')?.dataset.cell === '0,6,2');
  // The module under Node, same config and steps: layer 2's rows (the banner opens the last layer).
  const fs = await import('node:fs');
  const dir = join(process.cwd(), 'build', 'wasm');
  const { default: create } = await import(join(dir, 'attn_train.mjs'));
  const lib = await create({ wasmBinary: fs.readFileSync(join(dir, 'attn_train.wasm')) });
  const tr = lib.createTrainer({ seed: 0 });
  tr.train(20);
  const a = tr.attention([5, 9, 2, 7, 5, 9, 2, 7], { qkv: true });
  tr.delete();
  const x = a.layers[1];
  const dk = x.q.length / (2 * 8);
  let dot = 0;
  for (let c = 0; c < dk; c++) dot += x.q[6 * dk + c] * x.k[2 * dk + c];
  const score = Number(await page.getByTestId('breakdown').getAttribute('data-score'));
  assert.ok(Math.abs(score - dot / Math.sqrt(dk)) < 1e-4, `score ${score} vs q·k/√d_k ${dot / Math.sqrt(dk)}`);
  const w = a.weights[(1 * 2 * 8 + 6) * 8 + 2];
  assert.ok((await page.getByTestId('breakdown').innerText()).includes(`Weight ${w.toFixed(3)}.`));
  const m = await pageMap(page);
  assert.equal(m.queries.length, 8);
  assert.match(await page.getByTestId('qk-map-info').innerText(), /The head’s 8 queries \(dots\) and 8 keys/);
  await page.getByTestId('qk-map').screenshot({ path: join(SHOTS, 'why-map-trained.png') });
  assert.deepEqual(errors, []);
});

test('“Change it” enters the link only when asked, and a link’s change is applied on opening', async () => {
  const { page, context, errors } = await open('#v=1&view=heads&cell=0,8,1');
  await page.waitForFunction(() => document.querySelector('[data-testid="what-if-out"]')?.dataset.after);
  await page.getByTestId('what-if-which').selectOption('k');
  await page.getByTestId('what-if-dim').selectOption('1');
  await page.getByTestId('what-if-value').fill('0.25');
  await page.waitForFunction(() => JSON.parse(document.querySelector('[data-testid="what-if-out"]').dataset.after).value === 0.25);
  assert.doesNotMatch(await page.evaluate(() => location.hash), /wif=/, 'not in the link until asked');
  await page.getByTestId('what-if-link').click();
  await page.waitForFunction(() => /[#&]wif=k%2C1%2C0\.25(&|$)|[#&]wif=k,1,0\.25(&|$)/.test(location.hash));
  const link = await page.evaluate(() => location.hash);
  // The link opens with the change applied: the same after-state.
  const p2 = await context.newPage();
  await p2.goto(env.server.url + '/' + link);
  await waitReady(p2);
  await p2.waitForFunction(() => JSON.parse(document.querySelector('[data-testid="what-if-out"]')?.dataset.after ?? '{}').value === 0.25);
  assert.match(await p2.getByTestId('what-if-out').innerText(), /^k\[1\]: /);
  // Reset takes it out of the link; a malformed one is named and dropped.
  await p2.getByTestId('what-if').getByRole('button', { name: 'Reset', exact: true }).click();
  await p2.waitForFunction(() => !/wif=/.test(location.hash));
  await p2.goto(env.server.url + '/#v=1&view=heads&cell=0,8,1&wif=z,1,oops');
  await waitReady(p2);
  assert.match(await p2.locator('body').innerText(), /the what-if change: “z,1,oops” is not q\|k,dimension,value/);
  assert.deepEqual(errors, []);
  await p2.close();
});
