// The Text model tab in Chromium, on the tiny fixture model (tests/fixtures/text-model/, served
// where the page looks for the shipped one, models/sotu-bpe/): a link opens it on the text, the
// checkpoint and the head it names; the grid shows every head with its role; the scrubber
// (keyboard) changes the checkpoint; a character's top 5 appear on focus; the thumbnails and the
// knock-out toggles are buttons; the export; model.json's shippedNote; a missing model is an
// error naming the file; 375 and 233 px without sideways scrolling; ?embed=1; no console errors.
// Screenshots go to SHOTS/text-*.png. No timed assertions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { DIST, ROOT, SHOTS, ensureBuilt, launch, watch } from './helpers.mjs';

const MODEL = join(ROOT, 'tests', 'fixtures', 'text-model');
const NOTE = 'The fixture model is tiny: no head reaches an induction score of 0.4.';
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };

/** dist/ at /, and the same page under /note/ (its model.json carries a shippedNote) and under
 *  /missing/ (no model); models/sotu-bpe/ is the fixture model in all three. Under /real/ the
 *  page as built, with the shipped model. */
async function serveWithModel() {
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      const prefix = /^\/(note|missing|real)\//.exec(path)?.[1] ?? '';
      if (prefix) path = path.slice(prefix.length + 1);
      let file;
      if (path.startsWith('/models/sotu-bpe/') && prefix !== 'real') {
        if (prefix === 'missing') throw new Error('no model');
        file = normalize(join(MODEL, path.slice('/models/sotu-bpe/'.length)));
        if (!file.startsWith(MODEL)) throw new Error('outside');
        if (prefix === 'note' && path.endsWith('/model.json')) {
          const j = JSON.parse(await readFile(file, 'utf8'));
          j.shippedNote = NOTE;
          res.writeHead(200, { 'content-type': TYPES['.json'] });
          res.end(JSON.stringify(j));
          return;
        }
      } else {
        file = normalize(join(DIST, path));
        if (!file.startsWith(DIST)) throw new Error('outside');
        if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      }
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

let server, browser;
before(async () => {
  ensureBuilt();
  server = await serveWithModel();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const ROLES = ['previous-token', 'induction', 'duplicate-token', 'first-token', 'mixed'];
const TEXT = 'Mr. Lincoln spoke, then Mr. Lincoln';

async function open(path, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(server.url + path);
  await page.getByTestId('text-view').waitFor();
  return { page, context, ...w };
}

/** Wait until the view shows checkpoint `step` with nothing computing. */
async function shown(page, step) {
  await page.waitForFunction(
    (s) => {
      const v = document.querySelector('[data-testid="text-view"]');
      return v?.dataset.status === 'ready' && (s === null || v.dataset.step === String(s));
    },
    step,
    { timeout: 30000, polling: 50 },
  );
}

const noOverflow = (page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
/** The link is written once changes pause (app/link-writer.ts): wait for it. */
const linkMatches = (page, re) => page.waitForFunction((src) => new RegExp(src).test(location.hash), re.source, { timeout: 10000 });

test('a link opens the text, the checkpoint and the head it names; every head shows its role', async () => {
  const { page, context, errors } = await open(`/#v=1&view=text&text=${encodeURIComponent(TEXT)}&ckpt=4&thead=2.1`);
  await shown(page, 4);
  assert.equal(await page.getByRole('tab', { name: 'Text' }).getAttribute('aria-selected'), 'true');
  assert.equal(await page.getByTestId('text-input').inputValue(), TEXT);
  // The fixture model reads 32 characters: the text is 35, so the first 3 are cut, and it says so.
  assert.match(await page.getByTestId('text-cut').textContent(), /at most 32 characters: the first 3 of your text's characters are not shown or read/);
  assert.equal(await page.locator('.tx-tok').count(), 32);
  assert.equal(await page.locator('.tx-thumb').count(), 4);
  for (const [l, h] of [[1, 1], [1, 2], [2, 1], [2, 2]]) {
    const thumb = page.getByTestId(`text-head-${l}-${h}`);
    assert.ok(ROLES.includes(await thumb.locator('.tx-role').textContent()), `L${l} H${h} has a role`);
    assert.match(await thumb.locator('.tx-scores').textContent(), /^text: prev \d\.\d\d ind \d\.\d\d dup \d\.\d\d first \d\.\d\d$/);
    assert.match(await thumb.locator('.tx-probe').textContent(), /^probe: ind \d\.\d\d prev \d\.\d\d$/);
  }
  assert.equal(await page.getByTestId('text-head-2-1').getAttribute('aria-pressed'), 'true');
  assert.match(await page.getByTestId('text-zoom-title').textContent(), /^L2 H1 at step 4$/);
  assert.match(await page.getByTestId('text-model-about').textContent(), /2 layers of 2 attention heads, d_model 16.*Shown: checkpoint step 4 \(1,024 training tokens\), held-out loss \d\.\d{3} nats per character\./);
  assert.match(await page.getByTestId('text-role-rule').textContent(), /at least 0\.4; else “mixed”\. The names \(previous-token, induction, duplicate-token, first-token, mixed\)/);
  // Nothing is redrawn once the view is ready (a redraw loop once rebuilt the cells every frame).
  const cell = await page.locator('.tx-tok').first().elementHandle();
  await page.waitForTimeout(500);
  assert.equal(await cell.evaluate((e) => e.isConnected), true, 'the cells stay');
  await page.getByTestId('text-definitions').locator('summary').click();
  await page.screenshot({ path: join(SHOTS, 'text-model-1280.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard only: the scrubber changes the checkpoint, a character shows its top 5, a thumbnail zooms', async () => {
  const { page, context, errors } = await open(`/#v=1&view=text&text=${encodeURIComponent('the cat sat. the cat sat.')}`);
  await shown(page, 24); // the last checkpoint by default
  const range = page.getByTestId('text-ckpt');
  assert.equal(await range.inputValue(), '2');
  assert.match(await page.getByTestId('text-ckpt-label').textContent(), /^step 24 of 24, 6,144 training tokens$/);
  await range.focus();
  await page.keyboard.press('Home');
  await shown(page, 0);
  await linkMatches(page, /&ckpt=0(&|$)/);
  await page.keyboard.press('ArrowRight');
  await shown(page, 4);
  await linkMatches(page, /&ckpt=4(&|$)/);
  assert.match(await page.locator('svg[data-series="heldOutLoss"]').getAttribute('aria-label'), /at the checkpoint shown \(step 4\) \d\.\d{3}/);
  await page.keyboard.press('End');
  await shown(page, 24);
  await linkMatches(page, /^(?!.*ckpt=)/); // the last checkpoint is the default: not in the link

  // The characters: one tab stop; arrows move; each shows the 5 most probable next characters.
  await page.locator('.tx-tok[tabindex="0"]').focus();
  await page.keyboard.press('Home');
  const top = page.getByTestId('text-top5');
  assert.equal(await top.getAttribute('data-pos'), '0');
  assert.equal(await top.locator('li').count(), 5);
  const ps = (await top.locator('.tx-top-p').allTextContents()).map((t) => Number(t.replace(' %', '')));
  assert.ok(ps.every((p, i) => i === 0 || p <= ps[i - 1]), `descending: ${ps}`);
  await page.keyboard.press('ArrowRight');
  assert.equal(await top.getAttribute('data-pos'), '1');
  assert.match(await page.getByTestId('text-next').textContent(), /After “th” \(character 1\), checkpoint step 24 predicts:.*The text goes on with ‘e’: p = \d+\.\d %, surprise \d\.\d\d nats/);

  // A thumbnail is a button: Enter zooms it (and puts it in the link).
  await page.getByTestId('text-head-1-2').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash.includes('thead=1.2'));
  await page.waitForFunction(() => document.querySelector('[data-testid="text-zoom-title"]').textContent.startsWith('L1 H2 at step 24'));
  // Knock it out with the keyboard: the view says what changed on the text, on the trainer's
  // held-out windows and on the probe (NumPy's figures: tests/fixtures/text-view.json).
  await page.getByTestId('text-knock-1-2').focus();
  await page.keyboard.press('Space');
  await page.waitForFunction(() => !document.querySelector('[data-testid="text-ablation"]').hidden);
  await shown(page, 24);
  assert.equal(await page.getByTestId('text-knock-1-2').getAttribute('aria-pressed'), 'true');
  const ko = JSON.parse(await readFile(new URL('../fixtures/text-view.json', import.meta.url), 'utf8')).knockout;
  const f3 = (x) => (x < 0 ? '−' : '') + Math.abs(x).toFixed(3);
  const said = await page.getByTestId('text-ablation').textContent();
  assert.match(said, /^Knocked out: L1 H2\. On your text: mean surprise \d\.\d{3} nats intact, \d\.\d{3} with it knocked out \([+−]\d\.\d{3}\)/);
  assert.ok(
    said.includes(`On the trainer's ${ko.windows} held-out windows (addresses it never trained on): held-out loss ${f3(ko.intact.heldOutLoss)} nats/char intact, ${f3(ko.knockedOut.heldOutLoss)} with it knocked out`),
    said,
  );
  assert.ok(said.includes(`in-context score ${f3(ko.intact.inContext)} intact, ${f3(ko.knockedOut.inContext)} knocked out`), said);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('text-export-json').click()]);
  const e = JSON.parse(await readFile(await dl.path(), 'utf8'));
  assert.deepEqual(Object.keys(e).sort(), ['ablated', 'checkpoint', 'droppedChars', 'generated', 'ids', 'knockout', 'layers', 'logprobs', 'next', 'text', 'tokens'].sort());
  const rel = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));
  assert.ok(rel(e.knockout.heldOutLoss.knockedOut, ko.knockedOut.heldOutLoss) < 1e-5, JSON.stringify(e.knockout));
  assert.ok(rel(e.knockout.inContext.knockedOut, ko.knockedOut.inContext) < 1e-5, JSON.stringify(e.knockout));
  assert.deepEqual([e.knockout.windows, e.knockout.probeRows], [ko.windows, ko.probeRows]);
  assert.equal(e.generated, null); // no continuation asked for
  assert.equal(e.text, 'the cat sat. the cat sat.');
  assert.equal(e.checkpoint, 24);
  assert.deepEqual(e.ablated, [[0, 1]]);
  assert.equal(e.layers.length, 2);
  assert.equal(e.layers[1].heads[0].weights.length, 25);
  assert.ok(ROLES.includes(e.layers[0].heads[1].role));
  assert.equal(e.next.length, 25);
  assert.equal(e.next[0].length, 5);
  assert.equal(e.logprobs.length, 24);
  await page.getByTestId('text-view').screenshot({ path: join(SHOTS, 'text-model-knocked-out.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a step the model does not have: the nearest, said; typing reruns and rewrites the link', async () => {
  const { page, context, errors } = await open('/#v=1&view=text&ckpt=5&thead=3.1');
  await shown(page, 4);
  const notes = await page.getByTestId('text-notices').textContent();
  assert.match(notes, /no checkpoint at step 5; showing the nearest, step 4\./);
  assert.match(notes, /there is no L3 H1; showing L1 H1\./);
  await page.getByTestId('text-input').fill('hello hello');
  await page.waitForFunction(() => document.querySelector('[data-testid="text-view"]').dataset.tokens === '11');
  await shown(page, 4);
  await linkMatches(page, /text=hello%20hello/);
  assert.equal(await page.getByTestId('text-cut').isHidden(), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('model.json’s shippedNote is shown prominently', async () => {
  const { page, context, errors } = await open('/note/#v=1&view=text');
  await shown(page, 24);
  const note = page.getByTestId('text-shipped-note');
  assert.equal(await note.isVisible(), true);
  // The note, then the trainer's targets the fixture model misses (its model.json has them).
  const said = await note.textContent();
  assert.ok(said.startsWith(`What this model misses: ${NOTE}`), said);
  assert.match(said, /This model misses 5 of the 5 targets set for it \(the trainer's own figures at its last checkpoint, step 24; met: none\)/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('no model: an error naming the file, and the rest of the page works', async () => {
  const { page, context } = await open('/missing/#v=1&view=text');
  await page.waitForFunction(() => document.querySelector('[data-testid="text-view"]').dataset.status === 'error');
  assert.match(await page.getByTestId('text-status').textContent(), /^The model’s files could not be used: model\.json: \(file\): HTTP 404/);
  await page.getByRole('tab', { name: 'Heads' }).click();
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await context.close();
});

test('375 px and 233 px: no sideways scrolling; ?embed=1', async () => {
  for (const width of [375, 233]) {
    const { page, context, errors } = await open(`/#v=1&view=text&text=${encodeURIComponent(TEXT)}&thead=2.2`, { width, height: 900 });
    await shown(page, 24);
    assert.ok(await noOverflow(page), `no sideways scrolling at ${width} px`);
    await page.getByTestId('text-view').screenshot({ path: join(SHOTS, `text-model-${width}.png`) });
    assert.deepEqual(errors, []);
    await context.close();
  }
  const { page, context, errors } = await open(`/?embed=1#v=1&view=text&text=${encodeURIComponent(TEXT)}`, { width: 375, height: 700 });
  await shown(page, 24);
  assert.ok(await noOverflow(page), 'embedded: no sideways scrolling');
  assert.equal(await page.locator('.tx-thumb').count(), 4);
  await page.screenshot({ path: join(SHOTS, 'text-model-embed-375.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('continue the text: a link generates at once, the same on reload; greedy differs; keyboard; 375 px', async () => {
  const prompt = 'the cat sat. the cat';
  const link = `/#v=1&view=text&text=${encodeURIComponent(prompt)}&tgen=1&temp=0.8&topk=5&sseed=3`;
  const generated = async (page) => {
    await shown(page, null);
    const g = page.getByTestId('text-generated');
    await g.waitFor();
    return g.getAttribute('data-text');
  };
  const { page, context, errors } = await open(link);
  const first = await generated(page);
  // 20 characters of prompt in a 32-character model: 12 fit (dlen 40 asked), and the panel says so.
  assert.equal(Array.from(first).length, 12);
  assert.match(await page.getByTestId('text-gen-info').textContent(), /^12 characters, sampled at temperature 0\.8, top-k 5, seed 3\. Only 12 more fit/);
  assert.equal(await page.locator('.tx-gen-prompt').textContent(), prompt);
  await page.reload();
  assert.equal(await generated(page), first, 'the same link gives the same continuation');
  // The Decode tab's form of the same link (view=decode&src=text) opens here and generates it too.
  await page.goto(server.url + link.replace('view=text', 'view=decode&src=text').replace('&tgen=1', ''));
  assert.equal(await generated(page), first, 'view=decode&src=text continues the text in this tab');
  assert.match(await page.getByTestId('notices').textContent(), /src=text: the model trained on real text is shown in the Text tab, so the decode view opens there/);
  await page.goto(server.url + link);
  // Keyboard: from the Generate button, Tab reaches the first generated character; its bars show.
  await page.getByTestId('text-generate').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('tx-gen-char')), true);
  assert.equal(await page.locator('.tx-gen-bar').count(), 5);
  assert.match(await page.getByTestId('text-gen-bars').textContent(), /^Character 1 /);
  // Greedy (keyboard: the radio) gives other text, and the link says so.
  await page.getByTestId('text-gen-greedy').focus();
  await page.keyboard.press('Space');
  await page.waitForFunction(
    (f) => {
      const g = document.querySelector('[data-testid="text-generated"]');
      return g && g.getAttribute('data-text') !== f && document.querySelector('[data-testid="text-view"]')?.dataset.status === 'ready';
    },
    first,
    { timeout: 30000, polling: 50 },
  );
  assert.match(await page.getByTestId('text-gen-info').textContent(), /^12 characters, greedy\./);
  await linkMatches(page, /tgen=1/);
  assert.doesNotMatch(await page.evaluate(() => location.hash), /temp=/);
  assert.equal(await page.evaluate(() => window.__textModel.export().generated.length), 12);
  await page.getByTestId('text-continue').screenshot({ path: join(SHOTS, 'text-model-continue.png') });
  assert.deepEqual(errors, []);
  await context.close();
  const narrow = await open(link, { width: 375, height: 800 });
  assert.equal(await generated(narrow.page), first);
  assert.equal(await noOverflow(narrow.page), true, '375 px: no sideways scrolling');
  await narrow.page.getByTestId('text-continue').screenshot({ path: join(SHOTS, 'text-model-continue-375.png') });
  assert.deepEqual(narrow.errors, []);
  await narrow.context.close();
});

test('the attention views’ model picker leads to the text model with the sentence as its text', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const { errors } = watch(page);
  await page.goto(server.url + '/#v=1&view=heads&tokens=the+cat+sat+on+the+mat');
  const a = page.getByTestId('source-text-link');
  assert.equal(await a.textContent(), 'the model trained on real English (Text tab)');
  await a.focus();
  await page.keyboard.press('Enter');
  await shown(page, null);
  assert.equal(await page.getByTestId('text-input').inputValue(), 'the cat sat on the mat');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the shipped model: SentencePiece pieces as the cells, and on a sentence typed twice a layer-2 induction head', async () => {
  // The ids are python3-sentencepiece's (tests/fixtures/bpe-tokenizer.json, its last case).
  const ref = JSON.parse(await readFile(join(ROOT, 'tests', 'fixtures', 'bpe-tokenizer.json'), 'utf8'));
  const { text, ids } = ref.cases.at(-1);
  const { page, context, errors } = await open(`/real/#v=1&view=text&text=${encodeURIComponent(text)}`);
  await shown(page, null);
  assert.match(await page.getByTestId('text-model-about').textContent(), /reads SentencePiece BPE tokens \(256 pieces/);
  const e = await page.evaluate(() => window.__textModel.export());
  assert.deepEqual(e.ids, ids);
  assert.equal(e.tokens.join(''), text);
  assert.equal(await page.locator('.tx-tok').count(), ids.length);
  // A piece's leading space is drawn as ␣.
  assert.ok((await page.locator('.tx-tok .tx-ch').allTextContents()).some((t) => /^␣\w/.test(t)));
  // A layer-2 head whose largest score on the text is induction (the core's text scores), and the
  // second copy predicted better than the first (the model's own surprise).
  const ind = e.layers[1].heads.map((h) => h.scores.induction);
  const best = e.layers[1].heads[ind.indexOf(Math.max(...ind))].scores;
  assert.ok(best.induction >= 0.2 && best.induction === Math.max(...Object.values(best)), JSON.stringify(best));
  const half = Math.floor(e.logprobs.length / 2);
  const mean = (xs) => -xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.ok(mean(e.logprobs.slice(half)) < mean(e.logprobs.slice(0, half)) - 0.5, 'the second copy is predicted better');
  assert.ok(e.layers[0].heads.some((h) => h.role === 'previous-token'), 'a layer-1 previous-token head');
  await page.screenshot({ path: join(SHOTS, 'text-model-shipped-1280.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});
