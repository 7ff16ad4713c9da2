// Helpers for the course-material host tests (hosts*.test.mjs): servers whose headers a test
// chooses (CORS on or off, a host page's Content-Security-Policy), and what every host checks in
// the playground's frame: it drew, nothing overflows sideways, the zoomed heatmap is in sight.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { DIST } from './helpers.mjs';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ipynb': 'application/json',
  '.py': 'text/x-python',
};

/**
 * Serve the folders in `mounts` ({ '/prefix': dir }, longest prefix first) and the HTML strings
 * in `pages` ({ path: html | { body, headers } }) on 127.0.0.1. `cors`: send
 * Access-Control-Allow-Origin: * with the files (like GitHub Pages). `headers`: sent with every
 * page in `pages` (e.g. a host's CSP).
 */
export async function hostServer({ mounts = { '/': DIST }, pages = {}, cors = true, headers = {} } = {}) {
  const prefixes = Object.keys(mounts).sort((a, b) => b.length - a.length);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      const page = pages[path];
      if (page !== undefined) {
        const p = typeof page === 'string' ? { body: page, headers: {} } : page;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers, ...p.headers });
        res.end(p.body);
        return;
      }
      const prefix = prefixes.find((p) => path.startsWith(p));
      if (!prefix) throw new Error('no mount');
      const dir = mounts[prefix];
      let file = normalize(join(dir, path.slice(prefix.length)));
      if (!file.startsWith(normalize(dir))) throw new Error('outside');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      const h = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' };
      if (cors) h['access-control-allow-origin'] = '*';
      res.writeHead(200, h);
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

/** Inside the playground's frame: wait until it drew (data-status ready). */
export async function frameReady(frame, timeout = 20000) {
  await frame.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout });
}

/** Inside the playground's document: sideways overflow, the zoomed heatmap's box and its label
 *  font, whether the document scrolls vertically. */
export function frameFacts() {
  const de = document.documentElement;
  const z = document.querySelector('.zoom-panel .hm-frame');
  const r = z ? z.getBoundingClientRect() : null;
  const hm = document.querySelector('.zoom-panel .hm');
  const font = hm ? parseFloat(getComputedStyle(hm).getPropertyValue('--hm-font')) : NaN;
  let widest = 0;
  for (const n of document.querySelectorAll('#app *')) {
    const b = n.getBoundingClientRect();
    if (b.width > 0 && getComputedStyle(n).visibility !== 'hidden' && !n.closest('[hidden]')) widest = Math.max(widest, b.right);
  }
  return {
    scrollWidth: de.scrollWidth,
    clientWidth: de.clientWidth,
    scrollHeight: de.scrollHeight,
    innerHeight: window.innerHeight,
    widest,
    zoom: r ? { x: r.x, y: r.y, w: r.width, h: r.height, bottom: r.bottom, right: r.right } : null,
    font,
  };
}

/** The iframe element's box in the top page (for "inside the slide / inside the viewport"). */
export async function frameBox(page, selector) {
  return page.locator(selector).first().evaluate((f) => {
    const r = f.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height, bottom: r.bottom, right: r.right };
  });
}

/** A long token list: its plain form is longer than the link codec's threshold, so the link
 *  carries it lz-string compressed (`tz=`). */
export const LONG_TOKENS = Array.from({ length: 40 }, (_, i) => `word${i}x`).join('+');
