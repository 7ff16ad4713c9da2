// The timing lab opened from the lesson preset and in embed mode: its controls, a corrected hostile
// link, the sweep's rows. Nothing here asserts a time, so these run beside other files
// (timing.test.mjs keeps the fitted exponents, which run alone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SHOTS, servedBrowser } from './helpers.mjs';
import { open as openOn, runAndWait, sweepTable } from './timing-helpers.mjs';

const env = servedBrowser();

const shot = (name) => join(SHOTS, name);
const open = (path, viewport, waitFor) => openOn(env, path, viewport, waitFor);

test('the lesson preset opens the timing lab with the lesson loop settings; controls write the URL', async () => {
  const { page, context, errors } = await open('/', undefined, 'copy-link');
  const href = await page.locator('a[data-preset="timing-lesson"]').getAttribute('href');
  assert.match(href, /view=timing/);
  await page.goto(env.server.url + '/' + href);
  await page.getByTestId('timing-view').waitFor();
  assert.equal(await page.getByTestId('timing-mode').inputValue(), 'proj');
  assert.equal(await page.getByTestId('timing-tstart').inputValue(), '256');
  assert.equal(await page.getByTestId('timing-tend').inputValue(), '2048');
  assert.equal(await page.getByTestId('timing-dm').inputValue(), '512');
  assert.equal(await page.getByTestId('timing-causal').isChecked(), true);
  assert.equal(await page.getByTestId('timing-proj-note').isVisible(), true);
  // The lesson's loop runs through core.multiHeadAttention in the browser.
  await runAndWait(page);
  assert.equal(await page.getByTestId('timing-status').getAttribute('data-state'), 'done');
  const rows = await sweepTable(page);
  assert.deepEqual(rows.map((r) => r.t), [256, 512, 1024, 2048]);
  console.log('lesson loop 256→2048 (median ms):', JSON.stringify(rows.map((r) => [r.t, r.ms.naive, r.ms.tiled])));
  await page.screenshot({ path: shot('timing-lesson-preset.png'), fullPage: true });
  await page.getByTestId('timing-kernels').selectOption('tiled');
  await page.waitForFunction(() => location.hash.includes('tker=tiled'));
  // A hostile link is corrected with a notice, not obeyed.
  await page.goto(env.server.url + '/#v=1&view=timing&tstart=100&tend=99999999&th=-3&tker=%3Cb%3E');
  await page.getByTestId('timing-view').waitFor();
  assert.equal(await page.getByTestId('timing-tstart').inputValue(), '128');
  assert.equal(await page.getByTestId('timing-tend').inputValue(), '16384');
  assert.equal(await page.getByTestId('timing-heads').inputValue(), '1');
  assert.equal(await page.getByTestId('notices').isVisible(), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the timing lab renders in embed mode', async () => {
  const { page, context, errors } = await open('/?embed=1#v=1&view=timing&tstart=64&tend=256', { width: 900, height: 760 });
  assert.equal(await page.locator('html').evaluate((e) => e.classList.contains('embed')), true);
  assert.equal(await page.locator('[data-section="presets"]').isHidden(), true);
  assert.equal(await page.getByTestId('timing-run').isVisible(), true);
  await runAndWait(page);
  assert.ok((await page.locator('[data-testid="timing-row"]').count()) === 3);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `embed is ${overflow}px wider than its frame`);
  await page.screenshot({ path: shot('timing-embed.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});
