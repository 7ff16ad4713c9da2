// The screenshot generator (not part of the default browser run: `npm run screenshots`):
// screenshots for people to look at (screenshots/*.png) and the recompute+redraw timing for
// T = 16, 64, 256 with 4 heads, read from the page's performance measures. No timed assertions:
// the numbers are printed (and written to screenshots/timing.json) for the report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { watch, waitReady, SHOTS, servedBrowser } from '../browser/helpers.mjs';

const env = servedBrowser();

const shot = (name) => join(SHOTS, name);

test('screenshots: desktop views, 375-px phone', async () => {
  const ctx = await env.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(env.server.url + '/');
  await waitReady(page);
  await page.screenshot({ path: shot('desktop-heads.png'), fullPage: true });
  for (const [view, hash] of [['mask', '#v=1&view=mask&pad=4'], ['scale', '#v=1&view=scale'], ['output', '#v=1&view=output']]) {
    await page.goto(env.server.url + '/' + hash);
    await waitReady(page);
    if (view === 'scale') await page.locator('.study-chart svg').waitFor();
    await page.screenshot({ path: shot(`desktop-${view}.png`), fullPage: true });
  }
  await page.goto(env.server.url + '/' + (await page.locator('a[data-preset="pad-neginf"]').getAttribute('href')));
  await waitReady(page);
  await page.screenshot({ path: shot('desktop-nan.png') });
  assert.deepEqual(w.errors, []);
  await ctx.close();

  const phone = await env.browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const p = await phone.newPage();
  await p.goto(env.server.url + '/');
  await waitReady(p);
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than a 375-px screen`);
  await p.screenshot({ path: shot('phone-375.png') });
  await p.screenshot({ path: shot('phone-375-full.png'), fullPage: true });
  await phone.close();
});

test('timing: recompute + redraw for T = 16, 64, 256 with 4 heads', async () => {
  const ctx = await env.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await ctx.newPage();
  await page.goto(env.server.url + '/');
  await waitReady(page);
  const results = {};
  for (const T of [16, 64, 256]) {
    const tokens = Array.from({ length: T }, (_, i) => `w${i}`).join(' ');
    const samples = [];
    for (let rep = 0; rep < 8; rep++) {
      // Change the seed each time so every step is a real recompute.
      await page.evaluate(({ tokens, seed }) => {
        const el = document.querySelector('[data-testid="tokens"]');
        el.value = tokens;
        el.dispatchEvent(new Event('input'));
        const s = document.querySelector('[data-testid="seed"]');
        s.value = String(seed);
        s.dispatchEvent(new Event('change'));
      }, { tokens, seed: rep + 1 });
      if (rep === 0) {
        await page.getByTestId('source').selectOption('random');
        await page.evaluate(() => {
          const h = document.querySelector('[data-testid="heads"]');
          h.value = '4';
          h.dispatchEvent(new Event('input'));
        });
        await page.locator('input[type=number]').nth(1).fill('64');
        await page.locator('input[type=number]').nth(1).dispatchEvent('change');
        await page.locator('input[type=number]').nth(2).fill('16');
        await page.locator('input[type=number]').nth(2).dispatchEvent('change');
      }
      await waitReady(page);
      await page.waitForTimeout(50);
      const last = await page.evaluate(() => window.__attentionPlayground.timings.at(-1));
      assert.equal(last.t, T);
      assert.equal(last.heads, 4);
      if (rep >= 2) samples.push(last); // the first runs warm up the wasm tiers
    }
    const med = (k) => samples.map((s) => s[k]).sort((a, b) => a - b)[Math.floor(samples.length / 2)];
    results[T] = { totalMs: +med('totalMs').toFixed(1), computeMs: +med('computeMs').toFixed(2), samples: samples.length };
  }
  const measures = await page.evaluate(() => performance.getEntriesByName('attention-playground:recompute+redraw').length);
  assert.ok(measures > 0);
  console.log('recompute+redraw (median, ms):', JSON.stringify(results));
  writeFileSync(shot('timing.json'), JSON.stringify({ note: 'median ms, 4 heads, d_model 64, d_k 16, Chromium headless on this machine', results }, null, 2) + '\n');
  await ctx.close();
});
