// The Decode tab's linear-attention panel in Chromium: a short state-against-cache timing run
// (T = 256 … 1024) reports both exponents and the bytes the module gives for each T (the state's
// the same at every T and equal to L·H_kv·(d_h² + d_h)·4, the cache's doubling with T), and
// exports them; a linear model trained in the tab, or in the Train tab (tnorm=linear), decodes with
// its recurrent state and gives the same tokens as the recompute path; 1280 px and a 390 px phone
// without sideways scrolling.
// Screenshots go to SHOTS/decode-state-*.png. No timed assertions (the exponents' values are
// measurements, written to the docs, not checked here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { watch, SHOTS, servedBrowser } from './helpers.mjs';

const env = servedBrowser();
const shot = (name) => join(SHOTS, name);

async function open(path, viewport) {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(env.server.url + path);
  await page.getByTestId('decode-view').waitFor();
  return { page, context, ...w };
}

test('timing the recurrent state against the K/V cache: exponents, bytes per T, export', async () => {
  const { page, context, errors } = await open('/#v=1&view=decode&dts=256&dte=1024', { width: 1280, height: 900 });
  const run = page.getByTestId('decode-state-run');
  await run.scrollIntoViewIfNeeded();
  await run.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="decode-state-status"]')?.dataset.state === 'done', null, { timeout: 240000 });
  const status = await page.getByTestId('decode-state-status').textContent();
  const ps = Number(await page.getByTestId('decode-state-exponent-state').getAttribute('data-value'));
  const pc = Number(await page.getByTestId('decode-state-exponent-cached').getAttribute('data-value'));
  console.log(`# ${status} (state p = ${ps}, cache p = ${pc})`);
  assert.ok(Number.isFinite(ps) && Number.isFinite(pc), status);
  const rows = await page.getByTestId('decode-state-row').evaluateAll((trs) => trs.map((tr) => ({
    t: Number(tr.dataset.t), bytes: [...tr.querySelectorAll('td[data-bytes]')].map((td) => Number(td.dataset.bytes)),
    ms: [...tr.querySelectorAll('td[data-ms]')].map((td) => `${td.dataset.mode} ${td.dataset.ms}`),
  })));
  console.log(`# rows ${JSON.stringify(rows)}`);
  assert.deepEqual(rows.map((r) => r.t), [256, 512, 1024]);
  // d_model 256, 8 heads (d_head 32), 2 layers, 8 K/V heads.
  const state = 2 * 8 * (32 * 32 + 32) * 4;
  for (const r of rows) {
    assert.equal(r.bytes[0], state, `state bytes at T = ${r.t}`);
    assert.equal(r.bytes[1], 2 * 2 * 8 * r.t * 32 * 4, `cache bytes at T = ${r.t}`);
  }
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('decode-export-json').click()]);
  const e = JSON.parse(await readFile(await dl.path(), 'utf8'));
  // numbers, not their text: a fitted slope of constant bytes is ±0 (toFixed prints -0.000)
  assert.ok(Math.abs(e.state.exponents.state - ps) < 5e-4, `exported exponent ${e.state.exponents.state} vs drawn ${ps}`);
  assert.deepEqual(e.state.rows.map((r) => r.stateBytes), [state, state, state]);
  await page.getByTestId('decode-state-chart').scrollIntoViewIfNeeded();
  await page.locator('.decode-state').screenshot({ path: shot('decode-state-timing.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a linear model trained in the tab: its recurrent state gives the recompute path\'s tokens', async () => {
  const { page, context, errors } = await open('/#v=1&view=decode', { width: 1280, height: 900 });
  // The default model first (softmax): the panel offers a linear one.
  const train = page.getByTestId('decode-train-linear');
  await train.waitFor({ state: 'visible', timeout: 120000 });
  assert.match(await page.getByTestId('decode-state-model').textContent(), /softmax attention, which has no recurrent form/);
  await train.click();
  const check = page.getByTestId('decode-state-check');
  await check.waitFor({ state: 'visible', timeout: 240000 });
  const text = await check.textContent();
  console.log(`# ${text}`);
  assert.equal(await check.getAttribute('data-same'), '1', text);
  assert.match(text, /Same tokens as recompute: checked/);
  assert.match(await page.getByTestId('decode-model').textContent(), /linear attention/);
  // The stepper still shows the K/V cache of the same model, identical to recompute.
  assert.equal(await page.getByTestId('decode-agree').getAttribute('data-identical'), '1');
  await page.locator('.decode-state').scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot('decode-state-linear.png'), fullPage: false });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a linear model from the Train tab (tnorm=linear): the Decode tab checks its state against recompute', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { errors } = watch(page);
  await page.goto(env.server.url + '/#v=1&view=train&tnorm=linear&until=30&play=1');
  await page.waitForFunction(() => window.__trainTab?.published?.() === 30, null, { timeout: 120000 });
  await page.getByRole('tab', { name: 'Decode' }).click();
  const check = page.getByTestId('decode-state-check');
  await check.waitFor({ state: 'visible', timeout: 120000 });
  assert.match(await page.getByTestId('decode-model').textContent(), /Train tab’s \(step 30, linear attention\)/);
  assert.equal(await page.getByTestId('decode-state-model').getAttribute('data-linear'), '1');
  assert.equal(await check.getAttribute('data-same'), '1', await check.textContent());
  assert.equal(await page.getByTestId('decode-train-linear').isHidden(), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a two-layer relu model from the Train tab decodes from its K/V cache, the same as recomputing', async () => {
  // relu divides by the model's context length, not by the tokens so far: cached keys and values
  // stay valid with any number of layers (the Decode tab used to refuse this model).
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { errors } = watch(page);
  await page.goto(env.server.url + '/#v=1&view=train&tnorm=relu&until=10&play=1');
  await page.waitForFunction(() => window.__trainTab?.published?.() === 10, null, { timeout: 120000 });
  await page.getByRole('tab', { name: 'Decode' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid="decode-agree"]')?.dataset.identical !== undefined
    && !document.querySelector('[data-testid="decode-step"]').disabled, null, { timeout: 120000 });
  assert.match(await page.getByTestId('decode-model').textContent(), /Train tab’s \(step 10\)/);
  const agree = page.getByTestId('decode-agree');
  assert.equal(await agree.getAttribute('data-identical'), '1', await agree.textContent());
  assert.equal(await page.getByTestId('decode-error').isVisible(), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the panel on a 390 px phone: no sideways scrolling', async () => {
  const { page, context, errors } = await open('/#v=1&view=decode&dts=256&dte=512', { width: 390, height: 844 });
  const run = page.getByTestId('decode-state-run');
  await run.scrollIntoViewIfNeeded();
  await run.click();
  await page.waitForFunction(() => document.querySelector('[data-testid="decode-state-status"]')?.dataset.state === 'done', null, { timeout: 240000 });
  const ov = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(ov <= 0, `phone page is ${ov}px wider than the screen`);
  await page.locator('.decode-state').screenshot({ path: shot('decode-state-phone.png') });
  assert.deepEqual(errors, []);
  await context.close();
});
