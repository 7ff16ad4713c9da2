// The Train tab's "Which variants form induction heads?" card in Chromium: the table is there
// with every row, the page does not scroll sideways at 1280 or 390 px (the table scrolls in its
// own box), and "Run this row" starts that row's run at once with the row's settings, giving the
// same loss bits as the module under Node (config A with normalizer relu, seed 0, data seed 0).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { join } from 'node:path';
import { ROOT, SHOTS, servedBrowser, watch } from './helpers.mjs';

const env = servedBrowser();

test('variants card: rows, layout at 1280 and 390 px, Run this row trains that row live', async () => {
  const dir = join(ROOT, 'build', 'wasm');
  const { default: create } = await import(join(dir, 'attn_train.mjs'));
  const lib = await create({ wasmBinary: fs.readFileSync(join(dir, 'attn_train.wasm')) });
  const tr = lib.createTrainer({ task: 'induction', normalizer: 'relu', seed: 0, dataSeed: 0 });
  const want = Array.from(tr.train(20).loss);
  tr.delete();
  for (const width of [1280, 390]) {
    const page = await env.browser.newPage({ viewport: { width, height: 900 } });
    const w = watch(page);
    await page.goto(`${env.server.url}/#v=1&view=train`);
    const card = page.getByTestId('train-variants');
    await card.waitFor();
    assert.equal(await card.locator('tbody tr').count(), 9);
    assert.equal(await page.getByTestId('train-variant-crossed-alibi').textContent(), '0/5');
    const [sw, iw] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(sw <= iw, `page scrolls sideways at ${width}px (${sw} > ${iw})`);
    await card.scrollIntoViewIfNeeded();
    fs.mkdirSync(SHOTS, { recursive: true });
    await card.screenshot({ path: join(SHOTS, `train-variants-card-${width}.png`) });
    if (width === 1280) {
      await page.getByTestId('train-variant-run-relu').click();
      await page.waitForFunction(() => window.__trainTab && window.__trainTab.step() >= 20, null, { timeout: 120000, polling: 100 });
      assert.match(await page.evaluate(() => location.hash), /tnorm=relu/);
      const got = await page.evaluate(() => Array.from(window.__trainTab.history.loss.slice(0, 20)));
      assert.deepEqual(got, want, 'the live run of the row has the module\'s loss bits');
    }
    assert.deepEqual(w.errors, []);
    await page.close();
  }
});
