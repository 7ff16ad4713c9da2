// The defects a new user met in Chromium (issue 8, part A), one test each. Every test here failed
// against the page before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { watch, waitReady, servedBrowser, SHOTS, DIST } from './helpers.mjs';

const env = servedBrowser();

async function open(path, viewport = { width: 1366, height: 900 }, opts = {}) {
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
  const { page, context, errors } = await open('/' + hash);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the heatmaps');
  await page.keyboard.press('Enter');
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => location.hash), hash);
  assert.equal(await page.getByTestId('notices').isHidden(), true, 'a notice appeared');
  const st = await page.evaluate(() => window.__attentionPlayground.state());
  assert.deepEqual([st.src, st.heads, st.kv, st.view, st.tokens.join(' ')], ['random', 4, 2, 'mask', 'a b c d']);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main-stage');
  // The next Tab goes on into the views, not back to the header.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => !!document.activeElement?.closest('.view-host')), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('A.3 the token box can be emptied and a new sentence typed', async () => {
  const { page, context, errors } = await open('/');
  const box = page.getByTestId('tokens');
  await box.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.waitForTimeout(300);
  assert.equal(await box.inputValue(), '', 'the box was refilled');
  assert.equal(await page.getByTestId('tokens-empty').isVisible(), true, 'no hint for the empty box');
  await page.keyboard.type('I saw a dog', { delay: 20 });
  await page.waitForFunction(() => window.__attentionPlayground.state().tokens.join(' ') === 'I saw a dog', null, { timeout: 5000 });
  await waitReady(page);
  assert.equal(await box.inputValue(), 'I saw a dog');
  assert.equal(await page.getByTestId('tokens-empty').isHidden(), true);
  // Leaving the box empty and clicking elsewhere keeps it empty (and the last result on show).
  await box.fill('');
  await page.locator('.stage').click({ position: { x: 5, y: 5 } });
  await page.waitForTimeout(200);
  assert.equal(await box.inputValue(), '');
  assert.equal(await page.evaluate(() => window.__attentionPlayground.state().tokens.join(' ')), 'I saw a dog');
  assert.deepEqual(errors, []);
  await context.close();
});
