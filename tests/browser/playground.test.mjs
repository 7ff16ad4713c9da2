// Browser tests against the built dist/ in Debian's Chromium (playwright-core).
// Expected figures come from the lessons' text, not from the code under test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitReady, exportJson, servedBrowser, reusedTab } from './helpers.mjs';

const env = servedBrowser();

// Each test's page is a fresh load, in the tab the last one used (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 }, acceptDownloads: true });
async function open(path, viewport) {
  const opened = await tab.load(env.server.url + path, viewport);
  await waitReady(opened.page);
  return opened;
}

async function presetHref(page, id) {
  return page.locator(`a[data-preset="${id}"]`).getAttribute('href');
}

const near = (a, b, tol, msg) => assert.ok(Math.abs(a - b) <= tol, `${msg}: ${a} is not within ${tol} of ${b}`);
const rowSum = (row) => row.reduce((s, v) => s + v, 0);

test('the default page renders the heatmaps with no console errors', async () => {
  const { page, errors } = await open('/');
  assert.equal(await page.locator('h1').textContent(), 'Attention Playground');
  // Two heads as thumbnails plus the zoomed head, drawn at data resolution (T = 11).
  assert.equal(await page.locator('.thumb canvas.hm-data').count(), 2);
  const size = await page.locator('.zoom-panel canvas.hm-data').evaluate((c) => [c.width, c.height]);
  assert.deepEqual(size, [11, 11]);
  assert.equal(await page.locator('.zoom-panel .hm-rl .tok').first().textContent(), 'the');
  // The CSP meta tag is in place, and the page still ran under it.
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
  assert.equal(await page.getByTestId('notices').isHidden(), true);
  assert.deepEqual(errors, []);
});

test('preset: lesson 1 induction heads show 0.47 / 0.47 and 0.88 in row 8', async () => {
  const { page, errors } = await open('/');
  await page.goto(env.server.url + '/' + (await presetHref(page, 'induction')));
  await waitReady(page);
  const j = await exportJson(page);
  assert.equal(j.tokens[8], 'cat');
  assert.equal(j.heads.length, 2);
  const h1 = j.heads[0].weights[8];
  const h2 = j.heads[1].weights[8];
  near(h1[1], 0.47, 0.005, 'head 1, row 8 → key 1');
  near(h1[8], 0.47, 0.005, 'head 1, row 8 → key 8');
  near(h2[7], 0.88, 0.005, 'head 2, row 8 → key 7');
  assert.deepEqual(errors, []);
});

test('preset: lesson 2 random T=6 causal is lower-triangular with rows summing to 1', async () => {
  const { page } = await open('/');
  await page.goto(env.server.url + '/' + (await presetHref(page, 'lesson2')));
  await waitReady(page);
  const j = await exportJson(page);
  assert.equal(j.tokens.length, 6);
  assert.equal(j.heads.length, 1);
  assert.equal(j.state.dm, 8);
  assert.equal(j.state.dk, 4);
  const W = j.heads[0].weights;
  for (let i = 0; i < 6; i++) {
    near(rowSum(W[i]), 1, 1e-5, `row ${i} sum`);
    for (let k = i + 1; k < 6; k++) assert.equal(W[i][k], 0, `W[${i}][${k}] above the diagonal`);
  }
  near(W[0][0], 1, 1e-6, 'first row attends only to itself');
});

test('preset: deleting the √d_k at d_k = 256 saturates the softmax', async () => {
  const { page } = await open('/');
  await page.goto(env.server.url + '/' + (await presetHref(page, 'no-sqrt')));
  await waitReady(page);
  const j = await exportJson(page);
  assert.equal(j.state.scale, 'none');
  assert.equal(j.state.dk, 256);
  const W = j.heads[0].weights;
  const oneHot = W.filter((r) => Math.max(...r) > 0.99).length;
  assert.ok(oneHot >= W.length - 1, `only ${oneHot} of ${W.length} rows are nearly one-hot`);
});

test('presets: an all-padding sequence under each fill policy (NaN, uniform, zero)', async () => {
  const { page } = await open('/');
  const hrefs = {};
  for (const id of ['pad-neginf', 'pad-finite', 'pad-zero']) hrefs[id] = await presetHref(page, id);

  await page.goto(env.server.url + '/' + hrefs['pad-neginf']);
  await waitReady(page);
  let j = await exportJson(page);
  assert.ok(j.heads[0].weights.every((r) => r.every((v) => v === null)), 'every weight is NaN (null in JSON)');
  assert.equal(await page.getByTestId('nan-banner').isVisible(), true);
  assert.match(await page.getByTestId('nan-banner').textContent(), /4 of 4 rows/);

  await page.goto(env.server.url + '/' + hrefs['pad-finite']);
  await waitReady(page);
  j = await exportJson(page);
  for (const r of j.heads[0].weights) for (const v of r) near(v, 0.25, 1e-6, 'uniform weight');
  assert.equal(await page.getByTestId('nan-banner').isHidden(), true);

  await page.goto(env.server.url + '/' + hrefs['pad-zero']);
  await waitReady(page);
  j = await exportJson(page);
  for (const r of j.heads[0].weights) for (const v of r) assert.equal(v, 0);
  for (const r of j.output) for (const v of r) assert.equal(v, 0);
});

test('preset: a sliding window of 3 gives a band along the diagonal', async () => {
  const { page } = await open('/');
  await page.goto(env.server.url + '/' + (await presetHref(page, 'window')));
  await waitReady(page);
  const j = await exportJson(page);
  for (const head of j.heads) {
    head.weights.forEach((row, i) => {
      near(rowSum(row), 1, 1e-5, `row ${i} sum`);
      row.forEach((v, k) => {
        if (k > i || k <= i - 3) assert.equal(v, 0, `row ${i}, key ${k} is outside the window`);
      });
    });
  }
});

test('preset: grouped-query attention has 4 query heads over 2 K/V heads', async () => {
  const { page } = await open('/');
  await page.goto(env.server.url + '/' + (await presetHref(page, 'gqa')));
  await waitReady(page);
  const j = await exportJson(page);
  assert.equal(j.heads.length, 4);
  assert.equal(j.state.kv, 2);
  assert.equal(j.shape.kvHeads, 2);
  for (const h of j.heads) h.weights.forEach((r, i) => near(rowSum(r), 1, 1e-5, `row ${i}`));
  assert.match(await page.locator('.thumb-cap').nth(3).textContent(), /K\/V 2/);
});

test('a share link round-trips: change state, open the URL in a new page, same export', async () => {
  const { page, context } = await open('/');
  const historyBefore = await page.evaluate(() => history.length);
  await page.getByTestId('source').selectOption('random');
  await page.getByTestId('tokens').fill('one two three four five');
  await page.getByTestId('causal').uncheck();
  await page.locator('.chip[data-pos="2"]').click();
  await page.locator('input[type="radio"][value="finite"]').check();
  await waitReady(page);
  const a = await exportJson(page);
  assert.deepEqual(a.tokens, ['one', 'two', 'three', 'four', 'five']);
  assert.deepEqual(a.state.pad, [2]);
  const url = page.url();
  assert.match(url, /#v=1&/);
  const p2 = await context.newPage();
  await p2.goto(url);
  await waitReady(p2);
  const b = await exportJson(p2);
  assert.deepEqual(b, a);
  // Editing replaced the history entry instead of adding one per change.
  assert.equal(await page.evaluate(() => history.length), historyBefore);
  await p2.close();
});

test('hashchange: following a gallery link updates the view without a reload', async () => {
  const { page } = await open('/');
  await page.evaluate(() => (window.__marker = 1));
  await page.locator('a[data-preset="lesson2"]').click();
  await page.waitForFunction(() => window.__attentionPlayground.state().model.tokens.length === 6);
  await waitReady(page);
  assert.equal(await page.evaluate(() => window.__marker), 1);
  assert.deepEqual(await page.locator('.zoom-panel canvas.hm-data').evaluate((c) => [c.width, c.height]), [6, 6]);
});

test('an XSS payload in tokens renders as text: no script runs, no dialog', async () => {
  const payload = ['<img src=x onerror=alert(1)>', '<script>alert(2)</script>', '"><svg/onload=alert(3)>'];
  const hash = '#v=1&tokens=' + payload.map((t) => encodeURIComponent(t)).join('+');
  const { page, dialogs, errors } = await open('/' + hash);
  await page.waitForTimeout(300);
  assert.deepEqual(dialogs, []);
  assert.equal(await page.locator('#app img, #app svg script, #app script').count(), 0);
  const toks = await page.locator('.zoom-panel .hm-rl .tok').allTextContents();
  assert.ok(toks.includes('<script>alert(2)</script>'), `row labels: ${toks.join(' | ')}`);
  const j = await exportJson(page);
  assert.ok(j.tokens.includes('<script>alert(2)</script>'));
  assert.deepEqual(errors, []);
});

test('keyboard only: Tab reaches the heatmap and the arrow keys read a cell aloud', async () => {
  const { page } = await open('/');
  let reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.closest('.zoom-panel') !== null && document.activeElement?.classList.contains('hm-frame'));
  }
  assert.ok(reached, 'Tab never reached the zoomed heatmap');
  for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const readout = page.getByTestId('readout');
  assert.equal(await readout.getAttribute('aria-live'), 'polite');
  assert.equal(await readout.textContent(), "query 'cat' (8) → key 'cat' (1): 0.471");
  await page.keyboard.press('End');
  assert.match(await readout.textContent(), /^query 'cat' \(8\) → key 'tired' \(10\): 0\.000 \(masked\)$/);
});

test('a hostile link gives a notice and a working page', async () => {
  const { page, errors } = await open('/#v=1&src=random&heads=NaN&dk=99999999&%3Cb%3Ex%3C%2Fb%3E=1&pad=1,2,999');
  const n = page.getByTestId('notices');
  assert.equal(await n.isVisible(), true);
  const text = await n.textContent();
  assert.match(text, /heads/);
  assert.match(text, /unknown setting “<b>x<\/b>”/);
  assert.equal(await page.locator('[data-testid="notices"] b').count(), 0);
  const j = await exportJson(page);
  assert.equal(j.state.dk, 1024);
  assert.deepEqual(errors, []);
});
