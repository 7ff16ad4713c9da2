// Shared helpers for the browser tests: a tiny static server for dist/ (and host pages),
// Chromium from Debian through playwright-core, and page utilities.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { before, after } from 'node:test';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The site under test: dist/ by default; AP_DIST=<dir> serves another build (e.g. one made from
 *  an older commit, to check that a new test fails there). */
export const DIST = process.env.AP_DIST ? resolve(process.env.AP_DIST) : join(ROOT, 'dist');
/** Where screenshots go: test-results/ by default (untracked); refresh the committed ones
 *  with AP_SCREENSHOTS_DIR=screenshots npm run test:browser. */
export const SHOTS = resolve(ROOT, process.env.AP_SCREENSHOTS_DIR || 'test-results/screenshots');
mkdirSync(SHOTS, { recursive: true });

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Build dist/ once per test run unless it is newer than web/ (set AP_SKIP_BUILD=1 to skip). */
export function ensureBuilt() {
  if ((process.env.AP_SKIP_BUILD === '1' || process.env.AP_DIST) && existsSync(join(DIST, 'index.html'))) return;
  execFileSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'error'], { cwd: ROOT, stdio: 'inherit' });
  process.env.AP_SKIP_BUILD = '1';
}

/**
 * Serve `dir` on 127.0.0.1 (random port). `pages` maps extra paths to HTML strings (host pages).
 * Returns { url, close }.
 */
export async function serve(dir = DIST, pages = {}) {
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (pages[path] !== undefined) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(pages[path]);
        return;
      }
      let file = normalize(join(dir, path));
      if (!file.startsWith(dir)) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      // Like GitHub Pages and most CDNs: public files may be loaded cross-origin (the custom
      // element script is a module, which needs CORS when a course site loads it).
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'access-control-allow-origin': '*' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * The browser the tests drive: Debian's chromium-headless-shell by default, Chromium's own headless
 * build (the one Playwright runs for headless tests; the same version and engine as the chromium
 * package), which takes about half the CPU per page of the full browser started headless (a new
 * page 1.1 core-seconds instead of 2.7 here, docs/testing.md). AP_CHROMIUM=/usr/bin/chromium runs
 * the same tests in the full browser.
 */
export const CHROMIUM =
  process.env.AP_CHROMIUM || (existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium');

export async function launch() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  if (!SCREENSHOTS) await skipScreenshots(browser);
  return browser;
}

/**
 * Whether the tests write their screenshots (to SHOTS). They assert nothing with them, and each
 * one costs Chromium a raster (of the whole page for fullPage) and a PNG: a third of the CPU of
 * lesson.test.mjs. AP_SCREENSHOTS=0 (what scripts/test.sh sets unless asked otherwise) skips them;
 * by default, and always with AP_SCREENSHOTS_DIR, they are written.
 */
export const SCREENSHOTS = process.env.AP_SCREENSHOTS !== '0' || !!process.env.AP_SCREENSHOTS_DIR;

let screenshotsSkipped = false;
/** Page, Locator and ElementHandle screenshots resolve at once, capturing and writing nothing. */
async function skipScreenshots(browser) {
  if (screenshotsSkipped) return;
  screenshotsSkipped = true;
  const page = await browser.newPage();
  const targets = [page, page.locator('html'), await page.$('html')];
  for (const proto of new Set(targets.map((t) => Object.getPrototypeOf(t)))) proto.screenshot = async () => Buffer.alloc(0);
  await page.close();
}

/** Collect console errors, page errors and dialogs of a page. */
export function watch(page) {
  const errors = [];
  const dialogs = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
  return { errors, dialogs };
}

/**
 * One tab for a test file's fresh loads. `load(url, viewport?)` opens `url` as a new document in
 * the same tab (a blank page first, so a link that differs only in its hash is a load, not a
 * hash change), whose renderer, and the wasm it compiled, the last load used: about a third less
 * CPU per load than a new context's tab (docs/testing.md). Returns the page and this load's
 * console errors and dialogs (as watch does). `options` are the context's (viewport, downloads);
 * a load without a viewport gets the context's again; `init`, a script run before each document's
 * own (page.addInitScript). For tests that leave nothing on the tab beyond its document (no
 * routes, init scripts, emulated media, permissions or listeners of their own).
 */
export function reusedTab(env, options = {}, init = null) {
  let page = null;
  let current = { errors: [], dialogs: [] };
  return {
    async load(url, viewport) {
      // A test that closed the tab or its context gets a new one.
      if (!page || page.isClosed()) {
        const context = await env.browser.newContext(options);
        page = await context.newPage();
        if (init) await page.addInitScript(init);
        page.on('console', (m) => {
          if (m.type() === 'error') current.errors.push(m.text());
        });
        page.on('pageerror', (e) => current.errors.push(String(e)));
        page.on('dialog', async (d) => {
          current.dialogs.push(d.message());
          await d.dismiss();
        });
      }
      const size = viewport ?? options.viewport;
      if (size) await page.setViewportSize(size);
      await page.goto('about:blank');
      current = { errors: [], dialogs: [] };
      await page.goto(url);
      return { page, context: page.context(), ...current };
    },
  };
}

/** Wait until the page has drawn the latest computation. */
export async function waitReady(page, timeout = 15000) {
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout, polling: 50 });
}

/** Click the JSON export and parse the downloaded file. */
export async function exportJson(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
  const path = await download.path();
  return JSON.parse(await readFile(path, 'utf8'));
}

/** For a test file: build dist/ if needed, serve it and launch Chromium before the tests,
 *  close both after. Returns { server, browser }, filled in once the tests start. */
export function servedBrowser() {
  const env = { server: null, browser: null };
  before(async () => {
    ensureBuilt();
    env.server = await serve();
    env.browser = await launch();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}
