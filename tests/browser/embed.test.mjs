// Embed mode in a host page: the iframe reports its height (versioned message) and the host's
// listener, which checks origin and source, resizes it. The custom element does the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, SHOTS } from './helpers.mjs';

let app, host, browser;
before(async () => {
  ensureBuilt();
  app = await serve();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await host?.close();
  await app?.close();
});

test('the copied iframe snippet auto-sizes in a host page on another origin', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(app.url + '/');
  await page.getByTestId('copy-embed').click();
  const snippet = await page.getByTestId('embed-snippet').inputValue();
  assert.match(snippet, /e\.origin !== "http:\/\/127\.0\.0\.1:\d+"/);
  assert.match(snippet, /e\.source !== f\.contentWindow/);
  // The host page lives on a different origin (another port) and starts the frame at 640 px.
  host = await serve(undefined, {
    '/host.html': `<!doctype html><html><head><link rel="icon" href="data:,"></head><body style="margin:0;font-family:sans-serif"><h1>Course page</h1>${snippet}<p id="after">after</p></body></html>`,
  });
  const w = watch(page);
  await page.goto(host.url + '/host.html');
  const frame = page.frameLocator('iframe');
  await frame.locator('.thumb').first().waitFor();
  await page.waitForFunction(() => {
    const f = document.querySelector('iframe');
    return f && f.style.height !== '' && f.style.height !== '640px';
  }, null, { timeout: 15000 });
  const h = await page.evaluate(() => parseFloat(document.querySelector('iframe').style.height));
  const inner = await frame.locator('html').evaluate((e) => Math.ceil(e.getBoundingClientRect().height));
  assert.ok(Math.abs(h - inner) <= 2, `iframe ${h}px vs content ${inner}px`);
  // Embed mode shows the chosen controls (tokens, mask) but not the gallery or the model group.
  // Every part that belongs to the gallery (the gallery and the "Start here" line that points at it).
  const presets = frame.locator('[data-section="presets"]');
  assert.ok((await presets.count()) >= 1);
  for (const p of await presets.all()) assert.equal(await p.isHidden(), true);
  assert.equal(await frame.locator('fieldset[data-section="tokens"]').isVisible(), true);
  assert.equal(await frame.locator('fieldset[data-section="model"]').isHidden(), true);
  // A forged message from the host page itself (wrong source) must not resize the frame.
  await page.evaluate(() => window.postMessage({ type: 'attention-playground:resize', version: 1, height: 99 }, '*'));
  await page.waitForTimeout(200);
  assert.equal(await page.evaluate(() => parseFloat(document.querySelector('iframe').style.height)), h);
  await page.screenshot({ path: join(SHOTS, 'embed-host.png'), fullPage: true });
  assert.deepEqual(w.errors, []);
  await ctx.close();
});

test('the custom element embeds a preset and resizes', async () => {
  const ctx = await browser.newContext({ viewport: { width: 900, height: 800 } });
  const page = await ctx.newPage();
  const local = await serve(undefined, {
    '/element.html': `<!doctype html><html><head><link rel="icon" href="data:,"></head><body><h1>Element</h1><attention-playground preset="lesson2" view="mask"></attention-playground><script type="module" src="${app.url}/attention-playground.js"></script></body></html>`,
  });
  try {
    await page.goto(local.url + '/element.html');
    await page.waitForFunction(() => {
      const f = document.querySelector('attention-playground')?.shadowRoot?.querySelector('iframe');
      return f && f.style.height !== '640px';
    }, null, { timeout: 15000 });
    const src = await page.evaluate(() => document.querySelector('attention-playground').shadowRoot.querySelector('iframe').src);
    assert.match(src, /embed=1/);
    assert.match(src, /view=mask/);
    assert.match(src, /tokens=t0\+t1/);
  } finally {
    await local.close();
    await ctx.close();
  }
});
