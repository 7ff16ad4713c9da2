// "Why this weight?" in Chromium: the zoomed head's selected cell taken apart by the core
// (core.scoreBreakdown, checked against NumPy in tests/js/breakdown.test.mjs). Here: the panel
// follows a click and the arrow keys, its score is q·k × scale recomputed from the exported q and
// k, its weight is the drawn one, a variant's rows are the transformed ones, and it fits a phone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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

/** Click cell (i, j) of the zoomed heatmap. */
async function clickCell(page, i, j, T) {
  const box = await page.locator('.zoom-panel canvas.hm-data').boundingBox();
  await page.mouse.click(box.x + ((j + 0.5) * box.width) / T, box.y + ((i + 0.5) * box.height) / T);
}
const panel = (page) => page.getByTestId('breakdown');
async function cellShown(page, cell) {
  await page.waitForFunction((c) => document.querySelector('[data-testid="breakdown"]')?.dataset.cell === c, cell, { timeout: 10000 });
}

test('a selected cell is taken apart: score = scale × Σ q⊙k of the exported q and k; arrows move it; the weight is the drawn one', async () => {
  const { page, errors } = await open('#v=1&src=random&heads=2&kv=2&dm=16&dk=4&seed=7&view=heads');
  assert.equal(await panel(page).isHidden(), true);
  const j = await exportJson(page);
  const T = j.tokens.length;
  await clickCell(page, 5, 2, T);
  await cellShown(page, '0,5,2');
  await page.waitForFunction(() => /[#&]cell=0,5,2(&|$)/.test(location.hash));
  const want = j.heads[0].k[2].reduce((a, x, c) => a + x * j.heads[0].q[5][c], 0) / Math.sqrt(j.shape.dk);
  const score = Number(await panel(page).getAttribute('data-score'));
  assert.ok(Math.abs(score - want) < 1e-5, `score ${score} vs q·k/√d_k ${want}`);
  const text = await panel(page).innerText();
  assert.match(text, /^Why this weight\? Head 1, query /);
  assert.ok(text.includes(`Weight ${j.heads[0].weights[5][2].toFixed(3)}.`), text);
  assert.match(text, /Score: 0\.500 \(the scale\) × -?−?[0-9.]+ \(the sum of q ⊙ k\) = /);
  assert.match(text, /Largest products: dim \d \([+−][0-9.]+\), dim \d/);
  assert.match(text, /(above|below) the best other allowed score of the row|only key/);
  // The keyboard: focus the heatmap and move; the panel follows the cell.
  await page.locator('.zoom-panel .hm-frame').focus();
  for (const k of ['ArrowUp', 'ArrowUp', 'ArrowUp', 'ArrowRight']) await page.keyboard.press(k);
  await cellShown(page, '0,2,3'); // key 3 after query 2: the causal mask forbids it
  assert.match(await panel(page).innerText(), /The mask forbids this key: its weight is 0 whatever the score\./);
  // Change it: q[0] of query 5 set to 1.5 (the model untouched); the score and the weight the core
  // gives are those recomputed here from the exported q and k with that one element changed.
  await clickCell(page, 5, 2, T);
  await cellShown(page, '0,5,2');
  await page.getByTestId('what-if-which').selectOption('q');
  await page.getByTestId('what-if-dim').selectOption('0');
  await page.getByTestId('what-if-value').fill('1.5');
  await page.waitForFunction(() => JSON.parse(document.querySelector('[data-testid="what-if-out"]')?.dataset.after ?? '{}').value === Math.fround(1.5));
  const after = JSON.parse(await page.getByTestId('what-if-out').getAttribute('data-after'));
  const q5 = [...j.heads[0].q[5]];
  q5[0] = 1.5;
  const s = j.heads[0].k.slice(0, 6).map((kr) => kr.reduce((a, x, c) => a + x * q5[c], 0) / 2); // causal: keys 0…5
  const e = s.map((x) => Math.exp(x - Math.max(...s)));
  assert.ok(Math.abs(after.score - s[2]) < 1e-5, `what-if score ${after.score} vs ${s[2]}`);
  assert.ok(Math.abs(after.weight - e[2] / e.reduce((a, b) => a + b, 0)) < 1e-5, `what-if weight ${after.weight}`);
  assert.match(await page.getByTestId('what-if-out').innerText(), /^q\[0\]: -?−?[0-9.]+ → 1\.500\. Score .* → .*; weight .* → .*\. The model itself is unchanged\.$/);
  // The drawn weights did not change.
  assert.deepEqual((await exportJson(page)).heads[0].weights, j.heads[0].weights);
  await page.screenshot({ path: join(SHOTS, 'why-random.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('lesson 1’s head 1 at row 8: the match is one dimension; a variant’s q and k are the transformed rows; a W alone says why not; 375 px', async () => {
  const { page, errors } = await open('#v=1&view=heads');
  const T = 11;
  await clickCell(page, 8, 1, T); // the second “cat” → the first “cat”
  await cellShown(page, '0,8,1');
  const text = await panel(page).innerText();
  assert.match(text, /query 'cat' \(8\) → key 'cat' \(1\)/);
  // Lesson 1 builds head 1 so that "cat" matches "cat" along one dimension, and both "cat"s tie.
  assert.match(text, /Score: 0\.289 \(the scale\) × 14\.000 \(the sum of q ⊙ k\) = 4\.041\./);
  assert.match(text, /Largest products: dim \d+ \(\+14\.000\) \(of 12 dimensions: the match is this one dimension\)/);
  assert.match(text, /ties with the best other allowed score of the row \(4\.041\): they share the weight/);
  await panel(page).screenshot({ path: join(SHOTS, 'why-lesson1.png') });
  // qk-norm: the q and k the score uses have length 1.
  await page.goto(env.server.url + '/#v=1&view=heads&qkn=1&scale=10');
  await waitReady(page);
  await page.waitForFunction(() => !/cell=/.test(location.hash)); // the new link's state (no cell yet)
  await clickCell(page, 8, 1, T);
  await cellShown(page, '0,8,1');
  assert.match(await panel(page).innerText(), /q and k are shown as the score uses them \(after qk-norm, RoPE or φ\)/);
  // A W alone has no q and k.
  await page.goto(env.server.url + '/#v=1&view=heads&uw=1.f4.2x2.b.AAAAPwAAAD8AAAA_AAAAPw');
  await page.waitForFunction(() => document.querySelector('.zoom-panel canvas.hm-data')?.width === 2); // the 2 × 2 W drawn
  await page.locator('.zoom-panel .hm-frame').focus();
  await page.keyboard.press('ArrowLeft'); // a cell of the 2 × 2 W, by keyboard
  await page.waitForFunction(() => !document.querySelector('[data-testid="breakdown"]')?.hidden);
  assert.match(await panel(page).innerText(), /Your W has no queries and keys to take apart/);
  assert.deepEqual(errors, []);
  const phone = await open('#v=1&view=heads', { width: 375, height: 800 });
  await clickCell(phone.page, 8, 1, T);
  await cellShown(phone.page, '0,8,1');
  assert.ok(await phone.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1), 'no sideways scroll at 375 px');
  await phone.page.screenshot({ path: join(SHOTS, 'why-375.png'), fullPage: true });
});

test('the selected cell is in the link (cell=head,query,key): a link opens with its cell taken apart; a bad one gives a notice; another head hides it', async () => {
  const { page, errors } = await open('#v=1&view=heads&cell=0,8,1');
  await cellShown(page, '0,8,1');
  assert.match(await panel(page).innerText(), /query 'cat' \(8\) → key 'cat' \(1\)/);
  // The JSON export carries the cell taken apart: its score is q·k × scale of the exported rows.
  const j = await exportJson(page);
  const b = j.breakdown;
  assert.deepEqual([b.head, b.query, b.key], [0, 8, 1]);
  const dot = j.heads[0].q[8].reduce((a, x, c) => a + x * j.heads[0].k[1][c], 0);
  assert.ok(Math.abs(b.score - dot * b.scale) < 1e-5 && Math.abs(b.scale - 1 / Math.sqrt(12)) < 1e-12, `score ${b.score}`);
  assert.equal(b.products.filter((x) => x !== 0).length, 1); // lesson 1's match: one dimension
  assert.equal(b.weight, j.heads[0].weights[8][1]);
  // Zooming the other head: the cell belongs to head 1, so the panel goes.
  await page.locator('.thumb').nth(1).click();
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="breakdown"]')?.hidden === true);
  for (const [bad, said] of [['0,8', /cell: “0,8” is not head,query,key/], ['5,1,1', /cell: 5,1,1 is outside heads 0…1/]]) {
    const b = await open(`#v=1&view=heads&cell=${bad}`);
    assert.match(await b.page.getByTestId('notices').innerText(), said);
    assert.equal(await panel(b.page).isHidden(), true);
  }
  assert.deepEqual(errors, []);
});
