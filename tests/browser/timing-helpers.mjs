// Shared by timing.test.mjs and timing-lab.test.mjs: a page of the timing lab, a sweep run to
// its end, and the sweep's table as data.
import { watch } from './helpers.mjs';

/** A page of `env` (servedBrowser()) at `path`, once `waitFor` (a data-testid) is there. */
export async function open(env, path, viewport = { width: 1366, height: 900 }, waitFor = 'timing-view') {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  const w = watch(page);
  await page.goto(env.server.url + path);
  await page.getByTestId(waitFor).waitFor();
  return { page, context, ...w };
}

/** Presses Run and waits for the sweep to end (done or error). */
export async function runAndWait(page, timeout = 120000) {
  await page.getByTestId('timing-run').click();
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="timing-status"]')?.dataset.state;
    return s === 'done' || s === 'error';
  }, null, { timeout });
}

/** The sweep's rows: T, each kernel's median ms, the ratio cells' text. */
export async function sweepTable(page) {
  return page.$$eval('[data-testid="timing-row"]', (rows) => rows.map((r) => ({
    t: Number(r.dataset.t),
    ms: Object.fromEntries([...r.querySelectorAll('td[data-kernel]')].map((td) => [td.dataset.kernel, Number(td.dataset.ms)])),
    ratios: [...r.querySelectorAll('td.ratio')].map((td) => td.textContent),
  })));
}
