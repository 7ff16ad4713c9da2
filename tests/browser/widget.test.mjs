// The anywidget-protocol module (dist/attention_playground_widget.js): `export default { render }`
// called as a widget host calls it, with a model that speaks the protocol's get / set / on / off
// (a stand-in written from the anywidget documentation; anywidget's own front end under a real
// widget manager is tests/browser/widget-protocol.test.mjs). Lesson 2's
// W (NumPy, as the notebook helper encodes it) travels in the frame's link; a 160 × 160 W goes by
// postMessage after the frame's ready message; changing a trait redraws; the cleanup removes the
// frame and the listener.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, ROOT, SHOTS } from './helpers.mjs';

let app, host, browser, oracle, links;
before(async () => {
  ensureBuilt();
  app = await serve();
  const dir = mkdtempSync(join(tmpdir(), 'ap-widget-'));
  execFileSync('/usr/bin/python3', [join(ROOT, 'tests/oracle/student_arrays.py'), dir], { stdio: 'inherit' });
  oracle = JSON.parse(readFileSync(join(dir, 'lesson2.json'), 'utf8'));
  links = JSON.parse(readFileSync(join(dir, 'links.json'), 'utf8'));
  // The host: another origin, as a notebook front end is; the model follows anywidget's AFM API.
  host = await serve(dir, {
    '/host.html': `<!doctype html><html><head><link rel="icon" href="data:,"></head><body><div id="out"></div><script type="module">
      const { default: widget } = await import(${JSON.stringify(app.url + '/attention_playground_widget.js')});
      const traits = new Map(Object.entries(${JSON.stringify({ weights: links.W, tokens: ['t0', 't1', 't2', 't3', 't4', 't5'], options: { causal: 1 }, height: 560 })}));
      const handlers = new Map();
      const model = {
        get: (k) => traits.get(k),
        set: (k, v) => { traits.set(k, v); for (const f of handlers.get('change:' + k) ?? []) f(); },
        on: (ev, f) => handlers.set(ev, [...(handlers.get(ev) ?? []), f]),
        off: (ev, f) => handlers.set(ev, (handlers.get(ev) ?? []).filter((g) => g !== f)),
        save_changes: () => {},
      };
      window.model = model;
      window.handlers = handlers;
      window.cleanup = await widget.render({ model, el: document.getElementById('out') });
      window.rendered = true;
    </script></body></html>`,
  });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await host?.close();
  await app?.close();
});

test('the widget module draws the model’s W, redraws on a change, sends a large W by postMessage, cleans up', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(host.url + '/host.html');
  await page.waitForFunction(() => window.rendered === true);
  const frame = await (await page.$('#out iframe')).contentFrame();
  await frame.waitForFunction(() => window.__attentionPlayground?.weights()?.arrays === 'weights', null, { timeout: 20000 });
  const a = await frame.evaluate(() => window.__attentionPlayground.weights());
  assert.deepEqual(a.tokens, ['t0', 't1', 't2', 't3', 't4', 't5']);
  assert.deepEqual(a.weights, oracle.arrays.W.flat().map(Math.fround));
  assert.match(await page.$eval('#out iframe', (f) => f.src), /[?&]embed=1&id=ap-widget-1#v=1&tokens=t0\+t1.*&causal=1&uw=1\.f4\.6x6\./);
  await page.screenshot({ path: join(SHOTS, 'widget-host.png') });
  // A trait change redraws; this W is too large for the link: the frame asks, the widget answers.
  await page.evaluate((v) => { window.model.set('tokens', []); window.model.set('weights', v); }, links.big);
  await page.waitForFunction(() => /arrays=post/.test(document.querySelector('#out iframe').src));
  const f2 = await (await page.$('#out iframe')).contentFrame();
  await f2.waitForFunction(() => window.__attentionPlayground?.weights()?.t === 160, null, { timeout: 20000 });
  assert.deepEqual(await f2.evaluate(() => window.__attentionPlayground.weights().weights), oracle.big);
  await page.evaluate(() => window.cleanup());
  assert.equal(await page.$('#out iframe'), null);
  assert.equal(await page.evaluate(() => [...window.handlers.values()].flat().length), 0);
  assert.deepEqual(w.errors, []);
  await ctx.close();
});

test('the exercise trait opens an exercise in the frame; each check comes back as the exercise_result trait', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(host.url + '/host.html');
  await page.waitForFunction(() => window.rendered === true);
  await page.evaluate(() => {
    window.saved = 0;
    window.model.save_changes = () => window.saved++;
    window.model.set('weights', '');
    window.model.set('options', {});
    window.model.set('tokens', []);
    window.model.set('exercise', 'mask-causal');
  });
  await page.waitForFunction(() => /#v=1&ex=mask-causal$/.test(document.querySelector('#out iframe').src));
  const frame = await (await page.$('#out iframe')).contentFrame();
  await frame.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout: 20000 });
  await frame.getByTestId('exercise-check').click();
  await page.waitForFunction(() => window.model.get('exercise_result')?.attempts === 1);
  assert.deepEqual(await page.evaluate(() => window.model.get('exercise_result')), { id: 'mask-causal', passed: false, score: 0.545, attempts: 1, state: '#v=1&ex=mask-causal' });
  await frame.getByTestId('causal').check();
  await frame.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await frame.getByTestId('exercise-check').click();
  await page.waitForFunction(() => window.model.get('exercise_result')?.attempts === 2);
  const r = await page.evaluate(() => window.model.get('exercise_result'));
  assert.deepEqual([r.passed, r.score, r.state], [true, 1, '#v=1&causal=1&ex=mask-causal']);
  assert.equal(await page.evaluate(() => window.saved), 2);
  assert.deepEqual(w.errors, []);
  await ctx.close();
});
