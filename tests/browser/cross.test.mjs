// One sentence attending to another (cross-attention), in Chromium: the preset's 6 × 7 heatmap,
// head 1's weights against NumPy's softmax(q kᵀ/√d_k) from the exported q and k, the causal mask
// disabled with its reason, a padded key, the JSON export, a phone's width and the keyboard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { waitReady, exportJson, servedBrowser, SHOTS, reusedTab } from './helpers.mjs';

const env = servedBrowser();
const EN = 'the cat sat on the mat'.split(' ');
const FR = 'le chat était assis sur le tapis'.split(' ');
const SENTENCE =
  'Cross-attention: the keys are another sentence, so no key comes after a query; the causal mask (and the window) belong to a sequence attending to itself.';

// Each test's page is a fresh load, in the tab the last one used (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 }, acceptDownloads: true });
async function open(hash, viewport) {
  const opened = await tab.load(env.server.url + '/' + hash, viewport);
  await waitReady(opened.page);
  return opened;
}

/** Opens the preset from the gallery's link. */
async function openPreset(viewport) {
  const o = await open('', viewport);
  const href = await o.page.locator('a[data-preset="cross"]').getAttribute('href');
  await o.page.goto(env.server.url + '/' + href);
  await waitReady(o.page);
  return o;
}

const numpy = (code, input) =>
  JSON.parse(execFileSync('/usr/bin/python3', ['-c', code], { input: JSON.stringify(input), encoding: 'utf8' }));

test('the preset: a 6 × 7 heatmap, English rows, French columns; head 1 is NumPy’s softmax(q kᵀ/√d_k); “cat” → “chat” is its row’s largest', async () => {
  const { page, errors } = await openPreset();
  const size = await page.locator('.zoom-panel canvas.hm-data').evaluate((c) => [c.width, c.height]);
  assert.deepEqual(size, [7, 6]);
  assert.deepEqual(await page.locator('.zoom-panel .hm-rl .tok').allTextContents(), EN);
  assert.deepEqual(await page.locator('.zoom-panel .hm-cl .tok').allTextContents(), FR);
  assert.match(await page.evaluate(() => location.hash), /kvtokens=le\+chat/);
  const j = await exportJson(page);
  assert.deepEqual(j.tokens, EN);
  assert.deepEqual(j.kvTokens, FR);
  const h = j.heads[0];
  assert.equal(h.weights.length, 6);
  h.weights.forEach((row) => assert.equal(row.length, 7));
  assert.equal(h.q.length, 6);
  assert.equal(h.k.length, 7);
  assert.equal(h.v.length, 7);
  const want = numpy(
    `
import sys, json
import numpy as np
a = json.load(sys.stdin)
q, k = np.array(a["q"], float), np.array(a["k"], float)
s = q @ k.T / np.sqrt(q.shape[1])
w = np.exp(s - s.max(axis=1, keepdims=True)); w /= w.sum(axis=1, keepdims=True)
print(json.dumps(w.tolist()))`,
    { q: h.q, k: h.k },
  );
  want.forEach((row, i) =>
    row.forEach((v, c) => assert.ok(Math.abs(h.weights[i][c] - v) < 1e-5, `[${i}][${c}]: page ${h.weights[i][c]}, NumPy ${v}`)),
  );
  const cat = h.weights[1];
  assert.equal(cat.indexOf(Math.max(...cat)), 1, '“cat” → “chat” is the largest of its row');
  // The figure's numbers: 0.90 on “chat”, 0.48 / 0.48 between the two “le” for “the”.
  assert.equal(cat[1].toFixed(2), '0.90');
  assert.equal(h.weights[0][0].toFixed(2), '0.48');
  assert.equal(h.weights[0][5].toFixed(2), '0.48');
  // Head 2 follows position: “sat” (2) → “était” (2).
  assert.equal(j.heads[1].weights[2].indexOf(Math.max(...j.heads[1].weights[2])), 2);
  // The Check runs on T_q ≠ T_k (core.check takes tq and tk).
  await page.waitForSelector('[data-testid="check-f32"]');
  assert.equal(await page.getByTestId('check-f32').getAttribute('data-verdict'), 'pass');
  assert.equal(await page.getByTestId('check-tiled').getAttribute('data-verdict'), 'pass');
  // The preset's cell is taken apart: query “cat” → key “chat”.
  await page.waitForFunction(() => document.querySelector('[data-testid="breakdown"]')?.dataset.cell === '0,1,1');
  assert.match(await page.locator('[data-testid="breakdown"]').innerText(), /query 'cat' \(1\) → key 'chat' \(1\)/);
  await page.locator('.zoom-panel').screenshot({ path: join(SHOTS, 'cross-preset.png') });
  assert.deepEqual(errors, []);
});

test('the causal box and the window are disabled with the reason; the state keeps causal; padding a key zeroes its column', async () => {
  const { page, errors } = await open(
    '#v=1&tokens=the+cat+sat+on+the+mat&kvtokens=le+chat+%C3%A9tait+assis+sur+le+tapis&causal=1&pad=1',
  );
  assert.equal(await page.getByTestId('causal').isDisabled(), true);
  assert.equal(await page.getByTestId('causal').isChecked(), true);
  assert.equal(await page.getByTestId('window').isDisabled(), true);
  assert.equal(await page.getByTestId('cross-mask-note').innerText(), SENTENCE);
  assert.equal(await page.getByTestId('kv-tokens').inputValue(), FR.join(' '));
  const j = await exportJson(page);
  for (const head of j.heads)
    head.weights.forEach((row, i) => {
      assert.equal(row[1], 0, `row ${i}: the padded key “chat” has weight 0`);
      assert.ok(Math.abs(row.reduce((s, v) => s + v, 0) - 1) < 1e-5, `row ${i} sums to 1`);
      // Not causal: the last key is allowed for the first query.
      assert.ok(row[6] > 0, `row ${i}: key 6 allowed`);
    });
  assert.equal(j.state.causal, true);
  // The padding chips are the keys' tokens; a chip pressed reruns attention on the cached Q, K, V.
  assert.deepEqual(await page.locator('.chips .chip-tok').allTextContents(), FR);
  await page.locator('.chips button[data-pos="2"]').click();
  await page.waitForFunction(() => /pad=1(%2C|,)2/.test(location.hash));
  await waitReady(page);
  const j2 = await exportJson(page);
  j2.heads[0].weights.forEach((row, i) => assert.ok(row[1] === 0 && row[2] === 0, `row ${i}: keys 1 and 2 padded`));
  // Emptying the second box is self-attention again, with the causal mask.
  await page.getByTestId('kv-tokens').fill('');
  await page.waitForFunction(() => !/kvtokens/.test(location.hash));
  await waitReady(page);
  assert.equal(await page.getByTestId('causal').isDisabled(), false);
  assert.equal(await page.getByTestId('cross-mask-note').isHidden(), true);
  const self = await exportJson(page);
  assert.equal(self.kvTokens, undefined);
  assert.equal(self.heads[0].weights[0].length, 6);
  assert.equal(self.heads[0].weights[0][5], 0, 'causal again');
  assert.deepEqual(errors, []);
});

test('typing a second sentence switches to cross-attention', async () => {
  const { page, errors } = await open('#v=1&tokens=the+cat+sat');
  await page.getByTestId('kv-tokens').fill('le chat');
  await page.waitForFunction(() => /kvtokens=le\+chat/.test(location.hash));
  await page.waitForFunction(() => document.querySelector('.zoom-panel canvas.hm-data')?.width === 2);
  assert.deepEqual(await page.locator('.zoom-panel .hm-cl .tok').allTextContents(), ['le', 'chat']);
  assert.deepEqual(errors, []);
});

test('375 px: no sideways scroll; the heatmap’s arrow keys reach the last column', async () => {
  const { page, errors } = await openPreset({ width: 375, height: 800 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll');
  await page.locator('.zoom-panel .hm-frame').focus();
  for (let c = 0; c < 8; c++) await page.keyboard.press('ArrowRight');
  assert.match(await page.getByTestId('readout').innerText(), /→ key 'tapis' \(6\)/);
  await page.screenshot({ path: join(SHOTS, 'cross-375.png') });
  assert.deepEqual(errors, []);
});

test('the Lesson view says it runs on self-attention while a second sentence is set', async () => {
  const { page, errors } = await open('#v=1&view=lesson&kvtokens=le+chat');
  const note = page.getByTestId('lesson-source');
  await note.waitFor({ state: 'visible' });
  assert.match(await note.innerText(), /^The Lesson view runs on self-attention/);
  assert.deepEqual(errors, []);
});

test('random weights with a second sentence: T_q × T_k rows that sum to 1, the Check passes', async () => {
  const { page, errors } = await open('#v=1&src=random&tokens=a+b+c&kvtokens=w+x+y+z&seed=1&heads=2&kv=1');
  const j = await exportJson(page);
  assert.deepEqual(j.kvTokens, ['w', 'x', 'y', 'z']);
  for (const h of j.heads) {
    assert.equal(h.weights.length, 3);
    h.weights.forEach((row) => {
      assert.equal(row.length, 4);
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    });
    assert.equal(h.k.length, 4);
  }
  await page.waitForSelector('[data-testid="check-f32"]');
  assert.equal(await page.getByTestId('check-f32').getAttribute('data-verdict'), 'pass');
  assert.deepEqual(errors, []);
});

test('the word-order preset: head 1 crosses (“black” → “noir”, “cat” → “chat”), head 2 stays on the diagonal, as its figure says', async () => {
  const o = await open('');
  const href = await o.page.locator('a[data-preset="cross-order"]').getAttribute('href');
  await o.page.goto(env.server.url + '/' + href);
  await waitReady(o.page);
  const j = await exportJson(o.page);
  assert.deepEqual(j.kvTokens, ['le', 'chat', 'noir']);
  const [h1, h2] = [j.heads[0].weights, j.heads[1].weights];
  assert.equal(h1[1][2].toFixed(2), '0.97', 'black → noir');
  assert.equal(h1[2][1].toFixed(2), '0.97', 'cat → chat');
  assert.equal(h2[1][1].toFixed(2), '0.97', 'black → chat by position');
  assert.deepEqual(o.errors, []);
});
