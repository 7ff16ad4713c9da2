// Input-to-paint in Chromium while a slider is dragged, per view.
//
//   npm run bench:frames                      # builds dist/ if missing, then measures it
//   node bench/browser_frame_bench.mjs --dist /tmp/dist-old --dist dist   # before / after, interleaved
//   node bench/browser_frame_bench.mjs --n 60 --views heads,mask --configs t64
//
// What a change is: the bench moves a slider of the control panel one step (value set, `input`
// event dispatched, as the browser does while it is dragged) inside a requestAnimationFrame
// callback, since Chromium dispatches a drag's input events at the start of a frame (rAF-aligned
// input), and takes performance.now() just before the dispatch. The change is drawn when the page
// pushes an entry to window.__attentionPlayground.timings (right after the view is redrawn; the
// bench wraps that push), and painted at the end of the frame that contains the draw: the frame
// being produced when the draw ran inside the input's frame (the page computed it on its own
// thread), else the next one (a Worker's answer arrives as a task between frames). "End of frame"
// = a MessageChannel task queued from a requestAnimationFrame callback, which runs after that
// frame's style, layout and paint. Changes are sequential (the next one a frame after the last
// paint), so every figure is one change's latency, not a queue's. Each (config, view, build)
// gets a fresh page, ≥ 50 changes after 5 warm-up changes, starting 1 s after the page is ready
// (--settle-ms; 0 measures from the moment it is ready, while Chromium still compiles); marks `ap-input` / `ap-paint` are left
// in the page's performance timeline.
//
// Where the time goes (medians per row): `compute: page` or `worker` = the result's computeMs
// (on the page's own thread or in the Worker), `check` = the Check's ms when it ran with the
// computation, `redraw` = the view's render, `input→drawn` = from the input to the end of the
// redraw. Targets: T ≤ 64 with ≤ 4 heads median ≤ 16 ms and p95 ≤ 33 ms; T = 256 with
// 8 heads median ≤ 33 ms. Then the d_k = 2 map's drag at T = 64: median ≤ 16.7 ms per moved
// vector (a frame at 60 Hz).
import path from 'node:path';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serveRepo, launchChromium } from './browser.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const dists = args.flatMap((a, i) => (a === '--dist' ? [path.resolve(args[i + 1])] : []));
if (dists.length === 0) dists.push(path.join(ROOT, 'dist'));
const N = Number(opt('n', 60));
const WARM = 5;
const SETTLE_MS = Number(opt('settle-ms', 1000));
const VIEWS = opt('views', 'heads,mask,output,scale').split(',');
const WIDTH = Number(opt('width', 1280));
// --map 0 leaves out the d_k = 2 map's drag (it has its own page and target).
const MAP = opt('map', '1') !== '0';

const words = (n) => Array.from({ length: n }, (_, i) => `w${i % 97}`).join('%20');
// Each config: a link and the slider it drags (selector within the control panel, values cycled).
const CONFIGS = {
  t11: { label: 'T = 11, lesson 1 model, 2 heads', hash: '#v=1', slider: 'sharpness', target: { median: 16, p95: 33 } },
  t64: { label: 'T = 64, 4 heads, d_model 64, d_k 16', hash: `#v=1&src=random&heads=4&kv=4&dm=64&dk=16&tokens=${words(64)}`, slider: 'window', target: { median: 16, p95: 33 } },
  t256: { label: 'T = 256, 8 heads, d_model 512, d_k 64', hash: `#v=1&src=random&heads=8&kv=8&dm=512&dk=64&tokens=${words(256)}`, slider: 'window', target: { median: 33 } },
};
const configs = opt('configs', 't11,t64,t256').split(',').map((k) => {
  if (!CONFIGS[k]) throw new Error(`unknown config ${k} (have ${Object.keys(CONFIGS).join(', ')})`);
  return { key: k, ...CONFIGS[k] };
});

for (const d of dists) {
  if (!fs.existsSync(path.join(d, 'index.html'))) {
    if (d !== path.join(ROOT, 'dist')) throw new Error(`${d} has no index.html`);
    console.log('building dist/ (vite build)…');
    execFileSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'error'], { cwd: ROOT, stdio: 'inherit' });
  }
}

// Runs in the page: N + WARM sequential changes of one slider; returns per-change figures.
async function dragInPage({ slider, n, warm }) {
  const ap = window.__attentionPlayground;
  const input = slider === 'window' ? document.querySelector('[data-testid="window"]') : [...document.querySelectorAll('input[type="range"]')].find((e) => e.closest('.field')?.textContent.includes('Sharpness'));
  if (!input) throw new Error(`no ${slider} slider`);
  const min = Number(input.min), max = Number(input.max), step = Number(input.step) || 1;
  // Bounce between the ends (a window of 0 is "off": the window slider starts at 1).
  const lo = slider === 'window' ? Math.max(1, min) : min, hi = max;
  const values = [];
  let v = Number(input.value) < lo ? lo : Number(input.value);
  let dir = 1;
  for (let i = 0; i < n + warm; i++) {
    if (v + dir * step > hi || v + dir * step < lo) dir = -dir;
    v += dir * step;
    values.push(v);
  }
  // After a draw: the paint is the end of the frame being produced if the draw ran inside one (a
  // task queued from a requestAnimationFrame callback runs after that frame's style, layout and
  // paint), else of the next frame.
  let inFrame = false;
  const afterPaint = (resolve) => { const ch = new MessageChannel(); ch.port1.onmessage = () => resolve(performance.now()); ch.port2.postMessage(0); };
  const paintedAfterDraw = () => new Promise((r) => (inFrame ? afterPaint(r) : requestAnimationFrame(() => afterPaint(r))));
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => afterPaint(r)));
  let onDrawn = null;
  const push = ap.timings.push.bind(ap.timings);
  ap.timings.push = (...items) => {
    const out = push(...items);
    if (onDrawn) { const f = onDrawn; onDrawn = null; f(items[items.length - 1], performance.now(), paintedAfterDraw()); }
    return out;
  };
  const rows = [];
  for (let i = 0; i < values.length; i++) {
    await nextFrame();
    const drawn = new Promise((resolve) => (onDrawn = (timing, at, painted) => resolve({ timing, at, painted })));
    // Chromium dispatches a drag's input events at the start of a frame, before its animation
    // frame callbacks (rAF-aligned input): so does the bench.
    const t0 = await new Promise((r) => requestAnimationFrame(() => {
      inFrame = true;
      input.value = String(values[i]);
      const t = performance.now();
      performance.mark('ap-input', { startTime: t, detail: i });
      input.dispatchEvent(new Event('input', { bubbles: true }));
      inFrame = false;
      r(t);
    }));
    const { timing, at, painted: paintedP } = await Promise.race([drawn, new Promise((_, rej) => setTimeout(() => rej(new Error(`change ${i} not drawn in 10 s`)), 10000))]);
    const painted = await paintedP;
    performance.mark('ap-paint', { startTime: painted, detail: i });
    if (i >= warm) rows.push({ ms: painted - t0, worker: timing.local ? null : timing.computeMs, local: timing.local ? timing.computeMs : null, check: timing.checkMs ?? null, draw: timing.drawMs ?? null, atDraw: at - t0 });
  }
  return rows;
}

// Runs in the page: N + WARM moves of one vector on the d_k = 2 map (Shift+arrow on the focused
// point, as a keyboard drag; a pointer drag runs the same moveTo), each dispatched at the start of
// a frame; from the event to the end of the frame that paints it (the map redraws synchronously).
async function mapDragInPage({ n, warm }) {
  const canvas = document.querySelector('[data-testid="qk-map-canvas"]');
  const box = document.querySelector('[data-testid="qk-map"]');
  if (!canvas) throw new Error('no map');
  canvas.focus();
  const afterPaint = (resolve) => { const ch = new MessageChannel(); ch.port1.onmessage = () => resolve(performance.now()); ch.port2.postMessage(0); };
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => afterPaint(r)));
  const rows = [];
  for (let i = 0; i < n + warm; i++) {
    await nextFrame();
    const key = Math.floor(i / 4) % 2 === 0 ? 'ArrowRight' : 'ArrowLeft';
    const t0 = await new Promise((r) => requestAnimationFrame(() => {
      const t = performance.now();
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key, shiftKey: true, bubbles: true }));
      r(t);
    }));
    const painted = await new Promise((r) => afterPaint(r));
    if (i >= warm) rows.push({ ms: painted - t0, draw: Number(box.dataset.frameMs) });
  }
  return rows;
}

const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))]; };
const med0 = (xs) => { const v = xs.filter((x) => x !== null && x !== undefined); return v.length ? q(v, 0.5) : null; };
const f1 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));

const servers = await Promise.all(dists.map((d) => serveRepo(d)));
const browser = await launchChromium();
const results = [];
try {
  for (const c of configs) {
    for (const view of VIEWS) {
      for (let di = 0; di < dists.length; di++) {
        const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.goto(`${servers[di].base}/index.html${c.hash}&view=${view}`);
        await page.waitForFunction(() => window.__attentionPlayground?.ready(), null, { timeout: 60000 });
        // As a user would: the page is read before a slider is touched. In the first second after
        // load Chromium is still compiling (two wasm cores, the bundle) on the same two vCPUs.
        await page.waitForTimeout(SETTLE_MS);
        const rows = await page.evaluate(dragInPage, { slider: c.slider, n: N, warm: WARM });
        await page.close();
        if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
        const ms = rows.map((r) => r.ms);
        const med = q(ms, 0.5), p95 = q(ms, 0.95);
        const pass = med <= c.target.median && (c.target.p95 === undefined || p95 <= c.target.p95);
        const r = { config: c.key, label: c.label, view, dist: path.relative(ROOT, dists[di]) || dists[di], n: ms.length, median: med, p95, worker: med0(rows.map((x) => x.worker)), local: med0(rows.map((x) => x.local)), draw: med0(rows.map((x) => x.draw)), check: rows.some((x) => x.check !== null) ? q(rows.map((x) => x.check ?? 0), 0.5) : null, toResult: q(rows.map((x) => x.atDraw), 0.5), target: c.target, pass, samples: ms.map((x) => Math.round(x * 10) / 10) };
        results.push(r);
        console.log(`${c.key.padEnd(5)} ${view.padEnd(7)} ${r.dist.padEnd(16)} n=${r.n}  median ${f1(med).padStart(6)} ms  p95 ${f1(p95).padStart(6)} ms  (compute: page ${f1(r.local)} / worker ${f1(r.worker)}, check ${f1(r.check)}, redraw ${f1(r.draw)}, input→drawn ${f1(r.toResult)})  target ≤ ${c.target.median}${c.target.p95 ? ` / p95 ≤ ${c.target.p95}` : ''}: ${pass ? 'PASS' : 'MISS'}`);
      }
    }
  }
  // The d_k = 2 playground: one vector moved per frame at T = 64 (the map, the weights of the
  // picked query and the values' plot recomputed by the core on a what-if copy, then painted).
  if (MAP) {
    for (let di = 0; di < dists.length; di++) {
      const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${servers[di].base}/index.html#v=1&src=random&heads=2&kv=2&dm=8&dk=2&tokens=${words(64)}&cell=0,5,2&view=heads`);
      await page.waitForFunction(() => window.__attentionPlayground?.ready(), null, { timeout: 60000 });
      await page.waitForFunction(() => document.querySelector('[data-testid="qk-map"]')?.dataset.map, null, { timeout: 60000 });
      await page.waitForTimeout(SETTLE_MS);
      const rows = await page.evaluate(mapDragInPage, { n: N, warm: WARM });
      await page.close();
      if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
      const ms = rows.map((r) => r.ms);
      const med = q(ms, 0.5), p95 = q(ms, 0.95);
      const target = { median: 16.7 };
      const r = { config: 'map-drag-t64', label: 'd_k = 2 map, T = 64, 2 heads: one vector moved per frame', view: 'heads', dist: path.relative(ROOT, dists[di]) || dists[di], n: ms.length, median: med, p95, draw: med0(rows.map((x) => x.draw)), target, pass: med <= target.median, samples: ms.map((x) => Math.round(x * 10) / 10) };
      results.push(r);
      console.log(`map drag T=64 ${r.dist.padEnd(16)} n=${r.n}  median ${f1(med).padStart(6)} ms  p95 ${f1(p95).padStart(6)} ms  (the panel's compute + paint ${f1(r.draw)})  target ≤ 16.7: ${r.pass ? 'PASS' : 'MISS'}`);
    }
  }
} finally {
  await browser.close();
  await Promise.all(servers.map((s) => s.close()));
}
console.log('\ninput-to-paint, ms (median / p95), per view; Chromium', WIDTH, 'px wide');
for (const c of configs) {
  for (const d of dists) {
    const dn = path.relative(ROOT, d) || d;
    const cells = VIEWS.map((v) => results.find((r) => r.config === c.key && r.view === v && r.dist === dn)).map((r) => `${r.view} ${f1(r.median)}/${f1(r.p95)} ${r.pass ? 'PASS' : 'MISS'}`);
    console.log(`${c.label} [${dn}]: ${cells.join(' · ')}`);
  }
}
fs.mkdirSync(path.join(ROOT, 'bench', 'out'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench', 'out', 'frames.json'), JSON.stringify(results, null, 1));
