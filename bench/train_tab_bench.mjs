// The Train tab's default preset in Chromium: wall time from Play to held-out accuracy 0.9, with
// 1 and 2 Workers (link key trw), interleaved rounds, a fresh page each; plus the page's frame
// times while training (target median ≤ 16.7 ms, p95 ≤ 33 ms) and where the Worker's time went.
//
//   node bench/train_tab_bench.mjs                 # dist/ (npx vite build --config web/vite.config.ts)
//   node bench/train_tab_bench.mjs --workers 1,2,4 --rounds 5
//
// The page is scrolled to the Loss panel before Play (Space), as someone watching the run has
// it: the loss curve and the maps below it on screen (1280 x 900). While training, the tab
// redraws only the panels on screen, so what is in view is part of the measurement.
// "Play → 0.9" is the tab's own clock (window.__trainTab.phaseAt.ms90: playing time until the
// evaluation that first reached 0.9); "wall" is the bench's clock from the key press to the
// stopped state (includes the last progress message). The status target: ≤ 1.5 s on a quiet
// 2-core machine with 2 Workers.
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { serveRepo, launchChromium } from './browser.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const dist = path.resolve(opt('dist', path.join(ROOT, 'dist')));
if (!fs.existsSync(path.join(dist, 'index.html'))) throw new Error(`${dist}/index.html missing: npx vite build --config web/vite.config.ts`);
const counts = opt('workers', '1,2').split(',').map(Number);
const rounds = Number(opt('rounds', 3));
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (a, q) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
};

const { base, close } = await serveRepo(dist);
const browser = await launchChromium();
// GEMM flops of one default-preset step (web/src/train/config.ts flopsPerStep: B 32, T 32, D 64, 2 layers, 2 heads, V 32).
const FLOPS = (() => {
  const B = 32, T = 32, D = 64, H = 2, dh = 32, V = 32;
  const proj = 2 * B * T * D * (4 * H * dh);
  const attn = 2 * 2 * B * H * T * T * dh;
  return 3 * (2 * (proj + attn) + 2 * B * T * D * V);
})();
const rows = Object.fromEntries(counts.map((k) => [k, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const k of counts) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${base}/index.html#v=1&view=train&uacc=0.9&trw=${k}`);
      await page.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'idle', null, { timeout: 60000 });
      await page.waitForTimeout(500);
      await page.evaluate(() => {
        window.__frameLog = [];
        let last = 0;
        const tick = (t) => {
          if (last) window.__frameLog.push(t - last);
          last = t;
          if (!window.__frameStop) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      });
      // the page's main-thread busy time while training (it shares the cores with the Workers)
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const busy = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value * 1000;
      const busy0 = await busy();
      await page.evaluate(() => document.querySelector('[data-testid=train-loss-chart]').closest('section').scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(200);
      const t0 = Date.now();
      await page.keyboard.press('Space');
      // Polled every 50 ms, not every animation frame (Playwright's default): a per-frame probe
      // would add work to the page's main thread that no user's page has.
      await page.waitForFunction(() => document.querySelector('[data-testid=train-view]')?.dataset.run === 'stopped', null, { timeout: 120000, polling: 50 });
      const wall = Date.now() - t0;
      const pageBusy = (await busy()) - busy0;
      const info = await page.evaluate(() => {
        window.__frameStop = true;
        return { ...window.__trainTab.phaseAt, step: window.__trainTab.step(), workers: window.__trainTab.workers(), frames: window.__frameLog, sps: window.__trainTab.stepsPerSec(), gf: window.__trainTab.gflops(), split: window.__trainTab.split() };
      });
      rows[k].push({ ms90: info.ms90, wall, step: info.step, workers: info.workers, sps: info.sps, trainMs: FLOPS / (info.gf * 1e6), split: info.split, pageBusy, fMed: pct(info.frames, 0.5), fP95: pct(info.frames, 0.95) });
      await page.close();
    }
  }
} finally {
  await browser.close();
  await close();
}
for (const k of counts) {
  const a = rows[k];
  console.log(JSON.stringify({
    bench: 'train-tab', workers: k, workersUsed: a.map((x) => x.workers), step90: a.map((x) => x.step),
    play90Ms: median(a.map((x) => x.ms90)),
    // per step: wall ms (evaluation, head scores, snapshots, messages included) and ms inside the steps
    wallMsPerStep: 1000 / median(a.map((x) => x.sps)), trainMsPerStep: median(a.map((x) => x.trainMs)), wallMs: median(a.map((x) => x.wall)), stepsPerSec: median(a.map((x) => x.sps)),
    // ms per step spent in: the steps, evaluations, head scores, snapshots, the rest (messages, yields)
    perStep: Object.fromEntries(['train', 'eval', 'scores', 'snap', 'wall'].map((f) => [f, +median(a.map((x) => x.split[f] / x.split.steps)).toFixed(2)])),
    // the page's main thread: busy ms per step from Play to the stop
    pageMsPerStep: +median(a.map((x) => x.pageBusy / x.step)).toFixed(2),
    frameMedianMs: median(a.map((x) => x.fMed)), frameP95Ms: median(a.map((x) => x.fP95)),
    cpus: os.cpus().length, load1: os.loadavg()[0], rounds,
  }));
}
