// The anywidget module (dist/attention_playground_widget.js) under the real widget protocol, offline:
// a host page loads RequireJS (Debian's libjs-requirejs), the Jupyter widget manager that renders
// widget state without a kernel (@jupyter-widgets/html-manager's embed-amd.js, as nbconvert and
// "embed widgets" pages use it) and anywidget's own front end (its AMD bundle from npm, which
// defines the AnyModel / AnyView classes the manager asks for when a model names the module
// "anywidget"). Both from tests/widgets/ (npm ci --prefix tests/widgets). The page builds the
// widget state a notebook saves for an anywidget widget (`_esm`, `_anywidget_id` and our traits),
// lets the manager create the model and view, and anywidget loads our ESM and calls its render().
// Checked: the playground frame shows lesson 2's W (NumPy, as the notebook helper encodes it) in
// its heatmap, cell for cell; a kernel-style update of the traits (model.set_state, what the
// manager does with an "update" message) redraws; a 160 × 160 W goes by postMessage; the ESM given inline (anywidget's Python side
// sends the file's text, which anywidget imports from a blob: URL) works with the `url` trait and
// says what is missing without it; removing the view removes the frame.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, serve, launch, watch, ROOT, SHOTS, DIST } from './helpers.mjs';

const MODULES = join(ROOT, 'tests/widgets/node_modules');
const REQUIRE = '/usr/share/javascript/requirejs/require.min.js';
const ANYWIDGET_VERSION = JSON.parse(readFileSync(join(ROOT, 'tests/widgets/package.json'), 'utf8')).dependencies.anywidget;

let app, host, browser, oracle, links;
before(async () => {
  assert.ok(existsSync(join(MODULES, 'anywidget/dist/index.js')), 'anywidget missing: npm ci --prefix tests/widgets');
  assert.ok(existsSync(join(MODULES, '@jupyter-widgets/html-manager/dist/embed-amd.js')), 'html-manager missing: npm ci --prefix tests/widgets');
  assert.ok(existsSync(REQUIRE), 'RequireJS missing: apt-get install libjs-requirejs');
  ensureBuilt();
  app = await serve();
  const dir = mkdtempSync(join(tmpdir(), 'ap-widget-protocol-'));
  execFileSync('/usr/bin/python3', [join(ROOT, 'tests/oracle/student_arrays.py'), dir], { stdio: 'inherit' });
  oracle = JSON.parse(readFileSync(join(dir, 'lesson2.json'), 'utf8'));
  links = JSON.parse(readFileSync(join(dir, 'links.json'), 'utf8'));
  // The host's own files, on another origin than the playground (as a notebook front end is).
  mkdirSync(join(dir, 'lib'));
  copyFileSync(REQUIRE, join(dir, 'lib/require.min.js'));
  copyFileSync(join(MODULES, '@jupyter-widgets/html-manager/dist/embed-amd.js'), join(dir, 'lib/embed-amd.js'));
  copyFileSync(join(MODULES, 'anywidget/dist/index.js'), join(dir, 'lib/anywidget.js'));
  host = await serve(dir, { '/host.html': hostPage() });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await host?.close();
  await app?.close();
});

/** The widget state a notebook would save for one anywidget widget and its layout (schema v2). */
function widgetState(id, traits) {
  return {
    version_major: 2,
    version_minor: 0,
    state: {
      [`${id}-layout`]: { model_name: 'LayoutModel', model_module: '@jupyter-widgets/base', model_module_version: '2.0.0', state: {} },
      [id]: {
        model_name: 'AnyModel',
        model_module: 'anywidget',
        model_module_version: ANYWIDGET_VERSION,
        state: {
          _model_name: 'AnyModel', _model_module: 'anywidget', _model_module_version: ANYWIDGET_VERSION,
          _view_name: 'AnyView', _view_module: 'anywidget', _view_module_version: ANYWIDGET_VERSION,
          _anywidget_id: 'attention_playground.Widget', _css: '',
          layout: `IPY_MODEL_${id}-layout`,
          ...traits,
        },
      },
    },
  };
}

function hostPage() {
  // The CDN the manager would fall back to is this host itself: nothing leaves the machine, and a
  // module the page cannot find locally fails here instead of loading from the internet.
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script src="lib/require.min.js"></script>
<script>requirejs.config({ paths: { anywidget: 'lib/anywidget' } });</script>
<script src="lib/embed-amd.js" data-jupyter-widgets-cdn="/cdn/"></script>
</head><body><div id="out"></div><script>
  // As @jupyter-widgets/html-manager's libembed does for a saved notebook: one manager, set_state,
  // create_view, display_view; the manager loads "anywidget" through RequireJS (requireLoader).
  // RequireJS's callback must be a plain function: it does not call an async one (its type check
  // sees "[object AsyncFunction]"), and the page then waits forever with no error.
  window.show = (state, id) => new Promise((resolve, reject) => {
    requirejs(['@jupyter-widgets/html-manager'], (hm) => {
      (async () => {
        const manager = new hm.HTMLManager({ loader: hm.requireLoader });
        const models = await manager.set_state(state);
        const model = models.find((m) => m.model_id === id);
        const box = document.createElement('div');
        box.className = 'widget-subarea';
        document.getElementById('out').append(box);
        const view = await manager.create_view(model);
        await manager.display_view(view, box);
        window.widgets = { ...(window.widgets ?? {}), [id]: { manager, model, view, box } };
        return model.get('_model_name') + ' ' + view.constructor.name;
      })().then(resolve, (e) => reject(String((e && e.stack) || e)));
    }, (e) => reject(String(e)));
  });
</script></body></html>`;
}

async function frameOf(page, id) {
  const handle = await page.waitForSelector(`#out .widget-subarea iframe[src*="id="]`, { timeout: 20000 });
  assert.ok(handle, id);
  return handle.contentFrame();
}

test('anywidget + the html-manager render our ESM: the frame shows the model’s W; a kernel update redraws; removing the view removes the frame', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(host.url + '/host.html');
  const esm = app.url + '/attention_playground_widget.js';
  const tokens = ['t0', 't1', 't2', 't3', 't4', 't5'];
  const made = await page.evaluate(([s, id]) => window.show(s, id), [widgetState('w1', { _esm: esm, weights: links.W, tokens, options: { causal: 1 }, view: 'heads', height: 560 }), 'w1']);
  assert.equal(made, 'AnyModel AnyView', 'the manager made anywidget’s model and view');
  const frame = await frameOf(page, 'w1');
  await frame.waitForFunction(() => window.__attentionPlayground?.ready() && window.__attentionPlayground.weights()?.arrays === 'weights', null, { timeout: 30000 });
  const a = await frame.evaluate(() => window.__attentionPlayground.weights());
  assert.deepEqual(a.tokens, tokens);
  assert.equal(a.t, 6);
  // The heatmap's cells: NumPy's W in float32, exactly (the link carries float32 bits).
  assert.deepEqual(a.weights, oracle.arrays.W.flat().map(Math.fround));
  assert.equal(await frame.evaluate(() => window.__attentionPlayground.state().page.view), 'heads');
  const heat = await frame.$('.heatmap canvas, .heatmap svg, canvas');
  assert.ok(heat && (await heat.boundingBox()).width > 40, 'the heatmap is drawn');
  assert.equal(await page.$eval('#out iframe', (f) => f.style.height), '560px');
  await page.screenshot({ path: join(SHOTS, 'widget-protocol.png') });

  // A kernel-style update: the view trait and the tokens change; the widget draws the new frame.
  await page.evaluate(() => window.widgets.w1.model.set_state({ view: 'mask', tokens: ['a', 'b', 'c', 'd', 'e', 'f'] }));
  await page.waitForFunction(() => /view=mask/.test(document.querySelector('#out iframe').src));
  const f2 = await frameOf(page, 'w1');
  await f2.waitForFunction(() => window.__attentionPlayground?.ready() && window.__attentionPlayground.state().page.view === 'mask', null, { timeout: 30000 });
  await f2.waitForFunction(() => window.__attentionPlayground.weights()?.tokens.join(' ') === 'a b c d e f', null, { timeout: 30000 });
  assert.deepEqual((await f2.evaluate(() => window.__attentionPlayground.weights())).weights, oracle.arrays.W.flat().map(Math.fround));

  // A W too large for the link (160 × 160): the frame asks, the widget answers by postMessage.
  await page.evaluate((v) => window.widgets.w1.model.set_state({ tokens: [], weights: v }), links.big);
  await page.waitForFunction(() => /arrays=post/.test(document.querySelector('#out iframe').src));
  const f3 = await frameOf(page, 'w1');
  await f3.waitForFunction(() => window.__attentionPlayground?.weights()?.t === 160, null, { timeout: 30000 });
  assert.deepEqual((await f3.evaluate(() => window.__attentionPlayground.weights())).weights, oracle.big);

  // Removing the view (a cell cleared or re-run) runs our cleanup: the frame goes.
  await page.evaluate(() => window.widgets.w1.view.remove());
  await page.waitForFunction(() => document.querySelector('#out iframe') === null, null, { timeout: 5000 });
  assert.deepEqual(w.errors, []);
  await ctx.close();
});

test('the ESM inline, as anywidget’s Python side sends it (a blob: module): works with the url trait, says what is missing without it', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(host.url + '/host.html');
  const source = readFileSync(join(DIST, 'attention_playground_widget.js'), 'utf8');
  await page.evaluate(([s, id]) => window.show(s, id), [widgetState('w2', { _esm: source, weights: links.W, view: 'heads', url: app.url + '/' }), 'w2']);
  const frame = await frameOf(page, 'w2');
  await frame.waitForFunction(() => window.__attentionPlayground?.weights()?.arrays === 'weights', null, { timeout: 30000 });
  assert.deepEqual((await frame.evaluate(() => window.__attentionPlayground.weights())).weights, oracle.arrays.W.flat().map(Math.fround));
  await page.evaluate(() => window.widgets.w2.view.remove());

  // No url: a blob: module has no folder to find the playground in; the widget says so in its box.
  await page.evaluate(([s, id]) => window.show(s, id), [widgetState('w3', { _esm: source, weights: links.W }), 'w3']);
  const note = page.locator('#out .widget-subarea [data-attention-playground-error]');
  await note.waitFor({ timeout: 20000 });
  assert.match(await note.innerText(), /url/);
  assert.equal(await page.$('#out iframe'), null);
  await page.screenshot({ path: join(SHOTS, 'widget-protocol-no-url.png') });
  // The url arriving later (a kernel update) replaces the note with the frame.
  await page.evaluate((u) => window.widgets.w3.model.set_state({ url: u }), app.url + '/');
  const f3 = await frameOf(page, 'w3');
  await f3.waitForFunction(() => window.__attentionPlayground?.weights()?.arrays === 'weights', null, { timeout: 30000 });
  assert.equal(await note.count(), 0);
  assert.deepEqual(w.errors, []);
  await ctx.close();
});
