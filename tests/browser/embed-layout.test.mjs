// Every documented embed form lays out well at 320, 375, 768, 1024 and 1440 px: no horizontal
// overflow, the zoomed heatmap at a useful size, the readout a normal paragraph (it once printed
// one letter per line in a 270-px column), the head title clear of "All heads", and a frame
// height that is not inflated by a squeezed column (a layout defect a user met).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, SHOTS } from './helpers.mjs';

const WIDTHS = [320, 375, 768, 1024, 1440];
// [name, kind, what]: kind 'iframe' = the page itself at ?<what>; 'element' = the custom element
// with these attributes, in a host page on another origin.
const FORMS = [
  ['iframe-embed', 'iframe', '?embed=1#v=1'],
  ['iframe-hide-controls', 'iframe', '?embed=1&hide=controls#v=1'],
  ['iframe-snippet', 'iframe', '?embed=1&show=tokens%2Cmask&id=attention-playground-1#v=1'],
  ['element-preset', 'element', 'preset="induction"'],
  ['element-show', 'element', 'preset="induction" view="heads" show="tokens,mask"'],
];

let app, host, browser;
before(async () => {
  ensureBuilt();
  app = await serve();
  const pages = {};
  for (const [name, kind, what] of FORMS) {
    if (kind === 'element') {
      pages[`/${name}.html`] = `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head><body style="margin:0"><attention-playground ${what}></attention-playground><script type="module" src="${app.url}/attention-playground.js"></script></body></html>`;
    }
  }
  host = await serve(undefined, pages);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await host?.close();
  await app?.close();
});

/** Measure the playground document (the page itself, or the element's frame). */
function measure() {
  const de = document.documentElement;
  const box = (sel) => {
    const n = document.querySelector(sel);
    if (!n) return null;
    const r = n.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height, right: r.right, bottom: r.bottom };
  };
  let widest = 0;
  for (const n of document.querySelectorAll('#app *')) {
    const r = n.getBoundingClientRect();
    if (r.width > 0 && getComputedStyle(n).visibility !== 'hidden') widest = Math.max(widest, r.right);
  }
  return {
    scrollWidth: de.scrollWidth,
    clientWidth: de.clientWidth,
    height: Math.ceil(de.getBoundingClientRect().height),
    widest,
    stage: box('.stage'),
    zoom: box('.zoom-panel .hm-frame'),
    title: box('.zoom-title'),
    gridTitle: box('.grid-panel .panel-title'),
    readout: box('.zoom-panel .readout'),
  };
}

for (const [name, kind, what] of FORMS) {
  test(`embed layout: ${name} at ${WIDTHS.join(', ')} px`, async () => {
    // One tab loads the form afresh at each width (a blank page between, so no load is a hash
    // change): the same load at that width as a new tab's, in the renderer the last one used.
    const ctx = await browser.newContext({ viewport: { width: WIDTHS[0], height: 900 } });
    const page = await ctx.newPage();
    const w = watch(page);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto('about:blank');
      let doc;
      if (kind === 'iframe') {
        await page.goto(app.url + '/' + what);
        doc = page;
      } else {
        await page.goto(`${host.url}/${name}.html`);
        const iframe = await page.waitForFunction(() => document.querySelector('attention-playground')?.shadowRoot?.querySelector('iframe'), null, { timeout: 15000 });
        doc = await iframe.asElement().contentFrame();
        await doc.waitForURL(/embed=1/, { timeout: 15000 }); // a lazy frame may not have started yet
      }
      await doc.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout: 15000 });
      await doc.waitForTimeout(150); // one resize-observer pass
      const m = await doc.evaluate(measure);
      const at = `${name} at ${width} px`;
      assert.ok(m.scrollWidth <= m.clientWidth, `${at}: page scrolls sideways (${m.scrollWidth} > ${m.clientWidth})`);
      assert.ok(m.widest <= m.clientWidth + 1, `${at}: an element reaches x = ${m.widest} (> ${m.clientWidth})`);
      // The stage gets (nearly) the width it can have: with no controls the whole frame.
      const noControls = !what.includes('show=') && !what.includes('show="');
      if (noControls) assert.ok(m.stage.w >= m.clientWidth - 40, `${at}: stage only ${m.stage.w}px wide`);
      else if (width >= 768) assert.ok(m.stage.w >= 0.55 * m.clientWidth, `${at}: stage only ${m.stage.w}px wide`);
      const useful = Math.min(0.5 * width, 300);
      assert.ok(m.zoom.w >= useful, `${at}: zoomed heatmap ${m.zoom.w}px < ${useful}px`);
      assert.ok(m.readout.w >= Math.min(240, width - 60), `${at}: readout only ${m.readout.w}px wide`);
      assert.ok(m.readout.h <= 140, `${at}: readout ${m.readout.h}px tall`);
      // The zoom title does not run into the "All heads" panel title.
      const t = m.title;
      const g = m.gridTitle;
      const overlap = t.x < g.right && g.x < t.right && t.y < g.bottom && g.y < t.bottom;
      assert.ok(!overlap, `${at}: the head title overlaps "All heads"`);
      if (width >= 768) assert.ok(m.height <= 1500, `${at}: document ${m.height}px tall`);
      if (kind === 'element') {
        // The host's frame follows the content (resize message) instead of growing to 2000+ px.
        await page.waitForFunction((hgt) => {
          const f = document.querySelector('attention-playground').shadowRoot.querySelector('iframe');
          return Math.abs(parseFloat(f.style.height) - hgt) <= 2;
        }, m.height, { timeout: 5000 });
      }
      if (width === 375 || width === 1024) await page.screenshot({ path: join(SHOTS, `embed-${name}-${width}.png`), fullPage: true });
      assert.deepEqual(w.errors, [], `${at}: console errors`);
    }
    await ctx.close();
  });
}

// Fit mode (?embed=1&fit=1) on a slide and in a short frame: every attention view shows its
// whole picture inside the box, nothing scrolls (the Output and Scale views used to run 100–165 px
// past a 1280 × 720 slide: only the Heads and Mask views were laid out to the height).
for (const [w, h] of [[1280, 720], [960, 540]]) {
  test(`fit mode at ${w} x ${h}: Heads, Mask effect, Scale and Output fit the frame`, async () => {
    const ctx = await browser.newContext({ viewport: { width: w, height: h } });
    const page = await ctx.newPage();
    const errs = watch(page);
    for (const view of ['heads', 'mask', 'scale', 'output']) {
      await page.goto(`${app.url}/?embed=1&fit=1#v=1&view=${view}`);
      await page.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout: 20000 });
      await page.waitForTimeout(300);
      const m = await page.evaluate(() => {
        const maps = [...document.querySelectorAll('.view-host .hm-frame')].filter((f) => f.offsetParent);
        return {
          sh: document.documentElement.scrollHeight, ch: document.documentElement.clientHeight,
          sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth,
          lowest: Math.max(0, ...maps.map((f) => f.getBoundingClientRect().bottom)),
          smallest: Math.min(...maps.map((f) => f.getBoundingClientRect().height)),
          maps: maps.length,
        };
      });
      const at = `${view} at ${w} x ${h}`;
      assert.ok(m.sh <= m.ch + 1, `${at}: the page scrolls (${m.sh} > ${m.ch})`);
      assert.ok(m.sw <= m.cw, `${at}: the page scrolls sideways`);
      if (view !== 'scale') {
        assert.ok(m.maps > 0 && m.lowest <= m.ch, `${at}: a heatmap ends at ${m.lowest} px`);
        assert.ok(m.smallest >= 40, `${at}: a heatmap only ${m.smallest}px tall`);
      }
      if (w === 1280) await page.screenshot({ path: join(SHOTS, `fit-${view}-${w}x${h}.png`) });
    }
    assert.deepEqual(errs.errors, [], 'console errors');
    await ctx.close();
  });
}
