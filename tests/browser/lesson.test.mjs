// The Lesson view in Chromium: the code lines and their controls (keyboard only, each control
// named by its line), the side-by-side pictures and badges, each experiment card's figures read
// from the page against the NumPy oracle (tests/oracle/gen_lesson_fixtures.py →
// tests/fixtures/lesson.json), each picture's own legend, the head picker, the standard side
// that the controls never change, the guided path by keyboard (its cards in view, as slides in fit
// mode), and 375 px without sideways scroll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { waitReady, servedBrowser, exportJson, reusedTab, ROOT, SHOTS } from './helpers.mjs';

const env = servedBrowser();
const oracle = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/lesson.json'), 'utf8'));
// NumPy's print() of lesson 1's lines on lesson 2's arrays (tests/oracle/gen_numpy_print.py).
const prints = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/numpy_print.json'), 'utf8')).lesson2;

// Each test's page is a fresh load, in the tab the last one used (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 }, acceptDownloads: true });
async function open(hash, viewport) {
  const opened = await tab.load(env.server.url + '/' + hash, viewport);
  await waitReady(opened.page);
  if (hash.includes('view=lesson')) await drawn(opened.page);
  return opened;
}
async function drawn(page) {
  await page.waitForFunction(() => !!document.querySelector('.view-lesson')?.getAttribute('data-drawn'), null, { timeout: 20000 });
}
/** The open card is `id` (not the previous card, whose figures stay while the new one computes). */
async function cardShown(page, id) {
  await page.waitForFunction((want) => document.querySelector('.lesson-card')?.getAttribute('data-card') === want, id, { timeout: 20000 });
}
async function figures(page) {
  return JSON.parse(await page.locator('.lesson-card').getAttribute('data-figures'));
}
async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `lesson-${name}.png`), fullPage: true });
}
const near = (a, b, tol, msg) => assert.ok(Math.abs(a - b) <= tol, `${msg}: ${a} is not within ${tol} of ${b}`);

test('code lines: each control is labelled by its line; changing one by keyboard recomputes and highlights it', async () => {
  const { page, errors } = await open('#v=1&view=lesson');
  const labels = await page.locator('.code-lines select, .code-lines input').evaluateAll((xs) => xs.map((x) => x.getAttribute('aria-label')));
  assert.ok(labels.length >= 6);
  for (const l of labels) assert.match(l, /^line \d+, /);
  // Standard: no changed line, rows sum to 1.
  assert.equal(await page.locator('.code-line.changed').count(), 0);
  const norm = page.getByLabel(/, the normalizer$/);
  await norm.focus();
  await page.keyboard.press('ArrowDown'); // softmax → softmax1
  await waitReady(page);
  await drawn(page);
  assert.match(page.url(), /norm=softmax1/);
  assert.equal(await page.locator('.code-line.just-changed').getAttribute('data-line'), 'norm');
  const sum = Number(await page.locator('.badge-row').nth(1).locator('[data-badge="rowsum"]').getAttribute('data-value'));
  assert.ok(sum > 0 && sum < 1, `softmax1 rows sum below 1 (max |Σ−1| ${sum})`);
  await shot(page, 'softmax1');
  assert.deepEqual(errors, []);
});

test('max shift card: the thresholds measured on the page match the oracle', async () => {
  const { page, errors } = await open('#v=1&view=lesson&lexp=shift&llogit=100');
  const f = await figures(page);
  near(f.thresholdF32, oracle.thresholds.float32, 1e-3, 'float32 threshold');
  near(f.thresholdF64, oracle.thresholds.float64, 1e-3, 'float64 threshold');
  near(f.thresholdF16, oracle.thresholds.float16, 0.01, 'float16 threshold');
  assert.equal(f.nanShiftOff, 100 > oracle.thresholds.float32 ? 1 : 0);
  assert.equal(f.nanShiftOn, 0);
  const text = await page.locator('.lesson-card').innerText();
  assert.ok(text.includes(oracle.thresholds.float32.toFixed(2)) && text.includes(oracle.thresholds.float64.toFixed(2)) && text.includes(oracle.thresholds.float16.toFixed(2)), text);
  await shot(page, 'shift');
  assert.deepEqual(errors, []);
});

test('cards: zero after, shuffle, cannot amplify, heads as a loop, √d_k and the cost state the oracle’s figures', async () => {
  const { page, errors } = await open('#v=1&view=lesson&lexp=after&mmode=after');
  // The cards on lesson 1's example measure the head drawn (head 1 here), at the scale drawn.
  const h0 = oracle.heads[0];
  let f = await figures(page);
  assert.equal(f.head, 0);
  near(f.minRowSumAfter, h0.after.minRowSumAfter, 1e-5, 'smallest row sum after');
  near(f.meanNormBefore, h0.after.meanNormBefore, 1e-4, 'mean norm before');
  near(f.meanNormAfter, h0.after.meanNormAfter, 1e-4, 'mean norm after');
  assert.equal(f.sigmoidMaxDelta, 0);
  assert.match(await page.locator('.card-measured').innerText(), /head 1 of 2 \(the head the pictures show\).*scale 1\/√d_k/);
  // The badge above (mask after, head 1) shows the same head: its smallest row sum is the card's.
  near(Number(await page.locator('.badge-row').nth(1).locator('[data-badge="rowsum"]').getAttribute('data-value')), 1 - f.minRowSumAfter, 1e-5, 'badge vs card');
  await shot(page, 'after');
  for (const [id, check] of [
    ['shuffle', (x) => { assert.ok(x.maxDeltaNone < 1e-5); near(x.maxDeltaRope, oracle.shuffle.maxDeltaRope, 1e-4, 'RoPE'); near(x.maxDeltaAlibi, oracle.shuffle.maxDeltaAlibi, 1e-4, 'ALiBi'); near(x.maxDeltaCausal, oracle.shuffle.maxDeltaCausal, 1e-4, 'causal'); }],
    ['amplify', (x) => { for (const k of Object.keys(h0.amplify)) near(x[k], h0.amplify[k], 1e-4, `amplify ${k}`); }],
    ['loop', (x) => { assert.equal(x.heads, 2); assert.ok(x.maxDelta < 1e-5); }],
    ['sqrtdk', (x) => { for (const d of [1, 64, 1024]) near(x[`std${d}`] / Math.sqrt(d), 1, 0.25, `std at d_k ${d} / √d_k`); oracle.lesson2.with.forEach((w, i) => near(x[`lesson2With${i}`], w, 1e-5, `lesson 2 row ${i}`)); oracle.lesson2.without.forEach((w, i) => near(x[`lesson2Without${i}`], w, 1e-5, `lesson 2 row ${i} without`)); near(x.lesson2ScoreStd, oracle.lesson2.scoreStd, 1e-4, 'lesson 2 score spread'); }],
    ['cost', (x) => { oracle.cost.ratios.forEach((r, i) => near(x[`ratio${oracle.cost.ts[i + 1]}`], r, 1e-12, `cost ratio at ${oracle.cost.ts[i + 1]}`)); assert.equal(x.crossover, oracle.cost.crossover); }],
  ]) {
    await page.locator(`a[data-card="${id}"]`).click();
    await waitReady(page);
    await drawn(page);
    await cardShown(page, id);
    f = await figures(page);
    check(f);
    // Every card opens with one plain sentence, then says what it measured.
    assert.equal(await page.locator('.lesson-card > h4 + p').getAttribute('class'), 'card-lead', id);
    assert.equal(await page.locator('.card-measured').count(), 1, id);
    await shot(page, id);
  }
  assert.deepEqual(errors, []);
});

test('variant cards: each names the line it replaces and runs', async () => {
  const { page, errors } = await open('#v=1&view=lesson&lexp=sigmoid&norm=sigmoid');
  for (const id of ['softmax1', 'sigmoid', 'relu', 'linear', 'rope', 'alibi', 'qknorm']) {
    await page.locator(`a[data-card="${id}"]`).click();
    await waitReady(page);
    await drawn(page);
    await cardShown(page, id);
    const text = await page.locator('.lesson-card').innerText();
    assert.match(text, /(Replaces|Adds) the line/);
    const f = await figures(page);
    assert.ok(Number.isFinite(f.maxDeltaWeights), id);
    // The card measures the head drawn: the same figures as the NumPy oracle for head 1, and
    // an entropy only where the rows are probability distributions.
    for (const [k, v] of Object.entries(oracle.heads[0].variants[id])) if (k in f) near(f[k], v, 1e-4, `${id} ${k}`);
    assert.equal('entropyChanged' in f, !['softmax1', 'sigmoid', 'relu'].includes(id), id);
    assert.equal(/mean row entropy/.test(text), !['softmax1', 'sigmoid', 'relu'].includes(id), id);
    await shot(page, id);
  }
  assert.deepEqual(errors, []);
});

test('FlashAttention card: the on-chip memory control recomputes the bytes from core.traffic; the figures match the IO model', async () => {
  // The IO model of Dao et al. 2022 (Theorem 2's setting), written out here: float32, one head, no
  // mask, d = 64, M = sramBytes / 4 floats, B_r = min(⌈M/4d⌉, d) query rows per block.
  const d = 64;
  const model = (T, sramBytes) => {
    const M = Math.floor(sramBytes / 4), Br = Math.min(Math.ceil(M / (4 * d)), d);
    return { t: T, stdFootprint: 4 * (4 * T * d + 2 * T * T), tiledFootprint: 4 * (4 * T * d + 2 * T), stdMoved: 4 * (4 * T * d + 4 * T * T), tiledMoved: 4 * (T * (2 * d + 2) + Math.ceil(T / Br) * T * 2 * d) };
  };
  const rows = (page) => page.locator('[data-testid="card-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => JSON.parse(tr.dataset.row)));
  // Both loop orders against the NumPy oracle's walk of the loops (tests/oracle/flash_io.py).
  const walked = (kernel, t, sram) => {
    const c = oracle.flash.cases.find((x) => x.kernel === kernel && x.tq === t && !x.causal && x.dk === 64 && x.sramBytes === (kernel === 'naive' ? 0 : sram));
    return c.loaded + c.stored;
  };
  const withOracle = (T, sramBytes) => ({ ...model(T, sramBytes), kvOuterMoved: walked('kv-outer', T, sramBytes) });
  const { page, errors } = await open('#v=1&view=lesson&lexp=flash&lsram=32', { width: 1280, height: 900 });
  const sram = page.getByTestId('flash-sram');
  assert.equal(await sram.inputValue(), '32');
  assert.deepEqual(await rows(page), [512, 1024, 2048, 4096, 8192].map((t) => withOracle(t, 32 * 1024)));
  for (const r of await rows(page)) assert.equal(r.tiledMoved, walked('q-outer', r.t, 32 * 1024));
  let text = await page.locator('.lesson-card').innerText();
  assert.match(text, /M = 32 KiB of on-chip memory = 8192 floats, so blocks of 32 query rows × 32 keys/);
  assert.match(text, /what became linear is the memory the computation keeps \(the footprint\); the traffic stays quadratic in T, Θ\(T²d²\/M\)/);
  assert.match(text, /Where lesson 2 simplifies: it says “what became linear is the memory traffic”/);
  await shot(page, 'flash-32k');
  // Keyboard: one step down (32 → 48 KiB) recomputes, and the link carries it.
  await sram.focus();
  await page.keyboard.press('ArrowDown');
  await waitReady(page);
  await page.waitForFunction(() => /M = 48 KiB/.test(document.querySelector('.lesson-card')?.textContent ?? ''), null, { timeout: 10000 });
  assert.match(page.url(), /lsram=48/);
  assert.deepEqual(await rows(page), [512, 1024, 2048, 4096, 8192].map((t) => withOracle(t, 48 * 1024)));
  const f = await figures(page);
  near(f.trafficSmallSramRatio, model(8192, 16384).tiledMoved / model(8192, 48 * 1024).tiledMoved, 1e-9, '16 KiB vs 48 KiB');
  // The largest size: past 4d² floats the query block is capped at d rows (query blocks outer),
  // while key blocks outer keep falling (790 MiB at 64 KiB to 227 MiB at 228 KiB); the card says so.
  await page.goto(env.server.url + '/#v=1&view=lesson&lexp=flash&lsram=228');
  await waitReady(page);
  await drawn(page);
  assert.deepEqual(await rows(page), [512, 1024, 2048, 4096, 8192].map((t) => withOracle(t, 228 * 1024)));
  text = await page.locator('.lesson-card').innerText();
  assert.match(text, /at this M it is capped at d rows/);
  assert.match(text, /key blocks as the outer loop \(the paper’s Algorithm 1, FlashAttention-1\) 227 MiB/);
  assert.match(text, /stop at 64 KiB \(4d² floats\), because Algorithm 1 caps a query block at d = 64 rows .*not something either paper states/);
  await page.locator('.lesson-card').screenshot({ path: join(SHOTS, 'lesson-flash-card-1280.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(sw <= cw, `390 px: scrollWidth ${sw} > clientWidth ${cw}`);
  await page.locator('.lesson-card').screenshot({ path: join(SHOTS, 'lesson-flash-card-390.png') });
  assert.deepEqual(errors, []);
});

test('375 px: no sideways scroll', async () => {
  const { page, errors } = await open('#v=1&view=lesson&lexp=shift', { width: 375, height: 800 });
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(sw <= cw, `scrollWidth ${sw} > clientWidth ${cw}`);
  await shot(page, 'phone');
  assert.deepEqual(errors, []);
});

test('guided path: Start here, then ← / → by keyboard through states; lstep in the link; slides in ?embed=1', async () => {
  const { page, errors } = await open('#v=1&view=lesson');
  await page.getByRole('button', { name: /Start here/ }).focus();
  await page.keyboard.press('Enter');
  await waitReady(page);
  assert.match(page.url(), /lstep=1/);
  assert.equal(await page.getByTestId('path-bar').isVisible(), true);
  assert.match(await page.locator('.path-count').textContent(), /^Step 1 of \d+$/);
  await page.evaluate(() => document.activeElement?.blur?.());
  await page.keyboard.press('ArrowRight');
  await waitReady(page);
  assert.match(page.url(), /lstep=2/);
  assert.match(page.url(), /view=mask/);
  await page.keyboard.press('ArrowRight');
  await waitReady(page);
  assert.match(page.url(), /lstep=3/);
  // Step 3 is the fully masked row: the first key is padding and the −∞ fill gives a NaN row.
  assert.match(page.url(), /pad=0/);
  await page.keyboard.press('ArrowLeft');
  await waitReady(page);
  assert.match(page.url(), /lstep=2/);
  await shot(page, 'path');
  await page.getByRole('button', { name: 'close the guided path' }).click();
  await waitReady(page);
  assert.equal(await page.getByTestId('path-bar').isHidden(), true);
  assert.deepEqual(errors, []);

  const e = await open('?embed=1#v=1&view=lesson&lexp=shift&llogit=100&lstep=7', { width: 800, height: 600 });
  assert.match(await e.page.locator('.path-count').textContent(), /^Step 7 of /);
  await e.page.getByRole('button', { name: 'next step' }).click();
  await waitReady(e.page);
  await drawn(e.page);
  assert.match(e.page.url(), /lstep=8/);
  assert.match(e.page.url(), /lexp=after/);
  await shot(e.page, 'embed-slide');
  assert.deepEqual(e.errors, []);
});

test('each picture has its own legend and scale; line 5 changes the changed side only; the head picker', async () => {
  const { page, errors } = await open('#v=1&view=lesson&norm=sigmoid', { width: 1280, height: 900 });
  const legends = () => page.locator('.lesson-legend').evaluateAll((ls) => Object.fromEntries(ls.filter((l) => !l.closest('figure').hidden).map((l) => [l.dataset.legend, { lo: Number(l.dataset.lo), hi: Number(l.dataset.hi), title: l.querySelector('.legend-title')?.textContent, ticks: [...l.querySelectorAll('.legend-ticks span')].map((t) => t.textContent) }])));
  let L = await legends();
  assert.deepEqual(Object.keys(L).sort(), ['chg', 'diff', 'outChg', 'outStd', 'scores', 'std']);
  assert.deepEqual([L.std.lo, L.std.hi, L.std.title], [0, 1, 'weight']);
  // The changed weights' scale starts at 0 and reaches at least 1 (past it where a weight does).
  assert.ok(L.chg.lo === 0 && L.chg.hi >= 1, JSON.stringify(L.chg));
  // The difference, the scores and the outputs are symmetric: 0 sits in the middle tick.
  for (const k of ['diff', 'scores', 'outStd', 'outChg']) {
    assert.ok(L[k].hi > 0 && L[k].lo === -L[k].hi, `${k}: ${JSON.stringify(L[k])}`);
    assert.match(L[k].ticks[2], /^−?0(\.0+)?$/, `${k}: middle tick ${L[k].ticks[2]}`);
  }
  const diff = Number(await page.locator('.lesson-badges').getAttribute('data-max-abs-diff'));
  near(L.diff.hi, diff, 1e-6, 'difference legend = max |Δw|');
  await page.locator('figure[data-map="diff"]').screenshot({ path: join(SHOTS, 'lesson-legend-diff.png') });
  await shot(page, 'legends');

  // Line 5 (√d_k): deleting the division changes the changed side only.
  const stdHash = async () => page.locator('figure[data-map="std"] canvas.hm-data').evaluate((c) => c.toDataURL());
  await page.goto(env.server.url + '/#v=1&view=lesson');
  await waitReady(page);
  await drawn(page);
  const before = await stdHash();
  assert.match(await page.getByTestId('lesson-status').innerText(), /Standard computation: change a line to compare/);
  const scale = page.getByLabel(/, scores and scale$/);
  await scale.selectOption('none');
  await waitReady(page);
  await page.waitForFunction(() => /Changed lines highlighted/.test(document.querySelector('[data-testid="lesson-status"]')?.textContent ?? ''), null, { timeout: 10000 });
  await drawn(page);
  assert.match(page.url(), /scale=none/);
  assert.equal(await stdHash(), before, 'the Standard picture keeps 1/√d_k');
  assert.equal(await page.locator('.code-line.changed').getAttribute('data-line'), 'scores');
  assert.ok(Number(await page.locator('.lesson-badges').getAttribute('data-max-abs-diff')) > 0.05);
  assert.match(await page.locator('figure[data-map="std"] figcaption').innerText(), /scale 1\/√d_k/);
  await shot(page, 'scale-none');

  // The head picker: head 2 is drawn, named, in the link, and the cards measure it.
  await page.goto(env.server.url + '/#v=1&view=lesson&lexp=amplify');
  await waitReady(page);
  await drawn(page);
  assert.match(await page.locator('.lesson-pics .panel-title').innerText(), /head 1 of 2/);
  await page.getByTestId('lesson-head').selectOption({ label: '2' }); // head 2 (heads count from 1)
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('.lesson-badges')?.getAttribute('data-head') === '1', null, { timeout: 10000 });
  await drawn(page);
  assert.match(page.url(), /head=1/);
  assert.match(await page.locator('.lesson-pics .panel-title').innerText(), /head 2 of 2/);
  const f = await figures(page);
  assert.equal(f.head, 1);
  for (const k of Object.keys(oracle.heads[1].amplify)) near(f[k], oracle.heads[1].amplify[k], 1e-4, `head 2 amplify ${k}`);
  assert.match(await page.locator('.card-measured').innerText(), /head 2 of 2/);
  await shot(page, 'head-2');
  assert.deepEqual(errors, []);
});

test('guided path: a step’s card and its control are in view (1280, ?embed=1 at 390 × 844) and fit a 960 × 540 slide; each step highlights its own line', async () => {
  const inView = (page, sel) => page.locator(sel).evaluate((e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.top < innerHeight && r.bottom > 0 && r.height > 0;
  });
  for (const [url, viewport, name] of [['', { width: 1280, height: 800 }, '1280'], ['?embed=1', { width: 390, height: 844 }, 'embed-390']]) {
    const { page, errors } = await open(`${url}#v=1&view=lesson&lstep=6`, viewport);
    await page.getByRole('button', { name: 'next step' }).click(); // step 7: the max shift
    await waitReady(page);
    await page.getByRole('button', { name: 'NaN', exact: true }).click(); // its question first
    await drawn(page);
    await page.waitForFunction(() => document.querySelector('.lesson-card')?.dataset.card === 'shift', null, { timeout: 10000 });
    await page.waitForTimeout(100);
    assert.match(page.url(), /lstep=7/);
    assert.ok(await inView(page, '.lesson-card h4'), `${name}: the card's title is in view`);
    assert.ok(await inView(page, '.lesson-card input[type="range"]'), `${name}: the slider is in view`);
    assert.ok(await inView(page, '.path-text'), `${name}: the step's text is in view`);
    // Step 7 says the shift is off and the card's row turns NaN: both true of what is shown.
    assert.equal(await page.locator('.code-line[data-line="shift"] input').isChecked(), false);
    assert.equal((await figures(page)).nanShiftOff, 1);
    assert.equal(await page.locator('.code-line.just-changed').getAttribute('data-line'), 'shift');
    await shot(page, `path-step7-${name}`);
    await page.getByRole('button', { name: 'next step' }).click(); // 8: −∞ before, not zero after
    await waitReady(page);
    await page.getByRole('button', { name: 'next step' }).click(); // 9: the √d_k
    await waitReady(page);
    await drawn(page);
    await page.waitForFunction(() => document.querySelector('.lesson-card')?.dataset.card === 'sqrtdk', null, { timeout: 10000 });
    assert.match(page.url(), /lstep=9/);
    assert.equal(await page.locator('.code-line.just-changed').getAttribute('data-line'), 'scores', 'step 9 highlights its own line, not step 8’s');
    assert.ok(await inView(page, '.lesson-card h4'), `${name}: step 9's card is in view`);
    assert.deepEqual(errors, []);
  }
  // A 960 × 540 slide in fit mode: nothing scrolls, and the step's card with its control shows.
  for (const [step, control] of [[7, '.lesson-card input[type="range"]'], [11, '[data-testid="flash-sram"]'], [9, '.lesson-card .card-lead']]) {
    const { page, errors } = await open(`?embed=1&fit=1#v=1&view=lesson&lstep=${step}&${step === 7 ? 'lexp=shift&llogit=100&shift=0' : step === 11 ? 'lexp=flash' : 'lexp=sqrtdk'}`, { width: 960, height: 540 });
    if (step === 7) await page.getByRole('button', { name: 'NaN', exact: true }).click(); // its question first
    await page.waitForTimeout(200);
    const [sh, ih] = await page.evaluate(() => [document.documentElement.scrollHeight, innerHeight]);
    assert.ok(sh <= ih + 1, `fit step ${step}: scrollHeight ${sh} > ${ih}`);
    assert.ok(await inView(page, control), `fit step ${step}: ${control} in view`);
    assert.ok(await inView(page, '.lesson-card .card-lead'), `fit step ${step}: the card's plain sentence in view`);
    await shot(page, `fit-step${step}`);
    assert.deepEqual(errors, []);
  }
});

test('Export JSON: each head’s q, k, v; the weights recomputed from them as a student would in NumPy', async () => {
  const { page, errors } = await open('#v=1&src=random&heads=4&kv=2&dm=16&dk=4&seed=7&view=heads');
  const j = await exportJson(page);
  assert.equal(j.heads.length, 4);
  const T = j.tokens.length, dk = j.shape.dk;
  for (const h of j.heads) {
    assert.equal(h.q.length, T);
    assert.equal(h.q[0].length, dk);
    assert.equal(h.v[0].length, j.shape.dv);
    // softmax(q·kᵀ/√d_k) under the causal mask, row by row, in float64.
    for (let i = 0; i < T; i++) {
      const s = h.k.slice(0, i + 1).map((kr) => kr.reduce((a, x, c) => a + x * h.q[i][c], 0) / Math.sqrt(dk));
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let jj = 0; jj <= i; jj++) near(h.weights[i][jj], e[jj] / z, 2e-6, `head ${h.head} row ${i} key ${jj}`);
    }
  }
  // GQA: heads 1–2 share K/V head 1, heads 3–4 K/V head 2.
  assert.deepEqual(j.heads[0].k, j.heads[1].k);
  assert.notDeepEqual(j.heads[1].k, j.heads[2].k);
  // NaN weights export as null (the all-padding preset, −∞ fill).
  await page.goto(env.server.url + '/#v=1&src=random&tokens=pad+pad+pad+pad&heads=1&kv=1&dm=8&dk=4&causal=0&pad=0,1,2,3');
  await waitReady(page);
  const n = await exportJson(page);
  assert.equal(n.heads[0].weights[0][0], null);
  assert.equal(n.heads[0].q.length, 4);
  assert.deepEqual(errors, []);
});

test('on the student’s own X, W_q, W_k, W_v (a float64 .npz), every line runs on them and prints what NumPy prints', async () => {
  const npz = join(mkdtempSync(join(tmpdir(), 'ap-lesson-')), 'lesson2_inputs.npz');
  const make = `import sys; sys.path.insert(0, sys.argv[2]); import numpy as np; from student_arrays import lesson2
a = lesson2(); np.savez(sys.argv[1], X=a["X"], W_q=a["W_q"], W_k=a["W_k"], W_v=a["W_v"])`;
  execFileSync('/usr/bin/python3', ['-c', make, npz, join(ROOT, 'tests/oracle')]);
  const { page, context, errors } = await open('#v=1&tokens=t0+t1+t2+t3+t4+t5&causal=1&prec=float64');
  await page.getByTestId('arrays-panel').locator('summary').click();
  await page.locator('input[name="arrays-mode"][value="projections"]').check();
  await page.getByTestId('arrays-heads').fill('1');
  await page.getByTestId('arrays-file').setInputFiles(npz);
  await page.waitForFunction(() => window.__attentionPlayground.weights()?.arrays === 'projections');
  await page.getByRole('tab', { name: 'Lesson' }).click();
  await drawn(page);
  assert.match(await page.getByTestId('lesson-source').innerText(), /^On your X, W_q, W_k, W_v from “Your arrays” \(Heads view\): every line runs on them/);
  assert.match(await page.locator('.lesson-pics .panel-title').innerText(), /head 1 of 1, on your arrays$/);
  assert.equal(await page.locator('.lesson-pics [data-legend="std"]').count(), 1);
  // Every print, line by line, character for character: float64 inputs in float64.
  for (const d of await page.locator('details.line-print').all()) await d.locator('summary').click();
  const got = await page.locator('.code-line').evaluateAll((lis) =>
    lis.flatMap((li) => [...li.querySelectorAll('pre.np-print')].map((p) => ({ line: li.dataset.line, expr: p.dataset.expr, text: p.textContent }))),
  );
  assert.deepEqual(got, prints);
  const note = await page.getByTestId('print-note').innerText();
  assert.match(note, /head 1, the changed computation \(the lines as set\), float64\./);
  assert.doesNotMatch(note, /came as float32/);
  // The prints stay open across a redraw (a control change re-renders the lines).
  await page.getByLabel('line 1, precision of every step').selectOption('float32');
  await drawn(page);
  assert.equal(await page.locator('details.line-print[open]').count(), await page.locator('details.line-print').count());
  assert.match(await page.getByTestId('print-note').innerText(), /float32\. A NumPy notebook computes in float64 unless told otherwise: set line 1 to float64/);
  await shot(page, 'student-arrays-prints');
  // Copy: the clipboard gets the printed text (or, where the clipboard is refused, it is selected).
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
  const wBlock = page.locator('.code-line[data-line="norm"] pre.np-print[data-expr="W"]');
  const want = await wBlock.textContent();
  await page.locator('.code-line[data-line="norm"] button[aria-label="copy print(W) of line 9"]').click();
  await page.waitForFunction(() => [...document.querySelectorAll('.np-print-head button')].some((b) => b.textContent !== 'Copy'));
  const copied = await page.evaluate(async () => {
    try {
      return await navigator.clipboard.readText();
    } catch {
      return String(window.getSelection());
    }
  });
  assert.equal(copied, want);
  // Back to the page's example: the note above the pictures goes, the title says nothing of arrays.
  await page.getByRole('tab', { name: 'Heads' }).click();
  await page.getByTestId('arrays-remove').click();
  await page.getByRole('tab', { name: 'Lesson' }).click();
  await drawn(page);
  assert.equal(await page.getByTestId('lesson-source').isHidden(), true);
  assert.doesNotMatch(await page.locator('.lesson-pics .panel-title').innerText(), /your arrays/);
  assert.deepEqual(errors, []);
  await context.close(); // the clipboard permission goes with it: the next test gets a new tab
});

test('with only a W in “Your arrays”, the Lesson says its lines need Q, K, V and draws the page’s example', async () => {
  const { page } = await open('#v=1&view=lesson&uw=1.f4.2x2.b.AAAAPwAAAD8AAAA_AAAAPw');
  assert.match(await page.getByTestId('lesson-source').innerText(), /^Your W \(from “Your arrays”\) has no Q, K and V to run the lines on; the pictures run on the page’s example/);
  assert.doesNotMatch(await page.locator('.lesson-pics .panel-title').innerText(), /your arrays/);
});

test('guided path: a step with a question hides its view until the student predicts (keyboard), then says right or not and what to look at', async () => {
  const { page, errors } = await open('#v=1&view=lesson');
  await page.locator('.start-here').click();
  await waitReady(page);
  const stage = page.locator('.stage');
  // Step 1 asks nothing: its view is there.
  assert.equal(await page.getByTestId('path-predict').isHidden(), true);
  assert.equal(await page.locator('.view-host').isVisible(), true);
  await page.getByRole('button', { name: 'next step' }).click();
  await waitReady(page);
  // Step 2: the question, its choices; the view and the step's own sentences (the answer) wait.
  assert.match(await page.getByTestId('path-predict').innerText(), /^Predict first: With the causal mask, how many keys may query 0/);
  assert.match(await stage.getAttribute('class'), /\bpredicting\b/);
  assert.equal(await page.locator('.view-host').isVisible(), false);
  assert.equal(await page.locator('.path-text').isHidden(), true);
  // By keyboard: focus the first choice and Enter (a wrong one).
  await page.getByRole('button', { name: 'all of them', exact: true }).focus();
  await page.keyboard.press('Enter');
  const verdict = page.locator('.path-verdict');
  assert.equal(await verdict.getAttribute('data-verdict'), 'wrong');
  assert.match(await verdict.innerText(), /^Not quite: you said “all of them”; the view shows only itself\. Row 0 of the mask is one allowed cell/);
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('path-verdict')), true);
  assert.equal(await page.locator('.view-host').isVisible(), true);
  assert.equal(await page.locator('.path-text').isVisible(), true);
  assert.doesNotMatch(await stage.getAttribute('class'), /\bpredicting\b/);
  // What the verdict points at is on the page: row 0 attends to itself alone, with weight 1.
  const row0 = await page.evaluate(() => {
    const w = window.__attentionPlayground.weights();
    return w.weights.slice(0, w.t);
  });
  assert.deepEqual(row0, [1, ...Array(row0.length - 1).fill(0)]);
  await page.keyboard.press('ArrowRight');
  await waitReady(page);
  // Step 3: "Just show me" reveals without a guess.
  await page.getByRole('button', { name: 'Just show me' }).click();
  assert.equal(await page.locator('.path-verdict').getAttribute('data-verdict'), 'shown');
  assert.match(await page.locator('.path-verdict').innerText(), /^The answer: NaN\./);
  await shot(page, 'path-predicted');
  // Back to step 2: answered once, not asked again.
  await page.keyboard.press('ArrowLeft');
  await waitReady(page);
  assert.equal(await page.locator('.path-choices').count(), 0);
  assert.equal(await page.locator('.view-host').isVisible(), true);
  assert.deepEqual(errors, []);
});

test('Reproduce in NumPy: every card’s lines run with NumPy as they are and print the card’s figures', async () => {
  const { page, errors } = await open('#v=1&view=lesson');
  const chips = await page.locator('a.card-chip').evaluateAll((as) => as.map((a) => ({ id: a.dataset.card, href: a.getAttribute('href') })));
  assert.equal(chips.length, 15);
  const checked = [];
  for (const { id, href } of chips) {
    await page.goto(env.server.url + '/' + href);
    await waitReady(page);
    await drawn(page);
    await cardShown(page, id);
    const pre = page.getByTestId('card-numpy');
    assert.equal(await pre.count(), 1, `${id}: the card offers its NumPy lines`);
    const code = await pre.textContent();
    const prints = JSON.parse(await pre.getAttribute('data-prints'));
    const tolerance = JSON.parse(await pre.getAttribute('data-tolerance'));
    const fig = await figures(page);
    const out = execFileSync('/usr/bin/python3', ['-'], { input: code, encoding: 'utf8' }).trim().split('\n');
    assert.equal(out.length, prints.length, `${id}: one printed line per figure\n${out.join('\n')}`);
    prints.forEach((name, i) => {
      const last = out[i].trim().split(/\s+/).at(-1);
      const got = last === 'True' ? 1 : last === 'False' ? 0 : Number(last);
      const want = fig[name];
      assert.ok(Number.isFinite(want), `${id}: the card has a figure ${name}`);
      const tol = tolerance[name] ?? Math.max(2e-5, 2e-4 * Math.abs(want));
      assert.ok(Math.abs(got - want) <= tol, `${id}: ${name}: NumPy prints ${got}, the card ${want} (tolerance ${tol})`);
    });
    checked.push(`${id}: ${prints.length}`);
  }
  console.log(`# NumPy reproduced ${checked.join(', ')}`);
  assert.deepEqual(errors, []);
});
