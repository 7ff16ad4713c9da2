// What a student hit in the Train tab, in Chromium against dist/ (each test failed on the build
// before the fix: AP_DIST=<old dist> node --test tests/browser/train-defects.test.mjs):
// "Open in Heads view" brings the trained heatmap into view and focuses it; layers and heads are
// counted from 1 in the text; the loss chart handles a 10⁵-nat start (log axis, labels that fit,
// no shelf claimed); each experiment card's claim holds on its own run; one status line, true
// now, and a non-finite notice naming the gradient norm; Compare "without √d_k" says why it can be
// faster; the "Heads now" table fits a phone; the K-composition legend, the ablation baseline, the
// probe labels, the PNG names, the link from the trained Heads view, the log step axis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, servedBrowser, watch } from './helpers.mjs';

const env = servedBrowser();

async function open(hash, viewport = { width: 1280, height: 900 }) {
  const page = await env.browser.newPage({ viewport });
  const w = watch(page);
  // Copy link writes to the clipboard: keep what was copied.
  await page.addInitScript(() => {
    window.__copied = [];
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (t) => { window.__copied.push(t); } } });
  });
  await page.goto(`${env.server.url}/${hash}`);
  return { page, w };
}
const runOf = (page) => page.evaluate(() => document.querySelector('[data-testid=train-view]')?.dataset.run);
async function waitRun(page, states, timeout = 120000) {
  await page.waitForFunction((s) => s.includes(document.querySelector('[data-testid=train-view]')?.dataset.run), states, { timeout });
}

test('A.1 Open in Heads view scrolls to the trained heatmap and focuses it', async () => {
  const { page, w } = await open('#v=1&view=train&until=20&play=1');
  await waitRun(page, ['stopped']);
  const btn = page.getByTestId('train-open-heads');
  await btn.scrollIntoViewIfNeeded();
  assert.ok(await page.evaluate(() => scrollY) > 300, 'the button sits far down the Train tab');
  await btn.click();
  await page.waitForSelector('[data-testid=trained-banner]:not([hidden])');
  await page.waitForTimeout(200);
  const geo = await page.evaluate(() => {
    const b = document.querySelector('[data-testid=trained-banner]').getBoundingClientRect();
    const z = document.querySelector('.zoom-panel .hm-frame').getBoundingClientRect();
    const a = document.activeElement;
    return { bannerTop: b.top, zoomTop: z.top, h: innerHeight, focusedZoom: !!a?.closest('.zoom-panel') && a.classList.contains('hm-frame') };
  });
  assert.ok(geo.bannerTop >= -1 && geo.bannerTop < geo.h / 3, `banner at y ${geo.bannerTop}`);
  assert.ok(geo.zoomTop >= 0 && geo.zoomTop < geo.h, `trained heatmap at y ${geo.zoomTop}`);
  assert.ok(geo.focusedZoom, 'focus is on the trained heatmap');
  await page.screenshot({ path: join(SHOTS, 'train-open-heads-arrive.png') });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('A.2 the Train tab counts layers and heads from 1 in its text, and says so once', async () => {
  const { page, w } = await open('#v=1&view=train&until=10&play=1');
  await waitRun(page, ['stopped']);
  const text = await page.getByTestId('train-view').innerText();
  assert.match(text, /counted from 1/);
  for (const bad of [/\bL0\b/, /\bL0 ?H/, /\bH0\b/, /layer 0\b/i, /head 0\b/i, /layer-0 head/, /\bh0\b/]) assert.doesNotMatch(text, bad, `found ${bad}`);
  assert.match(text, /L1 H1/);
  assert.match(text, /L2 H2/);
  // the ablate buttons' names too
  assert.equal(await page.getByTestId('train-ablate-0-0').getAttribute('aria-label'), 'Ablate layer 1 head 1');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('A.4 the loss chart handles a 10⁵-nat loss: log axis, tick labels that fit, no shelf claimed', async () => {
  const { page, w } = await open('#v=1&view=train&dmodel=128&qks=none&istd=1&until=50&play=1');
  await waitRun(page, ['stopped']);
  await page.waitForTimeout(300);
  const c = await page.evaluate(() => {
    const cv = document.querySelector('[data-testid=train-loss-chart]');
    return { ...cv.dataset, evalLoss: window.__trainTab.history.evalLoss };
  });
  assert.equal(c.yScale, 'log', 'losses spanning decades get a log axis');
  const [lo, hi] = c.yRange.split(' ').map(Number);
  const finite = c.evalLoss.filter(Number.isFinite);
  assert.ok(Math.max(...finite) <= hi && Math.min(...finite) >= lo, `every held-out loss inside the axis ${lo}…${hi}: ${finite}`);
  assert.ok(Number(c.yLabelRoom) >= 0, `tick labels clear of the axis title (room ${c.yLabelRoom})`);
  const caption = await page.locator('[data-testid=train-loss-chart] + .tr-caption').textContent();
  assert.doesNotMatch(caption, /Shelf/, caption);
  assert.match(caption, /logarithmic/);
  await page.locator('[data-testid=train-loss-chart]').screenshot({ path: join(SHOTS, 'train-saturated-loss.png') });
  assert.deepEqual(w.errors, []);
  await page.close();
});

// Every card's claim is checked on its run in Node (tests/web/train-cards.test.ts: the same module,
// the same bits as Chromium's Workers); here the headline card's link runs in the page, whose own
// figures and caption must say the same.
test('A.5 the induction card’s claim holds on the run its link starts in the page; every card states its claim', async () => {
  const { page, w } = await open('#v=1&view=train');
  await waitRun(page, ['idle']);
  const cards = await page.evaluate(() => Array.from(document.querySelectorAll('a[data-train-preset]'), (a) => ({ id: a.dataset.trainPreset, href: a.getAttribute('href'), claim: a.dataset.claim, figure: a.querySelector('.card-figure').textContent })));
  assert.equal(cards.length, 7);
  for (const c of cards) assert.ok(c.claim, `${c.id} states its claim as numbers`);
  await page.close();
  for (const card of cards.filter((c) => c.id === 'train-induction')) {
    const claim = JSON.parse(card.claim);
    // a fresh page per card (a hash change alone does not start a run)
    const { page, w } = await open(`${card.href}&play=1`);
    await waitRun(page, ['stopped', 'diverged'], 240000);
    const h = await page.evaluate(() => ({ ...window.__trainTab.phaseAt, step: window.__trainTab.step(), acc: window.__trainTab.history.evalAccuracy, loss: window.__trainTab.history.evalLoss }));
    const caption = await page.locator('[data-testid=train-loss-chart] + .tr-caption').textContent();
    const where = `${card.id} (“${card.figure}”)`;
    if (claim.finalAccuracy) {
      const a = h.acc.at(-1);
      assert.ok(a >= claim.finalAccuracy[0] && a <= claim.finalAccuracy[1], `${where}: final accuracy ${a}`);
    }
    if (claim.maxAccuracy !== undefined) assert.ok(Math.max(...h.acc) <= claim.maxAccuracy, `${where}: max accuracy ${Math.max(...h.acc)}`);
    if (claim.crossed90) assert.ok(h.crossed90 !== null && h.crossed90 >= claim.crossed90[0] && h.crossed90 <= claim.crossed90[1], `${where}: 0.9 at ${h.crossed90}`);
    if (claim.finalLoss) {
      const l = h.loss.at(-1);
      assert.ok(l >= claim.finalLoss[0] && l <= claim.finalLoss[1], `${where}: final loss ${l}`);
    }
    if (claim.startLossAbove !== undefined) assert.ok(h.loss[0] > claim.startLossAbove, `${where}: step-0 loss ${h.loss[0]}`);
    if (claim.shelf !== undefined) assert.equal(/Shelf at/.test(caption), claim.shelf, `${where}: ${caption}`);
    // The numbers a card quotes as "step ~N" are its run's crossings.
    const m = card.figure.match(/accuracy 0\.9 at step ~(\d+)/);
    if (m) assert.ok(Math.abs(h.crossed90 - Number(m[1])) <= 10, `${where}: says ~${m[1]}, run crossed at ${h.crossed90}`);
    console.log(`# card ${card.id}: step ${h.step}, accuracy ${h.acc.at(-1).toFixed(3)} (max ${Math.max(...h.acc).toFixed(3)}), held-out loss ${h.loss.at(-1).toPrecision(3)}, 0.9 at ${h.crossed90}`);
    assert.deepEqual(w.errors, []);
    await page.close();
  }
  // The one-layer card no longer says the loss stays on the shelf (it falls to ~2.4).
  assert.doesNotMatch(cards.find((c) => c.id === 'train-one-layer').figure, /stays on the shelf/);
});

test('A.6 one status line, true now; the non-finite notice names the gradient norm; readable numbers', async () => {
  let { page, w } = await open('#v=1&view=train&speed=10');
  await waitRun(page, ['idle']);
  await page.getByTestId('train-play').click();
  await waitRun(page, ['running'], 5000);
  const running = await page.getByTestId('train-status').textContent();
  assert.doesNotMatch(running, /Ready|Press Play/, `while training: ${running}`);
  assert.match(running, /Training/);
  await page.getByTestId('train-play').click();
  await waitRun(page, ['stopped']);
  await page.close();
  // lr 1000 after a stop at the stop step: the status must not keep saying "Stopped at the stop step"
  ({ page, w } = await open('#v=1&view=train&until=5&play=1'));
  await waitRun(page, ['stopped']);
  assert.match(await page.getByTestId('train-status').textContent(), /stop step/);
  await page.getByTestId('train-lr').fill('1000');
  await page.getByTestId('train-lr').dispatchEvent('change');
  await page.getByTestId('train-until').fill('0');
  await page.getByTestId('train-until').dispatchEvent('change');
  await page.getByTestId('train-play').click();
  await waitRun(page, ['diverged'], 60000);
  const status = await page.getByTestId('train-status').textContent();
  const notice = await page.getByTestId('train-notice').textContent();
  assert.doesNotMatch(status, /Stopped at the stop step|Ready/, status);
  assert.match(status, /not finite/);
  assert.match(notice, /gradient norm became non-finite/, notice);
  assert.doesNotMatch(notice, /\d{8,}/, `no long digit strings: ${notice}`);
  const loss = await page.getByTestId('train-loss').textContent();
  assert.doesNotMatch(loss, /\d{8,}/, `loss readout: ${loss}`);
  await page.screenshot({ path: join(SHOTS, 'train-diverged.png') });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('A.7 Compare “without √d_k” says why it can be faster here and links the saturated card', async () => {
  const { page, w } = await open('#v=1&view=train&cmp=noscale');
  await waitRun(page, ['idle']);
  const note = page.getByTestId('train-compare-note');
  assert.ok(await note.isVisible(), 'a note beside the comparison');
  const text = await note.textContent();
  assert.match(text, /start small/);
  assert.match(text, /saturat/);
  const href = await page.getByTestId('train-compare-note-link').getAttribute('href');
  const card = await page.locator('a[data-train-preset=train-noscale-large]').getAttribute('href');
  assert.equal(href, card);
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('A.8 phone: the "Heads now" table fits its box and no ablate button is clipped', async () => {
  const { page, w } = await open('#v=1&view=train&until=10&play=1', { width: 390, height: 844 });
  await waitRun(page, ['stopped']);
  const table = page.locator('table[data-testid=train-heads]');
  await table.scrollIntoViewIfNeeded();
  const g = await page.evaluate(() => {
    const t = document.querySelector('table[data-testid=train-heads]');
    const panel = t.closest('.tr-panel');
    const ps = getComputedStyle(panel);
    const box = panel.getBoundingClientRect();
    const inner = { left: box.left + parseFloat(ps.paddingLeft), right: box.right - parseFloat(ps.paddingRight) };
    const buttons = Array.from(t.querySelectorAll('button'), (b) => b.getBoundingClientRect());
    return { boxW: inner.right - inner.left, tableW: t.getBoundingClientRect().width, scrollW: t.scrollWidth, clientW: t.clientWidth, inner, buttons: buttons.map((r) => ({ l: r.left, r: r.right })) };
  });
  assert.ok(g.tableW <= g.boxW + 0.5, `table ${g.tableW} px in a ${g.boxW} px box`);
  assert.ok(g.scrollW <= g.clientW + 1, `nothing scrolled off (${g.scrollW} > ${g.clientW})`);
  for (const b of g.buttons) assert.ok(b.l >= g.inner.left - 0.5 && b.r <= g.inner.right + 0.5, `button ${b.l}…${b.r} inside ${g.inner.left}…${g.inner.right}`);
  await table.screenshot({ path: join(SHOTS, 'train-heads-phone.png') });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('A.11 K-composition legend 0…1; ablation baseline said; probe labels; PNG step; trained Heads link; log step axis', async () => {
  const { page, w } = await open('#v=1&view=train&until=300&play=1');
  await waitRun(page, ['stopped'], 300000);
  // K-composition: a legend with the fixed range
  const legend = page.getByTestId('train-kcomp-legend');
  assert.ok(await legend.isVisible());
  assert.match(await legend.locator('.legend').getAttribute('aria-label'), /from 0\.00 .* to 1\.00/);
  // ablation: the caption says what the deltas are against, before and after an ablation
  assert.match(await page.getByTestId('train-heads-caption').textContent(), /intact model/);
  await page.getByTestId('train-ablate-0-0').click();
  await page.waitForFunction(() => /already off/.test(document.querySelector('[data-testid=train-heads-caption]').textContent));
  await page.getByTestId('train-ablate-0-0').click();
  // probe labels: a token label never reads as the position beside it
  await page.getByTestId('train-probe').fill('0 1 2 3 0 1 2 3');
  await page.getByTestId('train-probe-use').click();
  await page.waitForFunction(() => /Probe: 8 tokens/.test(document.querySelector('[data-testid=train-status]').textContent));
  const rowLabels = await page.evaluate(() => Array.from(document.querySelector('.tr-head .hm-rows').querySelectorAll('.hm-rl'), (s) => s.textContent));
  assert.equal(rowLabels.length, 8);
  for (const [i, t] of rowLabels.entries()) assert.match(t, new RegExp(`^t\\d+·?${i}$`), `row ${i} label "${t}"`);
  // PNG of a map: named with the step of the picture (which the JSON's headScores.step also holds)
  await page.getByTestId('train-png-select').selectOption('layer-1-head-0');
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByTestId('train-export-png').click()]);
  const [json] = await Promise.all([page.waitForEvent('download'), page.getByTestId('train-export-json').click()]);
  const doc = JSON.parse(await (await import('node:fs/promises')).readFile(await json.path(), 'utf8'));
  assert.equal(png.suggestedFilename(), `layer-1-head-0-step-${doc.headScores.step}.png`);
  assert.equal(json.suggestedFilename(), `training-run-step-${doc.history.step.length}.json`);
  // log step axis: step 150 of a 300-step run moves from the left half's middle to well right
  const x150 = () => page.evaluate(() => Number(document.querySelector('[data-testid=train-loss-chart]').dataset.x150));
  const linear = await x150();
  await page.getByTestId('train-xlog').check();
  await page.waitForFunction(() => document.querySelector('[data-testid=train-loss-chart]').dataset.xScale === 'log');
  const log = await x150();
  assert.ok(log > 0.8 && log > linear + 0.3, `step 150 at ${linear} (linear) → ${log} (log) of the width`);
  await page.locator('[data-testid=train-loss-chart]').screenshot({ path: join(SHOTS, 'train-log-steps.png') });
  // the link copied from the trained Heads view carries neither until nor play
  await page.getByTestId('train-open-heads').click();
  await page.waitForSelector('[data-testid=trained-banner]:not([hidden])');
  await page.getByTestId('copy-link').click();
  await page.waitForFunction(() => window.__copied.length > 0);
  const link = await page.evaluate(() => window.__copied.at(-1));
  assert.doesNotMatch(link, /view=train/);
  assert.doesNotMatch(link, /[#&](until|play)=/, link);
  assert.deepEqual(w.errors, []);
  await page.close();
});
