// The timing lab in Chromium: a short sweep (T = 64 → 512) reports a fitted exponent near 2,
// Cancel stops a running sweep, the share link opens the view (the lesson preset and embed mode:
// timing-lab.test.mjs). Screenshots go to screenshots/timing-*.png for people to look at.
// No timed assertions beyond "the exponent is between 1.5 and 2.5".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, servedBrowser } from './helpers.mjs';
import { open as openOn, runAndWait, sweepTable } from './timing-helpers.mjs';

const env = servedBrowser();

const shot = (name) => join(SHOTS, name);
const open = (path, viewport, waitFor) => openOn(env, path, viewport, waitFor);

test('a short sweep from a share link reports an exponent between 1.5 and 2.5', async () => {
  // 8 heads, so that every point from T = 64 up is well above the fit's 0.5 ms floor and one
  // noisy point on this shared 2-core machine cannot swing a fit over only two points.
  const { page, context, errors } = await open('/#v=1&view=timing&tstart=64&tend=512&th=8');
  assert.equal(await page.getByRole('tab', { name: 'Timing lab' }).getAttribute('aria-selected'), 'true');
  // The share link's settings reached the controls; the heatmap controls are out of the way.
  assert.equal(await page.getByTestId('timing-tstart').inputValue(), '64');
  assert.equal(await page.getByTestId('timing-tend').inputValue(), '512');
  assert.equal(await page.locator('aside.controls').isVisible(), false);
  await runAndWait(page);
  assert.equal(await page.getByTestId('timing-status').getAttribute('data-state'), 'done');
  const rows = await sweepTable(page);
  assert.deepEqual(rows.map((r) => r.t), [64, 128, 256, 512]);
  for (const r of rows) for (const k of ['naive', 'tiled']) assert.ok(r.ms[k] > 0, `T=${r.t} ${k}: ${r.ms[k]}`);
  const exp = page.getByTestId('timing-exponent');
  const p = Number(await exp.getAttribute('data-value'));
  console.log('sweep 64→512 (median ms):', JSON.stringify(rows), 'exponent', p,
    'tiled', await page.getByTestId('timing-exponent-tiled').getAttribute('data-value'));
  assert.ok(p >= 1.5 && p <= 2.5, `fitted exponent ${p}`);
  // The chart, the reference line and the memory panel are drawn. Memory per kernel: the core's
  // estimate, and the measured memory of the instance that ran only that kernel. The naive
  // kernel really holds its 8 × 512² float32 weights (8 MiB) and more, the tiled one far less.
  assert.equal(await page.locator('[data-testid="timing-chart"] .ref').count(), 1);
  const bytes = async (id) => Number(await page.getByTestId(id).getAttribute('data-bytes'));
  const mem = { naiveEst: await bytes('mem-naive-estimate'), naive: await bytes('mem-naive-measured'), tiledEst: await bytes('mem-tiled-estimate'), tiled: await bytes('mem-tiled-measured') };
  console.log('memory at T = 512, 8 heads (bytes):', JSON.stringify(mem));
  assert.ok(mem.naiveEst >= 8 * 2 ** 20 && mem.naive >= mem.naiveEst, JSON.stringify(mem));
  assert.ok(mem.tiled < mem.naive && mem.tiledEst < mem.naiveEst, JSON.stringify(mem));
  await page.getByTestId('timing-memory').screenshot({ path: shot('timing-memory.png') });
  await page.screenshot({ path: shot('timing-desktop.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Cancel stops a running sweep promptly and no further rows appear', async () => {
  const { page, context, errors } = await open('/#v=1&view=timing&tstart=256&tend=16384&th=2');
  await page.getByTestId('timing-run').click();
  // Wait until the sweep is measuring (a first row or a progress message past warm-up).
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="timing-row"]').length >= 1, null, { timeout: 60000 });
  await page.getByTestId('timing-cancel').click();
  const status = page.getByTestId('timing-status');
  assert.equal(await status.getAttribute('data-state'), 'cancelled');
  assert.match(await status.textContent(), /cancelled/i);
  const n = await page.locator('[data-testid="timing-row"]').count();
  await page.waitForTimeout(2000);
  assert.equal(await page.locator('[data-testid="timing-row"]').count(), n);
  assert.equal(await status.getAttribute('data-state'), 'cancelled');
  assert.equal(await page.getByTestId('timing-run').isEnabled(), true);
  assert.equal(await page.getByTestId('timing-cancel').isEnabled(), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a 2-worker sweep (one head split by query rows) completes and reports an exponent', async () => {
  const { page, context, errors } = await open('/#v=1&view=timing&tstart=128&tend=1024&tker=tiled&tcausal=1&tw=2');
  assert.equal(await page.getByTestId('timing-workers').inputValue(), '2');
  const note = page.getByTestId('timing-workers-note');
  assert.match(await note.textContent(), /hardwareConcurrency/);
  assert.match(await note.textContent(), /crossOriginIsolated = (true|false)/);
  assert.match(await note.textContent(), /COOP\/COEP/);
  await runAndWait(page);
  assert.equal(await page.getByTestId('timing-status').getAttribute('data-state'), 'done');
  assert.match(await page.locator('.timing-caption').textContent(), /split across 2 workers \(by query rows\)/);
  const rows = await sweepTable(page);
  assert.deepEqual(rows.map((r) => r.t), [128, 256, 512, 1024]);
  const p = Number(await page.getByTestId('timing-exponent-tiled').getAttribute('data-value'));
  console.log('2-worker sweep 128→1024 tiled causal (median ms):', JSON.stringify(rows.map((r) => [r.t, r.ms.tiled])), 'exponent', p,
    'cores', await note.getAttribute('data-cores'), 'isolated', await note.getAttribute('data-isolated'));
  assert.ok(Number.isFinite(p) && p > 0.5 && p < 3, `fitted exponent ${p}`);
  await page.screenshot({ path: shot('timing-workers.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test('Cancel ends every worker of a split sweep (timing and part workers), at any moment, every time', async () => {
  // Cancel right after Run (the workers are still starting), during the warm-up, and mid-sweep;
  // after each the browser lists only the heatmaps' compute worker again. (Once, when the part
  // workers were nested in the timing worker and ended only through it, 2 workers outlived Cancel;
  // now the page starts every worker of a sweep and terminates each one itself.)
  const { page, context, errors } = await open('/#v=1&view=timing&tstart=128&tend=16384&tker=tiled&tcausal=1&tw=2');
  const status = page.getByTestId('timing-status');
  const before = page.workers().length;
  for (const [when, wait] of [['at once', 0], ['in the warm-up', 400], ['mid-sweep', -1], ['at once', 0], ['mid-sweep', -1]]) {
    await page.getByTestId('timing-run').click();
    if (wait > 0) await page.waitForTimeout(wait);
    if (wait < 0) await page.waitForFunction(() => document.querySelectorAll('[data-testid="timing-row"]').length >= 1, null, { timeout: 60000 });
    const during = page.workers().length;
    await page.getByTestId('timing-cancel').click();
    assert.equal(await status.getAttribute('data-state'), 'cancelled');
    const deadline = Date.now() + 3000;
    while (page.workers().length > before && Date.now() < deadline) await page.waitForTimeout(50);
    console.log(`cancel ${when}: workers ${before} before, ${during} while running, ${page.workers().length} after`, page.workers().map((w) => w.url().replace(/.*\//, "")));
    if (wait < 0) assert.ok(during >= before + 3, `mid-sweep: ${during} workers (timing + 2 parts expected)`);
    if (page.workers().length > before) {
      const probe = await Promise.all(page.workers().map((w) => Promise.race([w.evaluate(() => `alive: ${self.name}`).catch((e) => `gone: ${String(e).slice(0, 60)}`), new Promise((r) => setTimeout(() => r('no answer in 1 s'), 1000))])));
      console.log('probe', probe);
    }
    assert.equal(page.workers().length, before, `cancel ${when}: workers still alive`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('tker=linear times linear attention next to tiled softmax: slope about 1 against about 2', async () => {
  // T = 512 … 8192, one head: four doublings above the sizes where fixed per-call costs flatten
  // the curves. No timed assertion beyond the slopes, and wide bounds: on this shared 2-core
  // machine (load average 12 while other builds ran) single points moved by ×3, and softmax's
  // fit came out at 1.52 twice. Linear attention's work is T·d_k·d_v (p ≈ 1), softmax's T²·d_k
  // (p ≈ 2); what the test insists on is the gap between them.
  const { page, context, errors } = await open('/#v=1&view=timing&tker=linear&tstart=512&tend=8192', { width: 1280, height: 900 });
  assert.equal(await page.getByTestId('timing-kernels').inputValue(), 'linear');
  await runAndWait(page, 240000);
  assert.equal(await page.getByTestId('timing-status').getAttribute('data-state'), 'done');
  const rows = await sweepTable(page);
  assert.deepEqual(rows.map((r) => r.t), [512, 1024, 2048, 4096, 8192]);
  for (const r of rows) {
    assert.deepEqual(Object.keys(r.ms).sort(), ['linear', 'tiled'], `T=${r.t}: columns ${Object.keys(r.ms)}`);
    for (const k of ['linear', 'tiled']) assert.ok(r.ms[k] > 0, `T=${r.t} ${k}: ${r.ms[k]}`);
  }
  const cmp = page.getByTestId('timing-compare');
  const lin = Number(await cmp.getAttribute('data-linear'));
  const soft = Number(await cmp.getAttribute('data-softmax'));
  console.log('linear vs tiled softmax, T = 512 → 8192 (median ms):', JSON.stringify(rows), 'p linear', lin, 'p softmax', soft);
  // The comparison line and the headline show the same fits as the session.
  assert.equal(Number(await page.getByTestId('timing-exponent-linear').getAttribute('data-value')), lin);
  assert.equal(Number(await page.getByTestId('timing-exponent-tiled').getAttribute('data-value')), soft);
  assert.match(await cmp.textContent(), new RegExp(`Linear attention p = ${lin.toFixed(2)} .* tiled softmax p = ${soft.toFixed(2)}`));
  assert.match(await page.getByTestId('timing-status').textContent(), new RegExp(`linear attention ${lin.toFixed(2)}, tiled softmax ${soft.toFixed(2)}`));
  assert.ok(lin >= 0.6 && lin <= 1.5, `linear attention's fitted exponent ${lin}`);
  assert.ok(soft >= 1.4 && soft <= 2.6, `tiled softmax's fitted exponent ${soft}`);
  assert.ok(soft - lin >= 0.4, `softmax ${soft} vs linear ${lin}`);
  // Two reference lines (×4 and ×2 per doubling), a linear series, its memory estimate.
  assert.equal(await page.locator('[data-testid="timing-chart"] .ref').count(), 2);
  assert.ok((await page.locator('[data-testid="timing-chart"] .dot.k-linear').count()) === rows.length);
  assert.ok(Number(await page.getByTestId('mem-linear-estimate').getAttribute('data-bytes')) > 0);
  await page.screenshot({ path: shot('timing-linear-1280.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `sideways overflow at 390 px: ${overflow}`);
  await page.screenshot({ path: shot('timing-linear-390.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});
