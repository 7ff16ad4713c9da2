// The Train tab in Chromium, against dist/: the default run learns induction (accuracy ≥ 0.9,
// a layer-0 previous-token head and a layer-1 induction head in the exported scores); a share link
// replays the same loss bits (and the same bits as the module under Node); until= stops there; a
// learning rate changed while running takes effect at one step; a diverging run stops with a
// notice and keeps the last good step; an over-cap config is refused; while training only the
// panels on screen are redrawn (one scrolled into view catches up); an embed pauses when
// scrolled out of view and resumes when back. Prints the figures for the closing note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, SHOTS, servedBrowser, watch } from './helpers.mjs';

const env = servedBrowser();

let libPromise = null;
function nodeLib() {
  libPromise ??= (async () => {
    const dir = join(ROOT, 'build', 'wasm');
    const { default: create } = await import(join(dir, 'attn_train.mjs'));
    return create({ wasmBinary: fs.readFileSync(join(dir, 'attn_train.wasm')) });
  })();
  return libPromise;
}

const run = (page) => page.evaluate(() => document.querySelector('[data-testid=train-view]')?.dataset.run);
async function waitRun(page, states, timeout = 60000) {
  await page.waitForFunction((s) => s.includes(document.querySelector('[data-testid=train-view]')?.dataset.run), states, { timeout });
}
const losses = (page) => page.evaluate(() => window.__trainTab.history.lossArray());
const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));

async function open(hash, opts = {}) {
  const page = await env.browser.newPage({ viewport: opts.viewport ?? { width: 1280, height: 900 } });
  const w = watch(page);
  await page.goto(`${env.server.url}/${opts.search ?? ''}${hash}`);
  return { page, w };
}

test('default run: accuracy ≥ 0.9, layer-0 previous-token head and layer-1 induction head in the export; figures', async () => {
  const { page, w } = await open('#v=1&view=train&uacc=0.9', { viewport: { width: 1280, height: 1250 } });
  await waitRun(page, ['idle']);
  // An independent frame clock: every animation frame's duration while training.
  await page.evaluate(() => {
    window.__frameLog = [];
    let last = 0;
    const tick = (t) => {
      if (last) window.__frameLog.push(t - last);
      last = t;
      if (!window.__frameStop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const t0 = Date.now();
  await page.keyboard.press('Space'); // space toggles play
  await waitRun(page, ['running'], 5000);
  await waitRun(page, ['stopped'], 120000);
  const wallS = (Date.now() - t0) / 1000;
  const frames = await page.evaluate(() => {
    window.__frameStop = true;
    return window.__frameLog;
  });
  const info = await page.evaluate(() => ({ ...window.__trainTab.phaseAt, step: window.__trainTab.step(), sps: window.__trainTab.stepsPerSec(), gf: window.__trainTab.gflops() }));
  assert.ok(info.crossed90 !== null, 'accuracy never reached 0.9');
  assert.equal(info.step, info.crossed90, 'the accuracy stop condition stops at the crossing');
  await page.evaluate(() => scrollTo(0, 0));
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(SHOTS, 'train-desktop.png'), fullPage: false });
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('train-export-json').click()]);
  const doc = JSON.parse(await readFile(await download.path(), 'utf8'));
  const h = doc.history;
  assert.equal(h.step.length, info.step);
  assert.equal(h.loss.length, info.step);
  assert.ok(h.evalAccuracy[h.evalAccuracy.length - 1] >= 0.9);
  assert.equal(h.evalStep[h.evalStep.length - 1], info.step);
  const s = doc.headScores;
  const max = (a) => Math.max(...a);
  // layer 0: some head mostly attends one token back; layer 1: some head does induction
  assert.ok(max(s.previousToken[0]) >= 0.3, `layer-0 previous-token scores ${s.previousToken[0]}`);
  assert.ok(max(s.previousToken[0]) > max(s.induction[0]), 'layer 0 is previous-token, not induction');
  assert.ok(max(s.induction[1]) >= 0.6, `layer-1 induction scores ${s.induction[1]}`);
  assert.ok(max(s.induction[1]) > max(s.previousToken[1]), 'layer 1 is induction, not previous-token');
  assert.equal(s.kComposition.length, 1);
  assert.ok(Array.isArray(doc.weights.layers) && doc.weights.layers.length === 2);
  assert.equal(doc.config.seed, 0);
  // the phase change was announced in the polite live region
  const live = await page.evaluate(() => [...document.querySelectorAll('[aria-live=polite]')].map((e) => e.textContent).join(' | '));
  assert.match(live, /Accuracy crossed 0\.9/);
  const sorted = [...frames].sort((a, b) => a - b);
  const draws = (await page.evaluate(() => window.__trainTab.drawMs)).sort((a, b) => a - b);
  const pct = (a, q) => a[Math.min(a.length - 1, Math.floor(a.length * q))];
  console.log(`# default preset in Chromium: accuracy ≥ 0.9 at step ${info.crossed90} after ${(info.ms90 / 1000).toFixed(2)} s of training (${wallS.toFixed(2)} s wall from the key press); ${info.sps.toFixed(1)} steps/s; ${info.gf.toFixed(2)} GFLOP/s inside train(); frame time while training: median ${pct(sorted, 0.5).toFixed(1)} ms, p95 ${pct(sorted, 0.95).toFixed(1)} ms, worst ${sorted[sorted.length - 1].toFixed(1)} ms over ${frames.length} frames (${sorted.filter((x) => x > 50).length} over 50 ms); the page's redraw: median ${pct(draws, 0.5).toFixed(1)} ms, worst ${draws[draws.length - 1].toFixed(1)} ms over ${draws.length} redraws; scores prev L0 ${s.previousToken[0].map((x) => x.toFixed(2))} induction L1 ${s.induction[1].map((x) => x.toFixed(2))}`);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('while training only the panels on screen are redrawn; one scrolled into view catches up; a stop draws them all', async () => {
  const { page, w } = await open('#v=1&view=train&until=400');
  await waitRun(page, ['idle']);
  const drawn = () => page.evaluate(() => ({
    step: window.__trainTab.step(),
    loss: +document.querySelector('[data-testid=train-loss-chart]').dataset.step,
    scores: [...document.querySelectorAll('.tr-legend ~ canvas')].map((c) => +c.dataset.step),
  }));
  // Watching the loss curve: the head-score charts are far below the fold (1280 x 900).
  await page.evaluate(() => document.querySelector('[data-testid=train-loss-chart]').closest('section').scrollIntoView({ block: 'start' }));
  await page.keyboard.press('Space');
  await page.waitForFunction(() => window.__trainTab.step() >= 120, null, { timeout: 60000 });
  await page.waitForTimeout(300);
  const a = await drawn();
  assert.equal(a.scores.length, 3);
  assert.ok(a.loss >= 100, `the loss chart on screen follows the run (drawn at step ${a.loss}, run at ${a.step})`);
  assert.ok(a.scores.every((x) => x < 20), `the head-score charts off screen were not redrawn (${a.scores} at step ${a.step})`);
  await page.evaluate(() => document.querySelector('.tr-legend').closest('section').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(400);
  const b = await drawn();
  assert.ok(b.scores.every((x) => x >= a.step), `scrolled into view, the head-score charts caught up (${b.scores}, run at ${b.step})`);
  assert.ok(b.loss < b.step, 'the loss chart, now off screen, waits');
  await waitRun(page, ['stopped']);
  await page.waitForTimeout(300);
  const c = await drawn();
  assert.equal(c.step, 400);
  assert.deepEqual([c.loss, ...c.scores], [400, 400, 400, 400], 'at the stop every chart shows the last step');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a share link replays the same loss bits (and Node’s); until= stops there', async () => {
  const hash = '#v=1&view=train&until=30&play=1';
  const runs = [];
  for (let k = 0; k < 2; k++) {
    const { page, w } = await open(hash);
    await waitRun(page, ['stopped'], 60000);
    assert.equal(await page.evaluate(() => window.__trainTab.step()), 30);
    // the stopped model is handed to the other tabs (Decode)
    await page.waitForFunction(() => window.__trainTab.published() === 30, null, { timeout: 10000 });
    runs.push(await losses(page));
    assert.match(await page.getByTestId('train-status').textContent(), /stop step at step 30/);
    if (k === 1) {
      // a probe typed by the user: the maps follow it; a bad one is refused with a word
      await page.getByTestId('train-probe').fill('5 9 2 7 5 9 2 7');
      await page.getByTestId('train-probe-use').click();
      await page.waitForFunction(() => /Probe: 8 tokens/.test(document.querySelector('[data-testid=train-status]').textContent));
      assert.equal(await page.locator('.tr-head').first().locator('.hm-rows > *').count(), 8);
      await page.getByTestId('train-probe').fill('5 99');
      await page.getByTestId('train-probe-use').click();
      assert.match(await page.getByTestId('train-status').textContent(), /token ids 0…31/);
    }
    assert.deepEqual(w.errors, []);
    await page.close();
  }
  assert.equal(runs[0].length, 30);
  assert.deepEqual(bits(runs[0]), bits(runs[1]));
  const lib = await nodeLib();
  const tr = lib.createTrainer({ seed: 0 });
  const ref = tr.train(30).loss;
  tr.delete();
  assert.deepEqual(bits(runs[0]), bits(ref), 'the page and the module under Node differ');
});

test('Compare runs a second configuration on the same data seed, curves overlaid', async () => {
  const { page, w } = await open('#v=1&view=train&until=15&play=1&cmp=noscale');
  await waitRun(page, ['stopped'], 60000);
  await page.waitForFunction(() => window.__trainTab.compare()?.length === 15, null, { timeout: 60000 });
  const main = await losses(page);
  const other = await page.evaluate(() => window.__trainTab.compare());
  assert.equal(main.length, 15);
  const lib = await nodeLib();
  const tr = lib.createTrainer({ seed: 0, scale: 'none' });
  const ref = tr.train(15).loss;
  tr.delete();
  assert.deepEqual(bits(other), bits(ref), 'the comparison run is not the same seed with scale 1');
  assert.notDeepEqual(bits(other), bits(main));
  assert.match(await page.evaluate(() => document.querySelector('.tr-caption').textContent), /Dashed: the same data seed, without √d_k/);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('a learning rate changed while running takes effect at one step, without a reset', async () => {
  const { page, w } = await open('#v=1&view=train&until=40&speed=60');
  await waitRun(page, ['idle']);
  await page.getByTestId('train-play').click();
  await page.waitForFunction(() => window.__trainTab.step() >= 8, null, { timeout: 30000 });
  await page.getByTestId('train-lr').fill('0.05');
  await page.getByTestId('train-lr').dispatchEvent('change');
  assert.equal(await run(page), 'running', 'changing the learning rate did not keep the run going');
  await waitRun(page, ['stopped'], 60000);
  const got = await losses(page);
  assert.equal(got.length, 40);
  assert.match(page.url(), /lr=0\.05/);
  const lib = await nodeLib();
  const plain = lib.createTrainer({ seed: 0 });
  const a = plain.train(40).loss;
  plain.delete();
  const first = bits(got).findIndex((b, i) => b !== bits(a)[i]);
  assert.ok(first > 0, 'the losses never changed: the new learning rate had no effect');
  // losses[i] is the loss of step i + 1, computed before that step's update: the first loss that
  // differs (index `first`, step first + 1) sees the update of step `first`, the first to use the
  // new rate. Replay that switch in Node (first − 1 steps at the old rate) and demand the same bits.
  const tr = lib.createTrainer({ seed: 0 });
  const before = tr.train(first - 1).loss;
  tr.setLearningRate(0.05);
  const after = tr.train(40 - first + 1).loss;
  tr.delete();
  assert.deepEqual(bits(got), bits([...before, ...after]), `switching at step ${first} in Node does not reproduce the page`);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('divergence: a non-finite step stops the run with a notice, keeps the last good state, offers Reset; over-cap is refused', async () => {
  const { page, w } = await open('#v=1&view=train&lr=1000&play=1');
  await waitRun(page, ['diverged'], 30000);
  const notice = page.getByTestId('train-notice');
  assert.ok(await notice.isVisible());
  assert.match(await notice.textContent(), /non-finite at step \d+/);
  const step = await page.evaluate(() => window.__trainTab.step());
  assert.ok(step >= 1, 'the good steps are kept');
  assert.ok(await page.getByTestId('train-notice-reset').isVisible());
  const kept = await losses(page);
  assert.equal(kept.length, step, 'the history holds the applied steps only');
  assert.ok(kept.every(Number.isFinite));
  await page.getByTestId('train-notice-reset').click();
  await waitRun(page, ['idle'], 30000);
  assert.equal(await page.evaluate(() => window.__trainTab.step()), 0);
  // a config over the memory cap is refused with a notice naming the field; the page stays usable
  await page.goto(`${env.server.url}/#v=1&view=train&seqlen=256&batch=256&dmodel=512&layers=4&nh=8&vocab=256`);
  await waitRun(page, ['refused'], 30000);
  assert.match(await page.getByTestId('train-notice').textContent(), /field: memory/);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('an embed pauses when scrolled out of view or the tab is hidden, and resumes when back; 375 px without overflow', async () => {
  const host = `<!doctype html><meta charset="utf-8"><title>host</title><body style="margin:0">
    <iframe id="f" src="/?embed=1#v=1&view=train&play=1&speed=30" style="width:100%;height:700px;border:0"></iframe>
    <div style="height:3000px"></div></body>`;
  const { serve } = await import('./helpers.mjs');
  const server = await serve(undefined, { '/host.html': host });
  const page = await env.browser.newPage({ viewport: { width: 900, height: 800 } });
  try {
    await page.goto(`${server.url}/host.html`);
    const frame = () => page.frames().find((f) => f.url().includes('embed=1'));
    await page.waitForFunction(() => true);
    let f = null;
    for (let i = 0; i < 100 && !(f = frame()); i++) await page.waitForTimeout(100);
    await f.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'running', null, { timeout: 30000 });
    // the browser tab hidden (simulated: document.hidden + visibilitychange) pauses; shown resumes
    await f.evaluate(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await f.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 10000 });
    await f.evaluate(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await f.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'running', null, { timeout: 10000 });
    await page.evaluate(() => window.scrollTo(0, 2500));
    await f.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 10000 });
    const s1 = await f.evaluate(() => window.__trainTab.step());
    await page.waitForTimeout(800);
    assert.equal(await f.evaluate(() => window.__trainTab.step()), s1, 'it kept training while out of view');
    assert.match(await f.evaluate(() => document.querySelector('[data-testid=train-status]').textContent), /out of view/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await f.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'running', null, { timeout: 10000 });
    await f.waitForFunction((s) => window.__trainTab.step() > s, s1, { timeout: 10000 });
  } finally {
    await page.close();
    await server.close();
  }
  // phone width: no sideways scrolling
  const { page: phone, w } = await open('#v=1&view=train&until=20&play=1', { viewport: { width: 375, height: 800 } });
  await waitRun(phone, ['stopped'], 60000);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow} px at 375 px`);
  await phone.evaluate(() => document.querySelector('[data-testid=train-view]').scrollIntoView());
  await phone.waitForTimeout(300);
  await phone.screenshot({ path: join(SHOTS, 'train-phone.png'), fullPage: false });
  assert.deepEqual(w.errors, []);
  await phone.close();
});
