// The Train tab's two seeds, its score-gradient readout and "Open in Heads view", in Chromium
// against dist/. Every figure the page shows is compared with the attn_train module under Node
// (same config, same steps: the same bits, tests/browser/train.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { join } from 'node:path';
import { ROOT, SHOTS, servedBrowser, watch } from './helpers.mjs';

const env = servedBrowser();
let libPromise = null;
function nodeLib() {
  libPromise ??= (async () => {
    const dir = join(ROOT, 'build', 'wasm');
    const { default: create } = await import(join(dir, 'attn_train.mjs'));
    return create({ wasmBinary: fs.readFileSync(join(dir, 'attn_train.wasm')) });
  })();
  return libPromise;
}
const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));
const losses = (page) => page.evaluate(() => window.__trainTab.history.lossArray());
async function open(hash, viewport = { width: 1280, height: 1000 }) {
  const page = await env.browser.newPage({ viewport });
  const w = watch(page);
  await page.goto(`${env.server.url}/${hash}`);
  return { page, w };
}
async function stopped(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 60000 });
}

test('dseed: the link’s data seed reaches the module; Compare “another init seed” keeps the data', async () => {
  const { page, w } = await open('#v=1&view=train&until=12&play=1&dseed=5&cmp=initseed');
  await stopped(page);
  await page.waitForFunction(() => window.__trainTab.compare()?.length === 12, null, { timeout: 60000 });
  const main = await losses(page);
  const other = await page.evaluate(() => window.__trainTab.compare());
  const lib = await nodeLib();
  const ref = (cfg) => {
    const tr = lib.createTrainer(cfg);
    const l = tr.train(12).loss;
    tr.delete();
    return l;
  };
  assert.deepEqual(bits(main), bits(ref({ seed: 0, dataSeed: 5 })), 'the page did not train on data seed 5');
  assert.notDeepEqual(bits(main), bits(ref({ seed: 0 })), 'data seed 5 and the derived one gave the same run');
  assert.deepEqual(bits(other), bits(ref({ seed: 1, dataSeed: 5 })), 'the comparison is not init seed 1 on data seed 5');
  assert.equal(await page.getByTestId('train-dseed').inputValue(), '5');
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('the gradient reaching the scores is shown, and is the module’s', async () => {
  const { page, w } = await open('#v=1&view=train&until=10&play=1&qks=none&dmodel=128&istd=1');
  await stopped(page);
  await page.waitForFunction(() => window.__trainTab.step() === 10);
  const text = await page.getByTestId('train-score-grad').textContent();
  const lib = await nodeLib();
  const tr = lib.createTrainer({ seed: 0, scale: 'none', dModel: 128, initStd: 1 });
  tr.train(10);
  const g = tr.scoreGradients();
  tr.delete();
  const sci = (x) => (x === 0 ? '0' : Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? x.toPrecision(3) : x.toExponential(2));
  for (let k = 0; k < 4; k++) assert.ok(text.includes(`L${(k >> 1) + 1}H${(k & 1) + 1} ${sci(g.scoreGrad[k])}`), `${text} lacks head ${k}: ${g.scoreGrad[k]}`);
  // the page counts layers and heads from 1 (module index + 1)
  assert.ok(text.includes(`L2 ${sci(g.wqGradNorm[1])}`), text);
  await page.locator('[data-testid=train-score-grad]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, 'train-score-grad.png') });
  assert.deepEqual(w.errors, []);
  await page.close();
});

test('Open in Heads view: the trained weights on the probe, per layer, labelled, with a way back', async () => {
  const { page, w } = await open('#v=1&view=train&until=20&play=1');
  await stopped(page);
  await page.getByTestId('train-probe').fill('5 9 2 7 5 9 2 7');
  await page.getByTestId('train-probe-use').click();
  await page.waitForFunction(() => /Probe: 8 tokens/.test(document.querySelector('[data-testid=train-status]').textContent));
  await page.getByTestId('train-open-heads').click();
  await page.waitForSelector('[data-testid=trained-banner]:not([hidden])');
  assert.equal(await page.getAttribute('#tab-heads', 'aria-selected'), 'true');
  // Layers and heads count from 1 in the text, as in the lessons (the second layer is "layer 2").
  // Tokens are labelled as the Train tab's probe maps label them: "t" + the token id.
  assert.match(await page.getByTestId('trained-text').textContent(), /Trained model \(Train tab, step 20\), layer 2 of 2, .* t5 t9 t2 t7 t5 t9 t2 t7\. Layers and heads count from 1/);
  assert.match(await page.locator('.zoom-title').textContent(), /^Trained model, layer 2, head 1 of 2/);
  assert.deepEqual(await page.$$eval('[data-testid=trained-layer] option', (os) => os.map((o) => o.textContent)), ['1', '2']);
  assert.doesNotMatch(await page.evaluate(() => location.hash), /view=heads.*trained|src=train/, 'nothing trained enters the link');
  // The zoomed head's table: the module's weights at step 20 on the same tokens.
  const lib = await nodeLib();
  const tr = lib.createTrainer({ seed: 0 });
  tr.train(20);
  const att = tr.attention([5, 9, 2, 7, 5, 9, 2, 7]).weights;
  tr.delete();
  const cells = async () => {
    await page.evaluate(() => { const d = document.querySelector('details.sr-table'); d.open = true; d.dispatchEvent(new Event('toggle')); });
    return page.evaluate(() => Array.from(document.querySelectorAll('.weights-table tbody td'), (td) => parseFloat(td.textContent)));
  };
  const T = 8;
  const check = (got, layer, head) => {
    assert.equal(got.length, T * T);
    const off = ((layer * 2) + head) * T * T;
    let worst = 0;
    for (let i = 0; i < T * T; i++) worst = Math.max(worst, Math.abs(got[i] - att[off + i]));
    assert.ok(worst < 1e-3, `layer ${layer} head ${head}: max |Δ| ${worst}`);
  };
  check(await cells(), 1, 0);
  // The table's key headers carry the same "t" labels (not "5", which reads like a position).
  const keys = await page.evaluate(() => Array.from(document.querySelectorAll('.weights-table thead th'), (th) => th.textContent));
  assert.deepEqual(keys.slice(1, 3), ["'t5' (0)", "'t9' (1)"]);
  await page.getByTestId('trained-layer').selectOption('0');
  await page.waitForFunction(() => /^Trained model, layer 1,/.test(document.querySelector('.zoom-title').textContent));
  check(await cells(), 0, 0);
  await page.screenshot({ path: join(SHOTS, 'train-open-heads.png') });
  // Back to Train: the run is still there; the Heads view without trained weights is the example again.
  await page.getByTestId('trained-back').click();
  await page.waitForFunction(() => document.querySelector('#tab-train').getAttribute('aria-selected') === 'true');
  assert.equal(await page.evaluate(() => window.__trainTab.step()), 20);
  await page.click('#tab-heads');
  await page.waitForFunction(() => document.querySelector('[data-testid=trained-banner]').hidden);
  assert.doesNotMatch(await page.locator('.zoom-title').textContent(), /Trained/);
  assert.deepEqual(w.errors, []);
  await page.close();
});
