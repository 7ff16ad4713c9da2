// The student's notebook, in the real thing: Debian's classic Jupyter notebook. A notebook that
// imports the helper from dist/ (`ap.serve(dist)`, `ap.show(W)` for lesson 2's W computed with
// NumPy in the notebook, and a 160 × 160 W too large for a link) is executed by nbclient, signed
// (python3 -m nbformat.sign), opened in a live `jupyter notebook` server this test starts on
// loopback (temporary HOME, no token) in Chromium, and the heatmaps' cells are read back from the
// page (window.__attentionPlayground.weights()) equal to NumPy's W in float32. The same notebook as
// nbconvert HTML, over http and from file://. Skips (with the reason) only when jupyter is missing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, DIST, SHOTS } from './helpers.mjs';

const PY = '/usr/bin/python3';
function jupyterMissing() {
  try {
    execFileSync(PY, ['-c', 'import notebook, nbclient, nbconvert, nbformat, ipykernel'], { stdio: 'pipe' });
    execFileSync('jupyter-notebook', ['--version'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'Debian’s classic notebook is not installed (apt-get install --no-install-recommends jupyter-notebook python3-notebook python3-nbclient python3-nbconvert jupyter-nbconvert python3-ipykernel)';
  }
}
const missing = jupyterMissing();

function freePort() {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function waitHttp(url, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch { /* not yet */ }
    if (Date.now() > end) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let home, nbPath, appPort, procs = [], browser, files;
// The servers this file starts end with it, even when a timeout skips the after() hook.
process.on('exit', () => procs.forEach((p) => p.kill('SIGTERM')));
const NB = 'student.ipynb';

before(async () => {
  if (missing) return;
  ensureBuilt();
  home = mkdtempSync(join(tmpdir(), 'ap-notebook-'));
  appPort = await freePort();
  // The student's notebook: the helper from dist/, lesson 2's W with NumPy, written from the
  // definition of causal scaled dot-product attention; W saved as the test's reference.
  const cells = [
    `import sys, json\nsys.path.insert(0, ${JSON.stringify(DIST)})\nimport numpy as np\nimport attention_playground as ap\nsrv = ap.serve(${JSON.stringify(DIST)}, port=${appPort})`,
    [
      'T, d, dk = 6, 8, 4',
      'rng = np.random.default_rng(0)',
      'X = rng.normal(size=(T, d))',
      'Wq, Wk, Wv = (rng.normal(size=(d, dk)) for _ in range(3))',
      'Q, K = X @ Wq, X @ Wk',
      'S = Q @ K.T / np.sqrt(dk)',
      'S[np.triu_indices(T, 1)] = -np.inf',
      'W = np.exp(S - S.max(axis=1, keepdims=True))',
      'W = W / W.sum(axis=1, keepdims=True)',
      'big = np.random.default_rng(1).random((160, 160)); big /= big.sum(axis=1, keepdims=True)',
      `json.dump({"W": W.tolist(), "big": big.astype(np.float32).astype(float).ravel().tolist()}, open(${JSON.stringify(join(home, 'reference.json'))}, "w"))`,
      'print(np.round(W, 2))',
    ].join('\n'),
    'ap.show(W, tokens=["t%d" % i for i in range(T)])',
    'ap.show(big.astype(np.float32), height=520)',
  ];
  nbPath = join(home, NB);
  execFileSync(PY, ['-c', `import nbformat, sys, json\nnb = nbformat.v4.new_notebook()\nnb.cells = [nbformat.v4.new_code_cell(s) for s in json.loads(sys.argv[2])]\nnbformat.write(nb, sys.argv[1])`, nbPath, JSON.stringify(cells)]);
  const env = { ...process.env, HOME: home, JUPYTER_CONFIG_DIR: join(home, '.jupyter'), JUPYTER_DATA_DIR: join(home, '.local/share/jupyter'), JUPYTER_RUNTIME_DIR: join(home, 'runtime') };
  execFileSync(PY, ['-c', 'import nbformat, nbclient, sys\nnb = nbformat.read(sys.argv[1], 4)\nnbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()\nnbformat.write(nb, sys.argv[1])', nbPath, home], { env, stdio: 'inherit' });
  execFileSync(PY, ['-m', 'nbformat.sign', nbPath], { env, stdio: 'inherit' });
  execFileSync('jupyter-nbconvert', ['--to', 'html', nbPath], { env, stdio: 'pipe' });
  // The kernel (and its serve() thread) ended with the execution: the helper serves dist/ again on
  // the same port, as the student's next session would.
  procs.push(spawn(PY, ['-c', `import sys, time\nsys.path.insert(0, ${JSON.stringify(DIST)})\nimport attention_playground as ap\nap.serve(${JSON.stringify(DIST)}, port=${appPort})\ntime.sleep(3600)`], { stdio: 'ignore' }));
  const nbPort = await freePort();
  procs.push(spawn('jupyter-notebook', ['--no-browser', '--allow-root', '--ip=127.0.0.1', `--port=${nbPort}`, "--NotebookApp.token=", "--NotebookApp.password=", `--notebook-dir=${home}`], { env, stdio: 'ignore' }));
  await waitHttp(`http://127.0.0.1:${appPort}/index.html`);
  await waitHttp(`http://127.0.0.1:${nbPort}/api`);
  process.env.AP_NB_URL = `http://127.0.0.1:${nbPort}`;
  files = await serve(home);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await files?.close();
  for (const p of procs) p.kill('SIGTERM');
});

/** The playground frames of a page, in document order, once each has drawn. */
async function playgroundFrames(page, n) {
  await page.waitForFunction((k) => document.querySelectorAll('iframe[title="Attention Playground"]').length >= k, n, { timeout: 30000 });
  const handles = await page.$$('iframe[title="Attention Playground"]');
  const frames = [];
  for (const h of handles) {
    await h.scrollIntoViewIfNeeded();
    const f = await h.contentFrame();
    await f.waitForFunction(() => window.__attentionPlayground?.weights()?.arrays === 'weights', null, { timeout: 30000 });
    frames.push(f);
  }
  return frames;
}

async function checkFrames(page, label) {
  const ref = JSON.parse(readFileSync(join(home, 'reference.json'), 'utf8'));
  const [small, large] = await playgroundFrames(page, 2);
  const a = await small.evaluate(() => window.__attentionPlayground.weights());
  assert.deepEqual(a.tokens, ['t0', 't1', 't2', 't3', 't4', 't5'], label);
  // The heatmap's cells: NumPy's W in float32, exactly (the link carries float32 bits).
  assert.deepEqual(a.weights, ref.W.flat().map(Math.fround), label);
  // What the page found, on the closed panel's summary line (compact embed).
  assert.match(await small.locator('[data-testid=arrays-summary]').innerText(), /W 6 × 6: rows sum to 1, causal/, label);
  const b = await large.evaluate(() => window.__attentionPlayground.weights());
  assert.equal(b.t, 160, label);
  assert.deepEqual(b.weights, ref.big, `${label}: the 160 × 160 W sent by postMessage`);
  return [small, large];
}

test('the classic notebook, live: ap.show(W) draws NumPy’s W; a large W arrives by postMessage', { skip: missing ?? false }, async () => {
  for (const width of [1280, 390]) {
    const ctx = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await ctx.newPage();
    const w = watch(page);
    await page.goto(`${process.env.AP_NB_URL}/notebooks/${NB}`);
    await page.waitForSelector('#notebook-container .output_area', { timeout: 30000 });
    // Signed: the notebook opens trusted, so its iframes and the helper's script are kept.
    await page.waitForFunction(() => window.Jupyter?.notebook?.trusted === true, null, { timeout: 30000 });
    const [small] = await checkFrames(page, `live notebook at ${width}px`);
    await (await small.frameElement()).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, `notebook-live-${width}.png`) });
    // Jupyter's own console noise (kernel websocket, missing custom.css) is not the playground's.
    assert.deepEqual(w.errors.filter((e) => /attention|playground/i.test(e)), []);
    await ctx.close();
  }
});

test('the same notebook as nbconvert HTML, over http and from file://', { skip: missing ?? false }, async () => {
  const html = NB.replace(/\.ipynb$/, '.html');
  for (const url of [`${files?.url}/${html}`, `file://${join(home, html)}`]) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(url);
    await checkFrames(page, url.startsWith('file:') ? 'nbconvert HTML from file://' : 'nbconvert HTML over http');
    if (url.startsWith('file:')) await page.screenshot({ path: join(SHOTS, 'notebook-nbconvert-file.png') });
    await ctx.close();
  }
});

test('jupyter is available for the notebook tests', { skip: missing ? `skipped: ${missing}` : false }, () => {
  writeFileSync(join(home, 'ok'), 'ok');
});
