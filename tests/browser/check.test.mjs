// The Check readout (float32 SIMD vs float64 scalar, tiled vs naive, with the tolerance
// each is held to), computed live by the core in the compute Worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { waitReady, servedBrowser, SHOTS, reusedTab } from './helpers.mjs';

const env = servedBrowser();

// Each test's page is a fresh load, in the tab the last one used (reusedTab).
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 } });
async function open(path, viewport) {
  const opened = await tab.load(env.server.url + path, viewport);
  await waitReady(opened.page);
  return opened;
}

async function readout(page) {
  const item = async (id) => {
    const l = page.getByTestId(id);
    return { maxAbs: Number(await l.getAttribute('data-max-abs')), tolerance: Number(await l.getAttribute('data-tolerance')), text: await l.textContent() };
  };
  return { f32: await item('check-f32'), tiled: await item('check-tiled') };
}

test('the lesson-2 preset shows the Check with every computation, within tolerance', async () => {
  const { page, errors } = await open('/');
  await page.locator('a[data-preset="lesson2"]').click();
  await page.waitForFunction(() => window.__attentionPlayground.state().model.tokens.length === 6);
  await waitReady(page);
  await page.getByTestId('check-f32').waitFor();
  const r = await readout(page);
  console.log('Check, lesson2 preset:', JSON.stringify(r));
  for (const k of ['f32', 'tiled']) {
    assert.ok(r[k].maxAbs >= 0 && r[k].maxAbs <= r[k].tolerance, `${k}: ${JSON.stringify(r[k])}`);
    assert.match(r[k].text, /max \|Δ\| .* \(held to ≤ .*\) ✓/);
  }
  assert.equal(await page.getByTestId('check-run').isHidden(), true);
  // The preset draws with NumPy's generator, and the control says so.
  assert.equal(await page.getByTestId('generator').inputValue(), 'numpy');
  await page.getByTestId('check').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'check-lesson2.png'), fullPage: false });
  assert.deepEqual(errors, []);
});

test('a large state offers the Check on request, and a change clears a stale one', async () => {
  const toks = Array.from({ length: 256 }, (_, i) => `w${i}`).join('+');
  const { page, errors } = await open(`/#v=1&src=random&tokens=${toks}&heads=8&kv=8&dm=64&dk=64`);
  const run = page.getByTestId('check-run');
  assert.equal(await run.isVisible(), true);
  assert.match(await page.getByTestId('check-body').textContent(), /not run for this size/);
  await run.click();
  await page.getByTestId('check-f32').waitFor({ timeout: 20000 });
  const r = await readout(page);
  console.log('Check, T=256, 8 heads, d_k 64:', JSON.stringify(r));
  for (const k of ['f32', 'tiled']) assert.ok(r[k].maxAbs <= r[k].tolerance, `${k}: ${JSON.stringify(r[k])}`);
  await page.getByTestId('check').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'check-on-request.png'), fullPage: false });
  // Another seed: the readout goes back to "not run", never shows the old state's figures.
  await page.getByTestId('seed').fill('5');
  await page.getByTestId('seed').press('Enter');
  await page.waitForFunction(() => location.hash.includes('seed=5'));
  await waitReady(page);
  assert.equal(await page.getByTestId('check-f32').count(), 0);
  assert.equal(await run.isVisible(), true);
  assert.deepEqual(errors, []);
});
