// The Decode tab's full timing sweep (T = 256 … 4096, d_model 256, 8 heads, 2 layers) for people
// to look at and for the report: screenshots/decode-sweep.png and decode-sweep.json (per-step
// medians with and without the KV cache, fitted exponents, cache bytes for MHA / GQA / MQA as
// the module reports them, the heap). No timed assertions; a few minutes on a loaded machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { watch, SHOTS, servedBrowser } from '../browser/helpers.mjs';

const env = servedBrowser();

test('decode: full sweep 256 … 4096', async () => {
  const ctx = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(env.server.url + '/#v=1&view=decode');
  await page.waitForFunction(() => document.querySelector('[data-testid="decode-agree"]')?.dataset.identical !== undefined, null, { timeout: 120000 });
  const load = loadavg()[0];
  await page.getByTestId('decode-run').click();
  await page.waitForFunction(() => ['done', 'failed'].includes(document.querySelector('[data-testid="decode-status"]').dataset.state), null, { timeout: 1200000 });
  assert.equal(await page.getByTestId('decode-status').getAttribute('data-state'), 'done');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('decode-export-json').click()]);
  const e = JSON.parse(await readFile(await dl.path(), 'utf8'));
  const out = { timing: e.timing, exponents: e.exponents, cacheBytes: e.cacheBytes, total: await page.getByTestId('decode-total').textContent(), loadAverage: [load, loadavg()[0]], cpus: cpus().length };
  console.log(JSON.stringify(out, null, 1));
  writeFileSync(join(SHOTS, 'decode-sweep.json'), JSON.stringify(out, null, 1) + '\n');
  await page.getByTestId('decode-view').screenshot({ path: join(SHOTS, 'decode-sweep.png') });
  assert.deepEqual(w.errors, []);
  await ctx.close();
});
