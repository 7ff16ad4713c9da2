// The defects a new user met in Chromium on a walk through every tab, one test each. Every test here failed
// against the page before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { watch, waitReady, servedBrowser, reusedTab, SHOTS, DIST } from './helpers.mjs';

const env = servedBrowser();

// Each test's page is a fresh load, in the tab the last one used (reusedTab); a context option
// (reduced motion) gets a context of its own.
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 }, acceptDownloads: true });
async function open(path, viewport, opts) {
  if (!opts) {
    const opened = await tab.load(env.server.url + path, viewport);
    await waitReady(opened.page);
    return opened;
  }
  const context = await env.browser.newContext({ viewport, acceptDownloads: true, ...opts });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(env.server.url + path);
  await waitReady(page);
  return { page, context, ...w };
}

const tokensOf = (n, p = 't') => Array.from({ length: n }, (_, i) => `${p}${i}`);

test('A.2 the skip link moves focus to the views and leaves the state alone', async () => {
  const hash = '#v=1&src=random&tokens=a+b+c+d&heads=4&kv=2&view=mask';
  const { page, errors } = await open('/' + hash);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the heatmaps');
  await page.keyboard.press('Enter');
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => location.hash), hash);
  assert.equal(await page.getByTestId('notices').isHidden(), true, 'a notice appeared');
  const st = await page.evaluate(() => window.__attentionPlayground.state());
  assert.deepEqual([st.model.source, st.model.heads, st.model.kvHeads, st.page.view, st.model.tokens.join(' ')], ['random', 4, 2, 'mask', 'a b c d']);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main-stage');
  // The next Tab goes on into the views, not back to the header.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => !!document.activeElement?.closest('.view-host')), true);
  assert.deepEqual(errors, []);
});

test('A.3 the token box can be emptied and a new sentence typed', async () => {
  const { page, errors } = await open('/');
  const box = page.getByTestId('tokens');
  await box.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.waitForTimeout(300);
  assert.equal(await box.inputValue(), '', 'the box was refilled');
  assert.equal(await page.getByTestId('tokens-empty').isVisible(), true, 'no hint for the empty box');
  await page.keyboard.type('I saw a dog', { delay: 20 });
  await page.waitForFunction(() => window.__attentionPlayground.state().model.tokens.join(' ') === 'I saw a dog', null, { timeout: 5000 });
  await waitReady(page);
  assert.equal(await box.inputValue(), 'I saw a dog');
  assert.equal(await page.getByTestId('tokens-empty').isHidden(), true);
  // Leaving the box empty and clicking elsewhere keeps it empty (and the last result on show).
  await box.fill('');
  await page.locator('.stage').click({ position: { x: 5, y: 5 } });
  await page.waitForTimeout(200);
  assert.equal(await box.inputValue(), '');
  assert.equal(await page.evaluate(() => window.__attentionPlayground.state().model.tokens.join(' ')), 'I saw a dog');
  assert.deepEqual(errors, []);
});

/** In the page: composite a heatmap's data canvas and overlay as shown, and return the colour at
 *  the centre of cell (i, j). */
function cellColour([sel, idx, cells]) {
  const frame = document.querySelectorAll(sel)[idx];
  const [data, overlay] = frame.querySelectorAll('canvas');
  const c = document.createElement('canvas');
  c.width = overlay.width;
  c.height = overlay.height;
  const g = c.getContext('2d');
  g.imageSmoothingEnabled = false;
  g.drawImage(data, 0, 0, c.width, c.height);
  g.drawImage(overlay, 0, 0);
  const sx = c.width / data.width;
  const sy = c.height / data.height;
  return cells.map(([i, j]) => Array.from(g.getImageData(Math.floor((j + 0.5) * sx), Math.floor((i + 0.5) * sy), 1, 1).data.slice(0, 3)));
}
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test('A.4 the mask panel keeps forbidden cells distinct at T = 64 (causal + padding)', async () => {
  const toks = tokensOf(64).join('+');
  const { page, errors } = await open(`/#v=1&src=random&tokens=${toks}&pad=3,10&view=mask`);
  // forbidden: above the diagonal, and the padding columns 3 and 10; allowed: below, off padding.
  const forbidden = [[0, 63], [20, 40], [40, 10], [63, 3]];
  const allowed = [[63, 0], [40, 20], [20, 11], [5, 4]];
  const cols = await page.evaluate(cellColour, ['.view-mask .mask-panel .hm-frame', 1, [...forbidden, ...allowed]]);
  const f = cols.slice(0, 4);
  const a = cols.slice(4);
  for (const x of f) for (const y of a) assert.ok(dist(x, y) > 80, `forbidden ${x} vs allowed ${y}: too alike`);
  await page.locator('.view-mask').screenshot({ path: join(SHOTS, 'mask-t64.png') });
  // The −1e9 fill gives a fully masked row real (uniform) weight: at T = 64 those forbidden cells
  // are still told apart from the allowed cells of other rows.
  await page.evaluate(() => { location.hash = '#v=1&src=random&tokens=' + Array.from({ length: 64 }, (_, i) => 't' + i).join('+') + '&causal=0&pad=' + Array.from({ length: 64 }, (_, i) => i).join(',') + '&fill=finite&view=mask'; });
  await page.waitForFunction(() => window.__attentionPlayground.state().model.fill === 'finite');
  await waitReady(page);
  const w = await page.evaluate(cellColour, ['.view-mask .mask-panel .hm-frame', 2, [[5, 5], [30, 60]]]);
  // viridis(1/64) is a dark purple (≈ 70, 5, 90); the veiled cell must not look like it.
  for (const x of w) assert.ok(dist(x, [70, 5, 90]) > 80, `a forbidden −1e9 cell looks allowed: ${x}`);
  assert.deepEqual(errors, []);
});

test('A.5 T = 256 in the Heads view fits a 1400-px window with readable, thinned labels', async () => {
  const toks = tokensOf(256).join('+');
  const { page, errors } = await open(`/#v=1&src=random&tokens=${toks}`, { width: 1400, height: 900 });
  const m = await page.evaluate(() => {
    const de = document.documentElement;
    const thumbs = [...document.querySelectorAll('.thumb')].map((t) => t.getBoundingClientRect()).map((r) => ({ right: r.right, w: r.width }));
    const labels = (sel, axis) => [...document.querySelectorAll(`.zoom-panel ${sel}`)]
      .filter((s) => s.textContent !== '')
      .map((s) => {
        // the label's box as shown: its own box, clipped by its cell-label parent
        const r = s.getBoundingClientRect();
        const p = s.parentElement.getBoundingClientRect();
        const [a, b] = axis === 'y' ? [r.top, r.bottom] : [Math.max(r.left, p.left), Math.min(r.right, p.right)];
        return { a, b, shown: axis === 'y' ? r.width : b - a, font: parseFloat(getComputedStyle(s).fontSize) };
      });
    return { sw: de.scrollWidth, cw: de.clientWidth, thumbs, rows: labels('.hm-rl > span:first-child', 'y'), cols: labels('.hm-cl > .tok', 'x') };
  });
  assert.ok(m.sw <= m.cw, `page ${m.sw}px wide in a ${m.cw}px window`);
  assert.equal(m.thumbs.length, 2);
  for (const t of m.thumbs) {
    assert.ok(t.right <= m.cw, `a thumbnail ends at ${t.right}px`);
    assert.ok(t.w <= 170, `a thumbnail is ${t.w}px wide`);
  }
  for (const [name, list] of [['row', m.rows], ['column', m.cols]]) {
    assert.ok(list.length >= 8 && list.length <= 64, `${list.length} ${name} labels`);
    for (const l of list) assert.ok(l.font >= 10, `${name} label font ${l.font}px`);
    for (const l of list) assert.ok(l.shown >= 0.9 * l.font, `${name} label clipped to ${l.shown}px`);
    for (let i = 1; i < list.length; i++) assert.ok(list[i].a >= list[i - 1].b - 0.5, `${name} labels ${i - 1} and ${i} overlap`);
  }
  await page.screenshot({ path: join(SHOTS, 'heads-t256.png') });
  assert.deepEqual(errors, []);
});

test('A.6 clicking a preset brings the view into sight (at once with reduced motion, else smoothly)', async () => {
  for (const reducedMotion of ['reduce', 'no-preference']) {
    const { page, context, errors } = await open('/', { width: 1366, height: 800 }, { reducedMotion });
    const card = page.locator('a[data-preset="lesson2"]');
    await card.scrollIntoViewIfNeeded();
    const before = await page.evaluate(() => document.querySelector('.stage').getBoundingClientRect().top);
    assert.ok(before < 0, 'the stage was still on screen before the click');
    await card.click();
    await page.waitForFunction(() => window.__attentionPlayground.state().model.source === 'random');
    if (reducedMotion === 'reduce') await page.waitForTimeout(150);
    else await page.waitForFunction(() => Math.abs(document.querySelector('.stage').getBoundingClientRect().top) < 4, null, { timeout: 10000 });
    // In sight: the stage's top edge at the top of the window (a smooth scroll once stopped 54 px
    // short when the new picture was drawn during it).
    const top = await page.evaluate(() => document.querySelector('.stage').getBoundingClientRect().top);
    assert.ok(Math.abs(top) < 4, `${reducedMotion}: stage top at ${top}px after the click`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main-stage');
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('A.7 the random weights offer N(0,1) or N(0,1/d_model), and the Scale view says why they differ', async () => {
  const toks = tokensOf(16).join('+');
  const { page, errors } = await open(`/#v=1&src=random&tokens=${toks}&heads=1&kv=1&dm=128&dk=64&causal=0&view=scale`);
  const mean = async () => Number((await page.locator('.ent-mean').textContent()).match(/mean entropy ([\d.]+)/)[1]);
  // Lesson 2's N(0,1) weights: q, k entries of variance d_model, rows one-hot even with 1/√d_k.
  const lesson = await mean();
  assert.ok(lesson < 0.3, `N(0,1) init: mean entropy ${lesson}`);
  const note = page.getByTestId('init-note');
  assert.equal(await note.isVisible(), true);
  assert.match(await note.textContent(), /variance 128/);
  await page.getByTestId('init').selectOption('scaled');
  await page.waitForFunction(() => window.__attentionPlayground.state().model.init === 'scaled');
  await waitReady(page);
  await page.waitForFunction(() => /init=scaled/.test(location.hash));
  // N(0, 1/d_model): unit-variance q, k as in the study; with the scale the rows stay soft
  // (the study's figure at d_k 64 is about 2.4 nats of ln 16 = 2.77).
  const scaled = await mean();
  assert.ok(scaled > 1.8, `N(0,1/d_model) init: mean entropy ${scaled}`);
  assert.match(await note.textContent(), /variance 1\b/);
  await page.locator('.view-scale').screenshot({ path: join(SHOTS, 'scale-init.png') });
  assert.deepEqual(errors, []);
});

test('A.8 the first figure reports start-up (Worker + wasm) apart from the compute', async () => {
  const { page, errors } = await open('/');
  const first = await page.locator('.status').textContent();
  const m = first.match(/compute ([\d.]+) ms, drawn in ([\d.]+) ms · start-up (\d+) ms/);
  assert.ok(m, `first status: "${first}"`);
  const [compute, drawn, startup] = m.slice(1).map(Number);
  assert.ok(compute <= drawn, `compute ${compute} > drawn ${drawn}`);
  const t = await page.evaluate(() => window.__attentionPlayground.timings[0]);
  assert.ok(Math.abs(t.startupMs - startup) <= 1, `timings say start-up ${t.startupMs} ms`);
  // later figures are the recompute alone
  await page.getByTestId('causal').click();
  await page.waitForFunction(() => window.__attentionPlayground.timings.length === 2);
  await waitReady(page);
  const next = await page.locator('.status').textContent();
  // "(on the page)" when the page's own core computed it, as the timings say.
  assert.match(next, /^T = 11, 2 heads: compute [\d.]+ ms, drawn in [\d.]+ ms( \(on the page\))?$/);
  assert.equal(next.endsWith('(on the page)'), await page.evaluate(() => window.__attentionPlayground.timings[1].local));
  assert.equal(await page.evaluate(() => window.__attentionPlayground.timings[1].startupMs), 0);
  assert.deepEqual(errors, []);
});

test('A.9 dist/index.html opened from disk explains that it must be served, and how', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  await page.goto(pathToFileURL(join(DIST, 'index.html')).href);
  await page.waitForTimeout(1000);
  const text = await page.evaluate(() => document.body.innerText);
  assert.match(text, /served over http/);
  assert.match(text, /bash scripts\/playground\.sh/);
  await page.screenshot({ path: join(SHOTS, 'file-url.png') });
  await context.close();
  // Served, the message never shows.
  const { page: p2, errors } = await open('/');
  assert.equal(await p2.locator('#boot-fallback').count(), 0);
  assert.doesNotMatch(await p2.evaluate(() => document.body.innerText), /served over http/);
  assert.deepEqual(errors, []);
});

test('A.10 phone width 375 px: no view scrolls sideways, the heatmap is on the first screen', async () => {
  const viewport = { width: 375, height: 800 };
  const T64 = tokensOf(64).join('+');
  const pages = [
    ['heads', '#v=1'],
    ['mask', '#v=1&view=mask'],
    ['scale', '#v=1&view=scale'],
    ['output', '#v=1&view=output'],
    ['heads-8-heads-t64', `#v=1&src=random&heads=8&kv=2&tokens=${T64}`],
    ['mask-t64', `#v=1&src=random&view=mask&tokens=${T64}`],
    ['timing', '#v=1&view=timing&tstart=8&tend=32&th=2'],
  ];
  for (const [name, hash] of pages) {
    const context = await env.browser.newContext({ viewport, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const w = watch(page);
    await page.goto(env.server.url + '/' + hash);
    if (name === 'timing') {
      await page.getByTestId('timing-view').waitFor();
      await page.getByTestId('timing-run').click();
      await page.waitForFunction(() => document.querySelector('[data-testid="timing-status"]')?.dataset.state === 'done', null, { timeout: 60000 });
    } else {
      await waitReady(page);
    }
    await page.waitForTimeout(200);
    const m = await page.evaluate(() => {
      const de = document.documentElement;
      const wide = [...document.querySelectorAll('#app *')].filter((n) => n.getBoundingClientRect().right > de.clientWidth + 1 && !n.closest('.table-scroll, .weights-table'));
      const z = document.querySelector('.view-host .hm-frame');
      const ts = document.querySelector('.table-scroll');
      return {
        sw: de.scrollWidth, cw: de.clientWidth, wide: wide.slice(0, 3).map((n) => `${n.tagName}.${n.className}`),
        heatmapTop: z ? z.getBoundingClientRect().top + scrollY : null,
        tableOver: ts ? ts.scrollWidth - ts.clientWidth : 0,
      };
    });
    assert.ok(m.sw <= m.cw, `${name}: page ${m.sw}px wide at ${m.cw}px (${m.wide.join(', ')})`);
    assert.deepEqual(m.wide, [], `${name}: elements past the right edge`);
    if (m.heatmapTop !== null) assert.ok(m.heatmapTop < viewport.height, `${name}: the first heatmap starts ${m.heatmapTop}px down`);
    if (name === 'timing') assert.ok(m.tableOver <= 0, `timing table needs ${m.tableOver}px more`);
    if (['heads', 'timing', 'mask-t64'].includes(name)) await page.screenshot({ path: join(SHOTS, `phone-${name}.png`), fullPage: name !== 'timing' ? false : true });
    assert.deepEqual(w.errors, [], `${name}: console errors`);
    await context.close();
  }
});

/** Width of a PNG from its IHDR chunk. */
async function pngWidth(download) {
  const { readFile } = await import('node:fs/promises');
  const b = await readFile(await download.path());
  return b.readUInt32BE(16);
}

test('A.11a the PNG list names each head once, and every PNG has token labels', async () => {
  const { page, errors } = await open('/#v=1&head=1');
  const names = await page.locator('.png-group select option').allTextContents();
  assert.deepEqual(names, ['head-1-weights', 'head-2-weights']);
  assert.equal(await page.locator('.png-group select').inputValue(), 'head-2-weights', 'starts at the zoomed head');
  const widths = [];
  for (const n of names) {
    await page.locator('.png-group select').selectOption(n);
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-png').click()]);
    widths.push(await pngWidth(d));
  }
  // 11 cells of 40 px plus a 130-px label column: an unlabelled PNG is 120 px narrower.
  for (const w of widths) assert.ok(w >= 11 * 40 + 130, `PNG ${w}px wide: no token labels`);
  assert.deepEqual(errors, []);
});

test('A.11b select text fits its box (every option)', async () => {
  const { page, errors } = await open('/#v=1&src=random&heads=8&kv=8');
  const cut = await page.evaluate(() => {
    const g = document.createElement('canvas').getContext('2d');
    const out = [];
    for (const sel of document.querySelectorAll('aside.controls select, .export select')) {
      if (!sel.offsetParent) continue;
      const cs = getComputedStyle(sel);
      g.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 18; // the arrow
      for (const o of sel.options) if (g.measureText(o.text).width > room) out.push(`${o.text} (${Math.round(g.measureText(o.text).width)} > ${Math.round(room)})`);
    }
    return out;
  });
  assert.deepEqual(cut, [], 'option text cut off');
  assert.deepEqual(errors, []);
});

test('A.11c notices number heads from 1, as the page does', async () => {
  const { page } = await open('/#v=1&head=7');
  const text = await page.getByTestId('notices').textContent();
  assert.match(text, /no head 8 \(heads 1…2\); showing head 2/);
  assert.equal(await page.locator('.zoom-title').textContent(), 'Head 2 of 2 — attention weights');
});

test("A.11d a link's sharpness is what the slider shows", async () => {
  const { page } = await open('/#v=1&sharp=100');
  const slider = page.locator('aside input[type="range"]').first();
  assert.equal(await slider.inputValue(), '100');
  assert.equal(await page.locator('aside output.val').first().textContent(), '100');
});

test('A.11e the embed snippet opens at its first line', async () => {
  const { page } = await open('/');
  await page.getByTestId('copy-embed').click();
  const ta = page.getByTestId('embed-snippet');
  await ta.waitFor();
  const m = await ta.evaluate((t) => ({ top: t.scrollTop, over: t.scrollHeight > t.clientHeight }));
  assert.ok(m.over, 'the snippet fits its box; nothing to check');
  assert.equal(m.top, 0);
});

test('A.11f a 10 000-token link is cut to 256 with a notice, like pasted text', async () => {
  const long = Array.from({ length: 10000 }, (_, i) => `w${i}`);
  const { page, errors } = await open('/#v=1&tokens=' + long.join('+'));
  const st = await page.evaluate(() => window.__attentionPlayground.state().model.tokens);
  assert.deepEqual(st, long.slice(0, 256));
  assert.match(await page.getByTestId('notices').textContent(), /10000 tokens is more than the limit of 256; kept the first 256/);
  // pasted: the same notice wording
  await page.getByTestId('tokens').fill(Array.from({ length: 4096 }, (_, i) => `p${i}`).join(' '));
  await page.waitForFunction(() => window.__attentionPlayground.state().model.tokens[0] === 'p0');
  assert.match(await page.getByTestId('notices').textContent(), /4096 tokens is more than the limit of 256; kept the first 256/);
  assert.deepEqual(errors, []);
});
