// The playground in notebook and course-site hosts, each the real thing, from dist/: Debian's
// classic Jupyter notebook (6.4) started on loopback with a temporary HOME and no token, the
// notebook as nbconvert HTML over http and from file://, and an MkDocs site. At 1280 and 390 px;
// the notebook's output cell at a phone's width is about 233 px, the narrowest host here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { ensureBuilt, launch, watch, ROOT, SHOTS } from './helpers.mjs';
import { hostServer, frameReady, frameFacts, LONG_TOKENS } from './hosts-helpers.mjs';

const PY = '/usr/bin/python3';
const WIDTHS = [1280, 390];
let app, browser, tmp, nbPath;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  ensureBuilt();
  app = await hostServer();
  browser = await launch();
  tmp = mkdtempSync(join(tmpdir(), 'ap-hosts-'));
  nbPath = join(tmp, 'attention.ipynb');
  const env = { ...process.env, HOME: tmp, JUPYTER_PLATFORM_DIRS: '1' };
  execFileSync(PY, [join(ROOT, 'tests/python/make_host_notebook.py'), nbPath, app.url, LONG_TOKENS], { env, stdio: 'inherit' });
  // Executed notebooks open "Not Trusted" (their HTML outputs' scripts stripped): sign it, as
  // `jupyter trust` would (missing from Debian's packages).
  execFileSync(PY, ['-m', 'nbformat.sign', nbPath], { env, stdio: 'inherit' });
  execFileSync(PY, ['-m', 'nbconvert', '--to', 'html', nbPath], { env, stdio: 'ignore' });
});
after(async () => {
  await browser?.close();
  await app?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Checks the playground's frame in a host: it drew, nothing overflows sideways, and the
 *  frame's own width (the host's column) is what it laid out for. */
async function checkFrame(frame, at) {
  await frameReady(frame.locator('html'), 30000);
  const f = await frame.locator('html').evaluate(frameFacts);
  assert.ok(f.zoom && f.zoom.w > 40, `${at}: no heatmap`);
  assert.ok(f.scrollWidth <= f.clientWidth + 1, `${at}: sideways overflow ${f.scrollWidth} > ${f.clientWidth}`);
  assert.ok(f.zoom.right <= f.clientWidth, `${at}: the heatmap's right edge ${f.zoom.right} > ${f.clientWidth}`);
  return f;
}

test('classic Jupyter notebook (live, trusted): the IFrame output and the element with tz= tokens draw, RequireJS keeps working', async (t) => {
  const port = await freePort();
  const server = spawn('jupyter', ['notebook', '--no-browser', '--allow-root', '--ip=127.0.0.1', `--port=${port}`,
    "--NotebookApp.token=''", "--NotebookApp.password=''", `--notebook-dir=${tmp}`], { env: { ...process.env, HOME: tmp, JUPYTER_PLATFORM_DIRS: '1' }, stdio: 'ignore' });
  t.after(() => server.kill('SIGTERM'));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(base + '/api')).ok) break;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const width of WIDTHS) {
    const ctx = await browser.newContext({ viewport: { width, height: 1000 } });
    const page = await ctx.newPage();
    const w = watch(page);
    await page.goto(`${base}/notebooks/attention.ipynb`);
    await page.waitForFunction(() => window.Jupyter?.notebook?._fully_loaded, null, { timeout: 30000 });
    assert.equal(await page.evaluate(() => window.Jupyter.notebook.trusted), true, 'the signed notebook opens trusted');
    const out = page.locator('.output_area iframe').first();
    await out.scrollIntoViewIfNeeded();
    const cellWidth = await out.evaluate((f) => f.getBoundingClientRect().width);
    const f1 = await checkFrame(page.frameLocator('.output_area iframe >> nth=0'), `${width}px IFrame (${Math.round(cellWidth)} px wide)`);
    await page.screenshot({ path: join(SHOTS, `host-jupyter-iframe-${width}.png`) });
    const el = page.locator('#ap-element');
    await el.scrollIntoViewIfNeeded();
    const ef = page.frameLocator('#ap-element >> iframe');
    await checkFrame(ef, `${width}px element`);
    const tokens = await ef.locator('html').evaluate(() => window.__attentionPlayground.state().model.tokens);
    assert.equal(tokens.length, 40);
    assert.match(await page.locator('#ap-element >> iframe').getAttribute('src'), /[#&]tz=/);
    // The notebook's own RequireJS still loads modules after the element's script ran.
    const ok = await page.evaluate(() => new Promise((res) => window.require(['base/js/namespace'], (ns) => res(!!ns), (e) => res(String(e)))));
    assert.equal(ok, true);
    await page.screenshot({ path: join(SHOTS, `host-jupyter-element-${width}.png`) });
    const ours = w.errors.filter((e) => /attention|define|compressTo|Worker/i.test(e));
    assert.deepEqual(ours, [], `${width}px: errors from the playground`);
    if (width === 390) assert.ok(f1.clientWidth <= 300, `the phone's output cell is ${f1.clientWidth}px`);
    await ctx.close();
  }
});

test('nbconvert HTML of the notebook, over http and from file://: the frames draw without overflow', async () => {
  const html = join(tmp, 'attention.html');
  assert.ok(existsSync(html));
  const host = await hostServer({ mounts: { '/': tmp } });
  try {
    for (const url of [`${host.url}/attention.html`, `file://${html}`]) {
      for (const width of WIDTHS) {
        const ctx = await browser.newContext({ viewport: { width, height: 1000 } });
        const page = await ctx.newPage();
        await page.goto(url);
        const kind = url.startsWith('file:') ? 'file' : 'http';
        await checkFrame(page.frameLocator('iframe >> nth=0'), `nbconvert ${kind} ${width}px`);
        await page.screenshot({ path: join(SHOTS, `host-nbconvert-${kind}-${width}.png`) });
        await ctx.close();
      }
    }
  } finally {
    await host.close();
  }
});

test('MkDocs site (Debian mkdocs): the element and the iframe snippet draw at 1280 and 390 px', async () => {
  const site = join(tmp, 'mkdocs');
  mkdirSync(join(site, 'docs'), { recursive: true });
  writeFileSync(join(site, 'mkdocs.yml'), 'site_name: Attention course\n');
  writeFileSync(join(site, 'docs', 'index.md'), `# Attention

The element:

<script type="module" src="${app.url}/attention-playground.js"></script>
<attention-playground id="ap-element" preset="lesson2" maxheight="900"></attention-playground>

The frame:

<iframe data-attention-playground id="ap-frame" src="${app.url}/?embed=1&show=tokens#v=1" title="Attention Playground" width="100%" height="640" frameborder="0"></iframe>
<script src="${app.url}/embed-listener.js" defer></script>
`);
  execFileSync('mkdocs', ['build', '-q', '-f', join(site, 'mkdocs.yml'), '-d', join(site, 'site')], { stdio: 'inherit' });
  const host = await hostServer({ mounts: { '/': join(site, 'site') } });
  try {
    for (const width of WIDTHS) {
      const ctx = await browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      await page.goto(`${host.url}/`);
      await checkFrame(page.frameLocator('#ap-element >> iframe'), `mkdocs element ${width}px`);
      await page.locator('#ap-frame').scrollIntoViewIfNeeded();
      await checkFrame(page.frameLocator('#ap-frame'), `mkdocs frame ${width}px`);
      await page.waitForFunction(() => document.getElementById('ap-frame').style.height !== '', null, { timeout: 15000 });
      await page.screenshot({ path: join(SHOTS, `host-mkdocs-${width}.png`), fullPage: true });
      await ctx.close();
    }
  } finally {
    await host.close();
  }
});
