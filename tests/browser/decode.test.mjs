// The Decode tab in Chromium: stepping through a prompt reproduces the copy (the continuation of
// s is predicted), cached and recompute decoding give identical tokens, a short timing run
// (T = 64 … 256) reports both exponents and exports them, Cancel stops a long run, share links
// round-trip, bad settings are corrected with a notice, embed and a 375 px phone render, and the
// Train tab's published model is the one decoded.
// Screenshots go to SHOTS/decode-*.png. No timed assertions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { watch, SHOTS, servedBrowser } from './helpers.mjs';

const env = servedBrowser();
const shot = (name) => join(SHOTS, name);

async function open(path, viewport = { width: 1366, height: 900 }) {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(env.server.url + path);
  await page.getByTestId('decode-view').waitFor();
  return { page, context, ...w };
}

/** Wait for the model (trained here on first use) and the decoded trajectory. */
async function decoded(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="decode-agree"]')?.dataset.identical !== undefined
    && !document.querySelector('[data-testid="decode-step"]').disabled, null, { timeout: 90000 });
}

const step = (page) => page.getByTestId('decode-view').getAttribute('data-step').then(Number);

async function exportJson(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('decode-export-json').click()]);
  return JSON.parse(await readFile(await dl.path(), 'utf8'));
}

test('stepping through [noise, s, first part of s] reproduces the copy; cached == recompute', async () => {
  const { page, context, errors } = await open('/#v=1&view=decode');
  assert.equal(await page.getByRole('tab', { name: 'Decode' }).getAttribute('aria-selected'), 'true');
  await decoded(page);
  assert.match(await page.getByTestId('decode-model').textContent(), /default induction model/);
  const agree = page.getByTestId('decode-agree');
  assert.equal(await agree.getAttribute('data-identical'), '1', await agree.textContent());
  const gen = Number(await agree.getAttribute('data-generated'));
  const copied = Number(await agree.getAttribute('data-copied'));
  assert.ok(gen >= 3 && copied / gen >= 0.8, `${copied} of ${gen} generated tokens copied`);

  // The step shown starts at the end of the prompt; each Step appends one token: the prediction
  // is the copy, and every K/V cache picture gains one column.
  const data = await exportJson(page);
  const promptLen = data.config.prompt.promptLen;
  assert.equal(await step(page), promptLen);
  const pred = page.getByTestId('decode-prediction');
  assert.equal(await pred.getAttribute('data-predicted'), await pred.getAttribute('data-expected'), 'the next token of s is predicted');
  const cols0 = Number(await page.getByTestId('decode-k-0-0').getAttribute('data-cols'));
  await page.getByTestId('decode-step').click();
  await page.waitForFunction((n) => document.querySelector('[data-testid="decode-view"]').dataset.step === String(n), promptLen + 1);
  assert.equal(Number(await page.getByTestId('decode-k-0-0').getAttribute('data-cols')), cols0 + 1);
  assert.equal(Number(await page.getByTestId('decode-v-1-1').getAttribute('data-cols')), cols0 + 1);
  // Keyboard: the step buttons are buttons; the slider takes arrow keys.
  await page.getByTestId('decode-slider').focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((n) => document.querySelector('[data-testid="decode-view"]').dataset.step === String(n), promptLen + 2);

  await page.getByTestId('decode-step').focus();
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((n) => document.querySelector('[data-testid="decode-view"]').dataset.step === String(n), promptLen + 1);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((n) => document.querySelector('[data-testid="decode-view"]').dataset.step === String(n), promptLen + 2);

  // Export: the steps with the expected tokens; the generated part equals the expected copy.
  const e = await exportJson(page);
  assert.equal(e.steps.length, data.config.model.seqLen);
  const g = e.steps.filter((s) => s.source === 'generated' && s.expected !== null);
  assert.equal(g.filter((s) => s.token === s.expected).length, copied);
  assert.deepEqual(Object.keys(e).sort(), ['cacheBytes', 'config', 'exponents', 'steps', 'timing']);
  assert.equal(e.cacheBytes.steppingModel, 2 * 2 * 2 * 32 * 32 * 4, 'config A: 2 · L 2 · H_kv 2 · T 32 · d_head 32 · 4');

  // Cache off: the same tokens (the strip), recompute pictures with every earlier row again.
  const toks = await page.$$eval('[data-testid="decode-tokens"] li', (ls) => ls.map((l) => l.dataset.token));
  await page.getByTestId('decode-cache').uncheck();
  await page.waitForFunction(() => location.hash.includes('dcache=0'));
  assert.deepEqual(await page.$$eval('[data-testid="decode-tokens"] li', (ls) => ls.map((l) => l.dataset.token)), toks);
  assert.match(await page.getByTestId('decode-heads').textContent(), /Recompute/);
  assert.match(await page.getByTestId('decode-flops').textContent(), /recompute/);
  await page.locator('.decode-stepper').screenshot({ path: shot('decode-recompute.png') });
  // PNG: the step's pictures.
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByTestId('decode-export-png').click()]);
  assert.match(png.suggestedFilename(), /^decode-step-\d+\.png$/);
  const bytes = await readFile(await png.path());
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a short timing run reports both exponents, exports them; Cancel stops a long run', async () => {
  const { page, context, errors } = await open('/#v=1&view=decode&dts=64&dte=256');
  assert.equal(await page.getByTestId('decode-tstart').inputValue(), '64');
  await page.getByTestId('decode-run').click();
  await page.waitForFunction(() => ['done', 'failed'].includes(document.querySelector('[data-testid="decode-status"]').dataset.state), null, { timeout: 180000 });
  assert.equal(await page.getByTestId('decode-status').getAttribute('data-state'), 'done', await page.getByTestId('decode-status').textContent());
  const rows = await page.$$eval('[data-testid="decode-row"]', (rs) => rs.map((r) => Number(r.dataset.t)));
  assert.deepEqual(rows, [64, 128, 256]);
  const pc = Number(await page.getByTestId('decode-exponent-cached').getAttribute('data-value'));
  const pr = Number(await page.getByTestId('decode-exponent-recompute').getAttribute('data-value'));
  assert.ok(Number.isFinite(pc) && Number.isFinite(pr), `exponents ${pc}, ${pr}`);
  const e = await exportJson(page);
  // The page shows each exponent to 3 decimals (data-value); the export keeps it whole. Compared
  // as numbers: an exponent of −0.0002 reads "-0.000" in the export and −0 → "0.000" on the page.
  assert.ok(Math.abs(e.exponents.cached - pc) <= 5e-4, `${e.exponents.cached} vs ${pc}`);
  assert.ok(Math.abs(e.exponents.recompute - pr) <= 5e-4, `${e.exponents.recompute} vs ${pr}`);
  assert.deepEqual(e.timing.map((r) => r.T), [64, 128, 256]);
  for (const r of e.timing) assert.ok(r.cachedMs > 0 && r.recomputeMs > 0, JSON.stringify(r));
  // The module's cache bytes for MHA / GQA / MQA equal 2 · L · H_kv · T · d_head · 4 at T = 256.
  assert.deepEqual(e.cacheBytes.variants.map((v) => [v.name, v.kvHeads, v.reported]),
    [['MHA', 8, 2 * 2 * 8 * 256 * 32 * 4], ['GQA', 2, 2 * 2 * 2 * 256 * 32 * 4], ['MQA', 1, 2 * 2 * 1 * 256 * 32 * 4]]);
  assert.ok(e.cacheBytes.heapBytes > 0);
  console.log('decode timing 64…256:', JSON.stringify(e.timing), 'exponents', JSON.stringify(e.exponents));
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('decode-export-csv').click()]);
  assert.match(await readFile(await csv.path(), 'utf8'), /^section,t_or_T/);
  await page.getByTestId('decode-view').screenshot({ path: shot('decode-desktop.png') });

  // A long run, cancelled once it is measuring.
  await page.getByTestId('decode-tend').selectOption('4096');
  await page.getByTestId('decode-run').click();
  await page.waitForFunction(() => /T = /.test(document.querySelector('[data-testid="decode-status"]').textContent), null, { timeout: 60000 });
  await page.getByTestId('decode-cancel').click();
  assert.equal(await page.getByTestId('decode-status').getAttribute('data-state'), 'cancelled');
  assert.equal(await page.getByTestId('decode-run').isEnabled(), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('share link round trip; bad settings corrected with a notice', async () => {
  const { page, context } = await open('/#v=1&view=decode');
  await decoded(page);
  await page.getByTestId('decode-seq').fill('5');
  await page.getByTestId('decode-seq').press('Enter');
  await page.getByTestId('decode-keep').fill('3');
  await page.getByTestId('decode-keep').press('Enter');
  await decoded(page);
  await page.getByTestId('decode-step').click();
  await page.getByTestId('decode-cache').uncheck();
  await page.waitForFunction(() => location.hash.includes('dcache=0'));
  const hash = new URL(page.url()).hash;
  for (const k of ['view=decode', 'dseq=5', 'dkeep=3', 'dstep=', 'dcache=0']) assert.ok(hash.includes(k), `${k} in ${hash}`);
  const s1 = await step(page);
  const toks = await page.$$eval('[data-testid="decode-tokens"] li', (ls) => ls.map((l) => l.dataset.token));
  await context.close();

  const b = await open('/' + hash);
  await decoded(b.page);
  assert.equal(await step(b.page), s1);
  assert.equal(await b.page.getByTestId('decode-seq').inputValue(), '5');
  assert.equal(await b.page.getByTestId('decode-keep').inputValue(), '3');
  assert.equal(await b.page.getByTestId('decode-cache').isChecked(), false);
  assert.deepEqual(await b.page.$$eval('[data-testid="decode-tokens"] li', (ls) => ls.map((l) => l.dataset.token)), toks);
  await b.context.close();

  const c = await open('/#v=1&view=decode&dkeep=99&dts=100');
  assert.equal(await c.page.getByTestId('notices').isVisible(), true);
  const text = await c.page.getByTestId('notices').textContent();
  assert.match(text, /prompt tokens of the second copy:? 99 is outside 1…8; using 8/);
  assert.match(text, /first T:? 100 is not a power of two/);
  assert.equal(await c.page.getByTestId('decode-keep').inputValue(), '8');
  await c.context.close();
});

test('embed mode and a 375 px phone render the tab without sideways scrolling', async () => {
  const a = await open('/?embed=1#v=1&view=decode', { width: 900, height: 760 });
  assert.equal(await a.page.locator('html').evaluate((e) => e.classList.contains('embed')), true);
  await decoded(a.page);
  const ov = await a.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(ov <= 0, `embed is ${ov}px wider than its frame`);
  assert.deepEqual(a.errors, []);
  await a.context.close();

  const p = await open('/#v=1&view=decode', { width: 375, height: 812 });
  await decoded(p.page);
  const ov2 = await p.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(ov2 <= 0, `phone page is ${ov2}px wider than the screen`);
  await p.page.getByTestId('decode-tokens').scrollIntoViewIfNeeded();
  await p.page.evaluate(() => document.querySelector('[data-testid="decode-view"] section').scrollIntoView());
  await p.page.screenshot({ path: shot('decode-phone.png') });
  assert.deepEqual(p.errors, []);
  await p.context.close();
});

test('the Train tab’s model is the one the Decode tab decodes', async () => {
  // The Train tab trains 30 steps and publishes its model; the Decode tab then loads that model.
  const ctx = await env.browser.newContext({ viewport: { width: 1366, height: 900 } });
  const p = await ctx.newPage();
  const w = watch(p);
  await p.goto(env.server.url + '/#v=1&view=train&until=30&play=1');
  await p.waitForFunction(() => window.__trainTab?.published?.() === 30, null, { timeout: 90000 });
  await p.getByRole('tab', { name: 'Decode' }).click();
  await p.getByTestId('decode-view').waitFor();
  await p.waitForFunction(() => document.querySelector('[data-testid="decode-model"]')?.dataset.ready === '1', null, { timeout: 60000 });
  assert.match(await p.getByTestId('decode-model').textContent(), /Train tab’s \(step 30\)/);
  await decoded(p);
  assert.equal(await p.getByTestId('decode-agree').getAttribute('data-identical'), '1');
  assert.deepEqual(w.errors, []);
  await ctx.close();
});
