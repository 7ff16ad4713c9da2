// core.attention in Chromium (issue 12 items 3 and 4): serves the repo on 127.0.0.1, loads both
// builds in a page through cpp/bindings/load_core.mjs (prefer 'simd' and 'relaxed'), times one
// causal call per rep after warm-up (same inputs as bench/inputs.mjs) and prints one JSON line per
// (build, T): {"build","T","ms":[...],"kernelMs":[...]} plus {"relaxedSimdValidates": bool};
// build 'simd+into' is the SIMD128 core with caller-owned result arrays (the `into` argument).
//   node bench/browser_api_bench.mjs [--T 64,256,1024,2048] [--reps 10]
// Chromium: Debian's /usr/bin/chromium via playwright-core (docs: TOOLCHAIN.md).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (n, d) => { const i = argv.indexOf('--' + n); return i >= 0 ? argv[i + 1] : d; };
const Ts = arg('T', '64,256,1024,2048').split(',').map(Number);
const reps = +arg('reps', '10');
const types = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = http.createServer((req, res) => {
  const p = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!p.startsWith(root) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) { res.writeHead(404).end(); return; }
  // Cross-origin isolated: performance.now() at 5 us instead of 100 us resolution.
  res.writeHead(200, { 'content-type': types[path.extname(p)] ?? 'application/octet-stream',
    'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });
  fs.createReadStream(p).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`${base}/bench/inputs_core.mjs`); // any same-origin page
  const out = await page.evaluate(async ({ Ts, reps }) => {
    const { loadAttnCore, relaxedSimdSupported } = await import('/cpp/bindings/load_core.mjs');
    const { inputs } = await import('/bench/inputs_core.mjs');
    const res = [{ relaxedSimdValidates: relaxedSimdSupported(), crossOriginIsolated: self.crossOriginIsolated,
      userAgent: navigator.userAgent }];
    const builds = {
      simd: { factory: () => import('/build/wasm/attn_core.mjs'), wasmUrl: '/build/wasm/attn_core.wasm' },
      relaxed: { factory: () => import('/build/wasm/attn_core_relaxed.mjs'), wasmUrl: '/build/wasm/attn_core_relaxed.wasm' },
    };
    const cores = {};
    for (const prefer of ['simd', 'relaxed']) {
      try { cores[prefer] = await loadAttnCore({ prefer, ...builds }); } catch (e) { res.push({ build: prefer, error: String(e) }); }
    }
    if (cores.simd) cores['simd+into'] = cores.simd; // the same core, results copied into caller arrays
    const names = Object.keys(cores);
    const intoFor = (T) => ({ output: new Float32Array(T * 64), entropy: new Float32Array(T), lse: new Float32Array(T) });
    const opts = (T) => ({ heads: 1, tq: T, tk: T, dk: 64, dv: 64, causal: true, kernel: 'tiled' });
    const ins = Object.fromEntries(Ts.map((T) => [T, inputs(T, 64)]));
    // Warm-up: at least 3 rounds and 3 s, so the engine's background compiler can tier every hot
    // function up (a call already running in the baseline tier stays there).
    const w0 = performance.now();
    for (let w = 0; w < 3 || performance.now() - w0 < 3000; w++) {
      for (const T of Ts) for (const n of names) cores[n].attention(...ins[T], opts(T));
      await new Promise((r) => setTimeout(r, 50)); // let finished compile jobs install
    }
    for (const T of Ts) {
      const r = Object.fromEntries(names.map((n) => [n, { build: n, relaxed: cores[n].limits.relaxedSimd, T, ms: [], kernelMs: [] }]));
      const into = intoFor(T);
      // Short calls are timed in batches (the clock is coarse in a page): ms = batch / calls.
      const batch = T <= 64 ? 50 : T <= 256 ? 10 : 1;
      const n = T <= 1024 ? reps * 2 : reps;
      for (let i = 0; i < n; i++) {
        for (const b of names) {
          let k = 0;
          const t0 = performance.now();
          const dst = b === 'simd+into' ? into : undefined;
          for (let j = 0; j < batch; j++) { cores[b].attention(...ins[T], opts(T), dst); k += cores[b].lastKernelMs(); }
          r[b].ms.push((performance.now() - t0) / batch);
          r[b].kernelMs.push(k / batch);
        }
      }
      res.push(...Object.values(r));
    }
    return res;
  }, { Ts, reps });
  for (const r of out) console.log(JSON.stringify(r));
} finally {
  await browser.close();
  server.close();
}
