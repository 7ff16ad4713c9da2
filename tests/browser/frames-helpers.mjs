// Shared by frames.test.mjs and frames-redraw.test.mjs: the small state both open, a page per
// test (checked for logged errors), and the window slider moved as a drag moves it.
import assert from 'node:assert/strict';
import { watch, waitReady } from './helpers.mjs';

export const words = (n) => Array.from({ length: n }, (_, i) => `t${i}`).join('+');
export const SMALL = `#v=1&src=random&tokens=${words(24)}&heads=4&kv=4&dm=64&dk=16&seed=7`;

/** A page of `env` (servedBrowser()) at `hash`, ready. */
export async function open(env, hash) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(`${env.server.url}/${hash}`);
  await waitReady(page, 60000);
  return { page, context, errors: w.errors };
}

/** Opens a page at `hash`, runs `fn(page)`, then checks the page logged no error and closes it. */
export async function withPage(env, hash, fn) {
  const { page, context, errors } = await open(env, hash);
  try {
    await fn(page);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
}

/** Sets the window slider as a drag does (value, then an input event) and waits until the page
 *  is ready again. */
export async function slide(page, value, timeout = 15000) {
  await page.evaluate((v) => {
    const input = document.querySelector('[data-testid="window"]');
    input.value = String(v);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
  await waitReady(page, timeout);
}
