// A small state changed by a control is computed on the page's own thread (so the
// picture lands in the input's frame), a large one in the Worker; both give the same numbers, the
// Check still runs (in the Worker, once the changes pause), and the link follows a drag without
// one history.replaceState per input event. (The panels after many redraws: frames-redraw.test.mjs,
// which times nothing and runs beside other files.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitReady, servedBrowser, exportJson } from './helpers.mjs';
import { SMALL, open as openOn, slide, withPage as withPageOn, words } from './frames-helpers.mjs';

const env = servedBrowser();
const open = (hash) => openOn(env, hash);
const withPage = (hash, fn) => withPageOn(env, hash, fn);
const LARGE = `#v=1&src=random&tokens=${words(256)}&heads=8&kv=8&dm=512&dk=64&seed=7`;

const lastTiming = (page) => page.evaluate(() => window.__attentionPlayground.timings.at(-1));

test('a small state changed by a slider is computed on the page: the same export as the Worker computing its link, and the Check follows', async () => {
  const a = await open(SMALL);
  const b = await open(SMALL);
  try {
    // The first computation is the Worker's (the page's own core starts after it).
    assert.equal((await lastTiming(a.page)).local, false);
    await a.page.waitForFunction(() => window.__attentionPlayground.timings.length >= 1);
    // The page's core loads in the background: wait until a change is computed on the page.
    let local = false;
    for (let i = 0, v = 3; i < 40 && !local; i++, v = v === 3 ? 4 : 3) {
      await slide(a.page, v);
      local = (await lastTiming(a.page)).local;
    }
    assert.ok(local, 'no slider change was computed on the page');
    assert.match(await a.page.locator('.status').textContent(), /\(on the page\)$/);
    // The Check ran for the page's result (in the Worker): its figures are shown and pass.
    const f32 = a.page.getByTestId('check-f32');
    await f32.waitFor();
    assert.ok(Number(await f32.getAttribute('data-max-abs')) <= Number(await f32.getAttribute('data-tolerance')));
    const fromPage = await exportJson(a.page);
    // The same link opened afresh: computed in the Worker.
    await a.page.waitForFunction(() => /win=/.test(location.hash));
    const hash = await a.page.evaluate(() => location.hash);
    await b.page.goto(`${env.server.url}/${hash}`);
    await b.page.reload();
    await waitReady(b.page);
    assert.equal((await lastTiming(b.page)).local, false);
    const fromWorker = await exportJson(b.page);
    assert.ok(fromPage.state.win > 0, 'the window mask is on');
    assert.deepEqual(fromPage, fromWorker);
    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test('a large state (T = 256, 8 heads, d_model 512) stays in the Worker', async () => {
  await withPage(LARGE, async (page) => {
    for (const v of [5, 9, 13]) {
      await slide(page, v, 60000);
      assert.equal((await lastTiming(page)).local, false, `window ${v} computed on the page`);
    }
  });
});

test('a single change rewrites the link at once; a drag rewrites it once, when it pauses, with the last value', async () => {
  await withPage(SMALL, async (page) => {
    await page.evaluate(() => {
      window.__replaced = [];
      const orig = history.replaceState.bind(history);
      history.replaceState = (s, t, url) => {
        window.__replaced.push({ at: performance.now(), url: String(url) });
        return orig(s, t, url);
      };
    });
    // one change after a pause: written in the same task
    const single = await page.evaluate(() => {
      const input = document.querySelector('[data-testid="window"]');
      input.value = '4';
      input.dispatchEvent(new Event('input', { bubbles: true }));
      return location.hash;
    });
    assert.match(single, /(^|&)win=4(&|$)/);
    await page.waitForTimeout(400);
    // 60 input events, one per frame (about a second of dragging)
    const drag = await page.evaluate(async () => {
      const input = document.querySelector('[data-testid="window"]');
      const before = window.__replaced.length;
      const t0 = performance.now();
      for (let i = 0; i < 60; i++) {
        await new Promise((r) => requestAnimationFrame(r));
        input.value = String(1 + (i % 11));
        input.dispatchEvent(new Event('input', { bubbles: true }));
      }
      return { before, t0, end: performance.now() };
    });
    const last = 1 + (59 % 11);
    await page.waitForFunction((w) => new RegExp(`(^|&)win=${w}(&|$)`).test(location.hash), last, { timeout: 2000 });
    await waitReady(page);
    const writes = (await page.evaluate(() => window.__replaced)).slice(drag.before);
    // the drag's first event may write (it came after a pause); the rest wait for the pause
    const during = writes.filter((w) => w.at > drag.t0 + 50 && w.at <= drag.end);
    assert.equal(during.length, 0, `${during.length} rewrites while dragging`);
    assert.ok(writes.length <= 2, `${writes.length} rewrites for one drag`);
    assert.match(writes.at(-1).url, new RegExp(`(^|&)win=${last}(&|$)`));
    assert.ok(writes.at(-1).at >= drag.end + 250, 'the last rewrite came before the pause');
  });
});
