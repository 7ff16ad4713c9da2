// Shared by the Chromium benchmarks (bench/browser_api_bench.mjs and its --peers mode):
// a static server for the repository on 127.0.0.1 and Debian's Chromium through playwright-core
// (launch arguments from TOOLCHAIN.md).
//   const { base, close } = await serveRepo(root, { pages: { '/bench.html': '<!doctype html>...' } });
//   const browser = await launchChromium();
// The server sends the cross-origin isolation headers (COOP same-origin, COEP require-corp):
// performance.now() then ticks at 5 us instead of 100 us, and SharedArrayBuffer exists (which is
// why the peers' threaded builds must be switched off explicitly, see browser_api_bench.mjs).
// Only files inside `root` are served; bench/peers/node_modules is inside it.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = {
  '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html',
  '.json': 'application/json', '.onnx': 'application/octet-stream', '.bin': 'application/octet-stream',
  // A stylesheet served as octet-stream is refused: the page would be measured unstyled.
  '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2',
};

export async function serveRepo(root, { pages = {} } = {}) {
  const isolated = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (pages[rel] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html', ...isolated }).end(pages[rel]);
      return;
    }
    const p = path.join(root, rel);
    if (!p.startsWith(root + path.sep) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(p)] ?? 'application/octet-stream', ...isolated });
    fs.createReadStream(p).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

// BENCH_CHROMIUM_ARGS: more switches for a diagnosis, e.g. '--js-flags=--no-liftoff' (not for the
// figures: a page gets Chromium's default tiering).
export function launchChromium() {
  const extra = (process.env.BENCH_CHROMIUM_ARGS ?? '').split(' ').filter(Boolean);
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', ...extra] });
}

export const BLANK_PAGE = '<!doctype html><meta charset="utf-8"><title>bench</title>';
