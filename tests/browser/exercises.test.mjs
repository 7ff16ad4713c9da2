// Exercises in Chromium (docs/exercises.md): every exercise of the gallery, opened from its link,
// is not passed as it starts and passed once solved through the page's own controls (for a
// predict, bars set to the weights the page drew); Check runs on Enter; a cross-origin host page
// receives each check from the iframe snippet's listener and from the custom element; the panel
// fits 233 px and a 960 × 540 slide in fit mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { watch, waitReady, servedBrowser, reusedTab, SHOTS, ROOT } from './helpers.mjs';
import { hostServer, frameReady, frameFacts } from './hosts-helpers.mjs';

const env = servedBrowser();

// Each test's page is a fresh load, in the tab the last one used (reusedTab); the host pages of
// other origins open in contexts of their own.
const tab = reusedTab(env, { viewport: { width: 1366, height: 900 } });
async function open(hash, viewport, search = '') {
  const opened = await tab.load(`${env.server.url}/${search}${hash}`, viewport);
  await waitReady(opened.page);
  return opened;
}

/** Open an exercise in the same page (a hash change, as a gallery link does). */
async function go(page, id) {
  await page.evaluate((h) => (location.hash = h), `#v=1&ex=${id}`);
  await page.waitForFunction((i) => document.querySelector('[data-testid="exercise"]')?.textContent?.includes(i) !== undefined && window.__attentionPlayground.state().exercise.id === i, id);
  await waitReady(page);
}

/** Press Check and wait for this attempt's verdict; returns whether it passed. */
async function check(page, { enter = false } = {}) {
  const before = await page.getByTestId('exercise-verdict').innerText();
  if (enter) await page.keyboard.press('Enter');
  else await page.getByTestId('exercise-check').click();
  await page.waitForFunction(
    (b) => {
      const v = document.querySelector('[data-testid="exercise-verdict"]');
      return v && v.dataset.passed !== '' && v.textContent !== b;
    },
    before,
    { timeout: 10000 },
  );
  return (await page.getByTestId('exercise-verdict').getAttribute('data-passed')) === 'true';
}

const causal = (page) => page.getByTestId('causal');
const chip = (page, i) => page.locator('.chips button').nth(i);
async function setWindow(page, w) {
  await page.getByTestId('window').fill(String(w));
  await waitReady(page);
}

/** The reference solution of each exercise, through the page's controls. */
const SOLVE = {
  'mask-causal': async (page) => causal(page).check(),
  'mask-window3': async (page) => {
    await causal(page).check();
    await setWindow(page, 3);
  },
  'mask-diagonal': async (page) => {
    await causal(page).check();
    await setWindow(page, 1);
  },
  'mask-pad-end': async (page) => {
    await causal(page).check();
    await chip(page, 6).click();
    await chip(page, 7).click();
  },
  'mask-window2-pad': async (page) => {
    await causal(page).check();
    await setWindow(page, 2);
    await chip(page, 6).click();
    await chip(page, 7).click();
  },
  'fix-nan': async (page) => page.locator('input[type=radio][value=finite]').check(),
  'fix-overflow': async (page) => {
    await page.locator('#tab-lesson').click();
    await page.locator('.line-check', { hasText: 'max shift' }).locator('input').check();
  },
  'fix-rows': async (page) => {
    await page.locator('#tab-lesson').click();
    await page.locator('select:has(option[value="after"])').selectOption('before');
  },
};

/** "Which line?": the lines each variant changes, from the lessons (tests/web/exercise.test.ts
 *  says why each). */
const LINES = {
  'line-rope': ['rope'],
  'line-alibi': ['alibi'],
  'line-qknorm': ['qknorm'],
  'line-sigmoid': ['mask', 'shift', 'norm'],
  'line-after': ['mask'],
};
async function mark(page, ids) {
  for (const box of await page.getByTestId('exercise-line').all()) await box.setChecked(ids.includes(await box.getAttribute('value')));
}

/** Build a head: lesson 1's construction typed into the grid cells. */
async function typeCell(page, key, value) {
  const cell = page.locator(`input[data-cell="${key}"]`);
  await cell.fill(String(value));
  await cell.press('Tab');
}
const BUILD = {
  'build-previous': async (page) => {
    for (let p = 1; p < 11; p++) await typeCell(page, `p${p}.${p - 1}`, 14);
  },
  'build-same-token': async (page) => {
    for (let w = 0; w < 8; w++) await typeCell(page, `w${w}.${w}`, 14);
    for (let p = 0; p < 11; p++) await typeCell(page, `p${p}.${p}`, -14);
  },
  // <s> + lesson 1's sentence: 12 positions, 9 words.
  'build-induction': async (page) => {
    for (let p = 1; p < 12; p++) await typeCell(page, `p${p}.${p - 1}`, 14);
    for (let w = 0; w < 9; w++) await typeCell(page, `n${w}.${w}`, 14);
  },
};

/** Bars set to the drawn row (5 % steps) or, wrong, all on the key the head weighs least. */
async function predict(page, right) {
  const { head, query } = await page.evaluate(() => {
    const id = window.__attentionPlayground.state().exercise.id;
    return { id, ...{ 'predict-previous': { head: 1, query: 8 }, 'predict-same-token': { head: 0, query: 8 }, 'predict-no-scale': { head: 0, query: 5 } }[id] ?? { head: 0, query: 4 } };
  });
  const w = await page.evaluate(() => window.__attentionPlayground.weights());
  const row = w.weights.slice((head * w.t + query) * w.t, (head * w.t + query + 1) * w.t);
  const bars = page.getByTestId('exercise-bar');
  const n = await bars.count();
  assert.equal(n, query + 1, 'one bar per key the causal row may see');
  const least = row.slice(0, n).indexOf(Math.min(...row.slice(0, n)));
  for (let j = 0; j < n; j++) await bars.nth(j).fill(String(right ? Math.round(row[j] * 20) * 5 : j === least ? 100 : 0));
}

test('every gallery exercise: not passed as it starts, passed once solved through the controls; Enter checks', async () => {
  const { page, errors } = await open('#v=1');
  const ids = await page.locator('a[data-exercise]').evaluateAll((as) => as.map((a) => a.dataset.exercise));
  assert.ok(ids.length >= 12, `${ids.length} exercises in the gallery`);
  for (const id of ids) {
    await go(page, id);
    const kind = id.split('-')[0];
    if (kind === 'predict') {
      assert.equal(await page.locator('.stage').evaluate((s) => s.classList.contains('exercise-hiding')), true, `${id}: weights hidden`);
      await predict(page, false);
      assert.equal(await check(page), false, `${id}: a wrong prediction`);
      assert.match(await page.getByTestId('exercise-verdict').innerText(), /Distance [01]\.\d\d .*The head puts most weight/s);
      await predict(page, true);
      assert.equal(await check(page), true, `${id}: the drawn row`);
      assert.equal(await page.locator('.stage').evaluate((s) => s.classList.contains('exercise-hiding')), false, `${id}: weights shown after the check`);
      continue;
    }
    if (kind === 'build') {
      assert.equal(await check(page), false, `${id}: an empty W_Q`);
      await BUILD[id](page);
      await page.waitForFunction(() => Number(document.querySelector('[data-testid="exercise-build-score"]')?.dataset.score) > 0.8);
      assert.equal(await check(page), true, `${id}: lesson 1's construction`);
      assert.match(await page.getByTestId('exercise-verdict').innerText(), /score: (0\.9\d|1\.00) on the sentence, (0\.9\d|1\.00) on a hidden one/);
      // The grid is in the link: a reload keeps the head.
      assert.match(await page.evaluate(() => location.hash), /&exg=/);
      continue;
    }
    if (kind === 'line') {
      await mark(page, ['out']);
      assert.equal(await check(page), false, `${id}: the output line`);
      await mark(page, LINES[id]);
      assert.equal(await check(page), true, `${id}: ${LINES[id]}`);
      // The two computations: the Lesson view with the variant on and its card open.
      await page.getByTestId('exercise-show-both').click();
      await page.waitForFunction(() => window.__attentionPlayground.state().page.view === 'lesson');
      const st = await page.evaluate(() => window.__attentionPlayground.state().lesson);
      assert.ok(st.exp !== 'none', `${id}: a card is open`);
      await waitReady(page);
      continue;
    }
    assert.equal(await check(page), false, `${id} as it starts`);
    await SOLVE[id](page);
    await waitReady(page);
    // The keyboard: Enter on a checkbox (not a button, where Enter presses it) checks.
    if (kind === 'mask') await causal(page).focus();
    assert.equal(await check(page, { enter: kind === 'mask' }), true, `${id} solved: ${await page.getByTestId('exercise-verdict').innerText()}`);
    if (id === 'fix-nan') {
      const v = await page.getByTestId('exercise-verdict').innerText();
      assert.match(v, /No NaN, and all 22 rows sum to 1\./);
      assert.match(v, /uniform row/);
      // A fix that changes the question is not one: unpad the first token.
      await page.locator('input[type=radio][value=neg_inf]').check();
      await chip(page, 0).click();
      await waitReady(page);
      assert.equal(await check(page), false);
      assert.match(await page.getByTestId('exercise-verdict').innerText(), /Keep “pad” as the exercise started/);
    }
    if (id === 'mask-window3') {
      assert.match(await page.evaluate(() => location.hash), /^#v=1&causal=1&win=3&ex=mask-window3$|ex=mask-window3/);
      await page.screenshot({ path: join(SHOTS, 'exercise-mask-window3-passed.png') });
    }
  }
  // The link from the docs opens mask-window3 already solved.
  await page.evaluate(() => (location.hash = '#v=1&ex=mask-window3&causal=1&win=3'));
  await page.waitForFunction(() => window.__attentionPlayground.state().model.window === 3);
  await waitReady(page);
  assert.equal(await check(page), true);
  assert.deepEqual(errors, []);
});

test('Build a head by keyboard: arrows move between cells, typing edits, a bad value is marked and not used', async () => {
  const { page, errors } = await open('#v=1&ex=build-previous');
  await page.locator('input[data-cell="p10.10"]').focus(); // the grid's tab stop: its last cell
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.cell), 'p9.9');
  for (const k of ['ArrowLeft', '1', '4']) await page.keyboard.press(k);
  await page.keyboard.press('ArrowUp'); // moving commits the value
  await page.waitForFunction(() => /exg=p9\.8\.14/.test(location.hash));
  await page.keyboard.type('abc');
  await page.keyboard.press('Tab');
  assert.equal(await page.locator('input[data-cell="p8.8"]').getAttribute('aria-invalid'), 'true');
  assert.match(await page.evaluate(() => location.hash), /exg=p9\.8\.14(&|$)/);
  // The score is the core's, redrawn after each edit.
  assert.match(await page.getByTestId('exercise-build-score').innerText(), /^Its previous-token score on this sentence: 0\.\d\d/);
  assert.deepEqual(errors, []);
});

test('Make an exercise: the Embed dialog turns the view into a predict on a chosen head and row; the link holds no weights', async () => {
  const { page, errors } = await open('#v=1&src=random&heads=2&kv=2&seed=3');
  await page.getByTestId('copy-embed').click();
  const snippet = () => page.getByTestId('embed-snippet').inputValue();
  assert.doesNotMatch(await snippet(), /ex=/);
  await page.getByTestId('embed-exercise').check();
  await page.getByTestId('embed-exercise-head').selectOption('1');
  await page.getByTestId('embed-exercise-row').selectOption('5');
  const text = await snippet();
  const hash = text.match(/#(v=1[^"]*)"/)[1].replace(/&amp;/g, '&');
  assert.match(hash, /^v=1&src=random&seed=3&ex=predict-h2-q5$/, hash);
  assert.doesNotMatch(text, /weights|uw=/);
  await page.keyboard.press('Escape');
  // The student opens it: head 2, row 5, one bar per key 0…5, the weights hidden until checked.
  await page.evaluate((h) => (location.hash = h), `#${hash}`);
  await page.waitForFunction(() => window.__attentionPlayground.state().exercise.id === 'predict-h2-q5');
  await waitReady(page);
  assert.match(await page.getByTestId('exercise-task').innerText(), /head 2’s weight go for query 5/);
  // A screen reader hears the task once (a polite live region), and each verdict (role=status).
  assert.match(await page.getByTestId('exercise-announce').textContent(), /^Exercise: Predict head 2, row 5\. Where does head 2’s weight go/);
  assert.equal(await page.getByTestId('exercise-verdict').getAttribute('role'), 'status');
  assert.equal(await page.getByTestId('exercise-bar').count(), 6);
  assert.equal(await page.locator('.stage').evaluate((s) => s.classList.contains('exercise-hiding')), true);
  // Leave the exercise: the state stays, the task goes, the weights show.
  await page.getByTestId('exercise-leave').click();
  assert.equal(await page.getByTestId('exercise').isHidden(), true);
  assert.equal(await page.locator('.stage').evaluate((s) => s.classList.contains('exercise-hiding')), false);
  await page.waitForFunction(() => !/ex=/.test(location.hash));
  assert.match(await page.evaluate(() => location.hash), /^#v=1&src=random&seed=3/);
  assert.deepEqual(errors, []);
});

test('a cross-origin host page records each check: the iframe snippet’s event and the custom element’s', async () => {
  const play = env.server.url;
  const host = await hostServer({
    pages: {
      '/course.html': `<!doctype html><meta charset="utf-8"><title>Course</title>
<iframe id="ex1" src="${play}/?embed=1&id=ex1#v=1&ex=mask-causal" style="width:100%;border:0" height="700"></iframe>
<script type="module" src="${play}/attention-playground.js"></script>
<attention-playground id="el1" exercise="fix-nan" height="700"></attention-playground>
<script>
  window.results = [];
  addEventListener('message', function (e) {
    var f = document.getElementById('ex1');
    if (e.origin !== ${JSON.stringify(play)} || e.source !== f.contentWindow) return;
    if (e.data && e.data.type === 'attention-playground:exercise') window.results.push({ from: 'iframe', ...e.data });
  });
  document.getElementById('el1').addEventListener('attention-playground:exercise', function (e) {
    window.results.push({ from: 'element', ...e.detail });
  });
</script>`,
    },
  });
  assert.notEqual(new URL(host.url).port, new URL(play).port, 'the host is another origin');
  const context = await env.browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const { errors } = watch(page);
  await page.goto(`${host.url}/course.html`);
  const frameOf = async (pred) => {
    for (let k = 0; k < 200; k++) {
      const f = page.frames().find((x) => pred(x.url()));
      if (f) return f;
      await page.waitForTimeout(50);
    }
    throw new Error('no frame');
  };
  const iframe = await frameOf((u) => u.includes('ex=mask-causal'));
  await frameReady(iframe);
  // Embedded, the exercise shows its controls (embed mode hides them otherwise).
  await iframe.getByTestId('causal').check();
  await frameReady(iframe);
  await iframe.getByTestId('exercise-check').click();
  await page.waitForFunction(() => window.results.some((r) => r.from === 'iframe'));
  const element = await frameOf((u) => u.includes('ex=fix-nan'));
  await frameReady(element);
  await element.getByTestId('exercise-check').click();
  await page.waitForFunction(() => window.results.some((r) => r.from === 'element'));
  const results = await page.evaluate(() => window.results);
  const a = results.find((r) => r.from === 'iframe');
  assert.deepEqual({ id: a.id, passed: a.passed, score: a.score, attempts: a.attempts }, { id: 'mask-causal', passed: true, score: 1, attempts: 1 });
  assert.match(a.state, /^#v=1&.*causal=1.*ex=mask-causal/);
  const b = results.find((r) => r.from === 'element');
  assert.deepEqual({ id: b.id, passed: b.passed, attempts: b.attempts }, { id: 'fix-nan', passed: false, attempts: 1 });
  assert.ok(b.score > 0.9 && b.score < 1, `one row of 22 is NaN: score ${b.score}`);
  assert.equal(b.state, '#v=1&ex=fix-nan');
  assert.deepEqual(errors, []);
  await context.close();
  await host.close();
});

test('the host page of docs/exercises.md, as printed there, records a check from another origin', async () => {
  const md = readFileSync(join(ROOT, 'docs/exercises.md'), 'utf8');
  const html = md.match(/```html\n([\s\S]*?)```/)[1];
  assert.ok(html.split('\n').length <= 16, 'the documented host page is about 15 lines');
  const host = await hostServer({ pages: { '/course.html': html.replaceAll('https://HOST/PATH/', `${env.server.url}/`) } });
  const context = await env.browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const { errors } = watch(page);
  await page.goto(`${host.url}/course.html`);
  let frame = null;
  for (let k = 0; k < 200 && !frame; k++) {
    frame = page.frames().find((f) => f.url().includes('ex=mask-window3')) ?? null;
    if (!frame) await page.waitForTimeout(50);
  }
  await frameReady(frame);
  await frame.getByTestId('exercise-check').click();
  await page.waitForFunction(() => document.querySelectorAll('#log li').length === 1);
  assert.match(await page.locator('#log li').first().innerText(), /^mask-window3: not yet \(score 0\.\d+, attempt 1\)$/);
  await frame.getByTestId('causal').check();
  await frame.getByTestId('window').fill('3');
  await frameReady(frame);
  await frame.getByTestId('exercise-check').click();
  await page.waitForFunction(() => document.querySelectorAll('#log li').length === 2);
  assert.equal(await page.locator('#log li').nth(1).innerText(), 'mask-window3: passed (score 1, attempt 2)');
  assert.deepEqual(errors, []);
  await context.close();
  await host.close();
});

test('the exercise panel fits 233 and 375 px and a 960 × 540 slide in fit mode', async () => {
  for (const width of [233, 375]) {
    const { page } = await open('#v=1&ex=predict-previous', { width, height: 800 }, '?embed=1');
    const f = await page.evaluate(frameFacts);
    assert.ok(f.scrollWidth <= f.clientWidth, `${width}px: no sideways scroll (${f.scrollWidth} > ${f.clientWidth})`);
    assert.equal(await page.getByTestId('exercise-check').isVisible(), true);
    assert.equal(await page.getByTestId('exercise-bar').count(), 9);
    await page.screenshot({ path: join(SHOTS, `exercise-predict-${width}.png`), fullPage: true });
    // A build exercise's grids scroll inside their own box.
    const b = await open('#v=1&ex=build-same-token', { width, height: 800 }, '?embed=1');
    const fb = await b.page.evaluate(frameFacts);
    assert.ok(fb.scrollWidth <= fb.clientWidth, `${width}px build: no sideways scroll (${fb.scrollWidth} > ${fb.clientWidth})`);
  }
  {
    // ?embed=1&ex=… (the exercise in the query): shown with the controls a fix needs.
    const { page } = await open('#v=1', { width: 800, height: 700 }, '?embed=1&ex=fix-nan');
    assert.match(await page.getByTestId('exercise-task').innerText(), /The first token is padding/);
    assert.equal(await page.locator('input[type=radio][value=finite]').isVisible(), true);
    assert.equal(await page.locator('#exercises-title').isVisible(), false);
  }
  const { page } = await open('#v=1&ex=mask-window3', { width: 960, height: 540 }, '?embed=1&fit=1');
  const f = await page.evaluate(frameFacts);
  assert.ok(f.scrollWidth <= f.clientWidth, 'fit: no sideways scroll');
  const box = await page.getByTestId('exercise-check').boundingBox();
  assert.ok(box && box.y + box.height <= 540, 'fit: Check is inside the slide');
  await page.screenshot({ path: join(SHOTS, 'exercise-fit-960x540.png') });
});
