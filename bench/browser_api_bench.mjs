// core.attention in Chromium (the API speed targets, 4 and 5): serves the repo on 127.0.0.1
// (bench/browser.mjs), loads both builds in a page through cpp/bindings/load_core.mjs (prefer
// 'simd' and 'relaxed'), times causal calls after warm-up on the same inputs as every other
// runner (bench/inputs_core.mjs) and checks each output against the float64 reference rows.
//   node bench/browser_api_bench.mjs [--T 64,256,1024,2048] [--reps 10] [--peers] [--dir bench/out] [--warmup-ms 3000]
// Prints {"relaxedSimdValidates", ...} and then one JSON line per (impl, T):
//   {"impl","T","ms":[...],"kernelMs":[...],"maxAbsError"} (kernelMs: our builds only)
// impl: 'simd' (attn_core, SIMD128), 'relaxed' (attn_core_relaxed, FMA; an {"impl","error"} line
// where Chromium does not validate relaxed SIMD), 'simd+into' and 'relaxed+into' (the same,
// caller-owned result arrays: the `into` argument), 'fresh-array' (no attention: Float32Array.slice
// of an array the size of the output, the browser's price for a fresh result) and, with --peers,
// the two peers of `npm run bench -- --peers` in the same page, one thread each:
//   'tfjs-wasm': @tensorflow/tfjs-backend-wasm 4.22 (bench/peers/node_modules, UMD scripts), its
//     SIMD build without threads (WASM_HAS_MULTITHREAD_SUPPORT set false: the page is
//     cross-origin isolated, so it would otherwise pick the threaded build), setThreadsCount(1);
//     the same spelling as bench/peers/run_peer.mjs (K transposed explicitly, matMul, scale,
//     additive mask, softmax, matMul), wall clock from Float32Arrays in to dataSync() out;
//   'ort-wasm': onnxruntime-web 1.30 (ort.wasm.min.mjs, wasm EP, ort.env.wasm.numThreads = 1) on
//     the graph bench/peers/make_onnx.py exports (written to --dir if missing), awaited run().
// The additive masks are made once per T, outside the clock, as in run_peer.mjs.
// Rounds are interleaved: every rep runs each impl once, in a shuffled order (--order rotate: the
// old cyclic one). Calls of T <= 256 are timed in batches (ms = batch / calls) for every impl alike.
// Chromium: Debian's /usr/bin/chromium via playwright-core (docs: TOOLCHAIN.md).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveRepo, launchChromium, BLANK_PAGE } from './browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (n, d) => { const i = argv.indexOf('--' + n); return i >= 0 ? argv[i + 1] : d; };
const Ts = arg('T', '64,256,1024,2048').split(',').map(Number);
const reps = +arg('reps', '10');
const peers = argv.includes('--peers');
const warmupMs = +arg('warmup-ms', '3000');
const ORDER = arg('order', 'shuffle'); // 'rotate': the old cyclic order, for comparison
const dir = path.resolve(root, arg('dir', 'bench/out'));
const DK = 64;

const PEERS_DIR = 'bench/peers/node_modules';
let onnxUrl = null;
if (peers) {
  if (!fs.existsSync(path.join(root, PEERS_DIR, 'onnxruntime-web'))) {
    throw new Error('bench/peers/node_modules is missing: npm ci --no-audit --no-fund --prefix bench/peers');
  }
  const onnx = path.join(dir, `attention-d${DK}.onnx`);
  if (!fs.existsSync(onnx)) {
    fs.mkdirSync(dir, { recursive: true });
    const r = spawnSync('/usr/bin/python3', ['bench/peers/make_onnx.py', onnx, '--dk', String(DK)], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`make_onnx.py failed:\n${r.stderr}`);
  }
  if (!onnx.startsWith(root + path.sep)) throw new Error('--dir must be inside the repository (the page fetches the graph from it)');
  onnxUrl = '/' + path.relative(root, onnx).split(path.sep).join('/');
}

const { base, close } = await serveRepo(root, { pages: { '/bench.html': BLANK_PAGE } });
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`${base}/bench.html`);
  if (peers) { // UMD builds: global tf, then tf.wasm
    await page.addScriptTag({ url: `/${PEERS_DIR}/@tensorflow/tfjs-core/dist/tf-core.es2017.min.js` });
    await page.addScriptTag({ url: `/${PEERS_DIR}/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.es2017.min.js` });
  }
  const out = await page.evaluate(async ({ Ts, reps, peers, PEERS_DIR, onnxUrl, DK, warmupMs, ORDER }) => {
    const { loadAttnCore, relaxedSimdSupported } = await import('/cpp/bindings/load_core.mjs');
    const { inputs, sampleRows, referenceRows, maxAbsError, uniform } = await import('/bench/inputs_core.mjs');
    const head = { relaxedSimdValidates: relaxedSimdSupported(), crossOriginIsolated: self.crossOriginIsolated,
      userAgent: navigator.userAgent };
    const res = [head];
    const builds = {
      simd: { factory: () => import('/build/wasm/attn_core.mjs'), wasmUrl: '/build/wasm/attn_core.wasm' },
      relaxed: { factory: () => import('/build/wasm/attn_core_relaxed.mjs'), wasmUrl: '/build/wasm/attn_core_relaxed.wasm' },
    };
    const opts = (T) => ({ heads: 1, tq: T, tk: T, dk: DK, dv: DK, causal: true, kernel: 'tiled' });
    const ins = Object.fromEntries(Ts.map((T) => [T, inputs(T, DK)]));
    const causalMask = (T) => {
      const m = new Float32Array(T * T);
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -Infinity;
      return m;
    };
    // impl -> { run(T): output Float32Array (or a Promise of one), kernelMs?(): number }
    const impls = {};
    for (const prefer of ['simd', 'relaxed']) {
      try {
        const core = await loadAttnCore({ prefer, ...builds });
        impls[prefer] = { core, run: (T) => core.attention(...ins[T], opts(T)).output, kernelMs: () => core.lastKernelMs(),
          relaxed: core.limits.relaxedSimd };
      } catch (e) { res.push({ impl: prefer, error: String(e) }); }
    }
    // The same cores, results copied into caller-owned arrays (the `into` argument): in Chromium a
    // fresh Float32Array costs far more than the copy into it (see the table run.mjs prints).
    for (const b of ['simd', 'relaxed']) {
      if (!impls[b]) continue;
      const into = Object.fromEntries(Ts.map((T) => [T, { output: new Float32Array(T * DK), entropy: new Float32Array(T), lse: new Float32Array(T), rowSums: new Float32Array(T) }]));
      const { core, relaxed } = impls[b];
      impls[`${b}+into`] = { run: (T) => core.attention(...ins[T], opts(T), into[T]).output, kernelMs: () => core.lastKernelMs(), relaxed };
    }
    // No attention at all: a fresh copy of an array the size of one call's output, what a call
    // without `into` pays the browser for its result (timed like the rest, never checked).
    const outputSized = Object.fromEntries(Ts.map((T) => [T, new Float32Array(T * DK)]));
    impls['fresh-array'] = { run: (T) => outputSized[T].slice(), probe: true };
    if (peers) {
      try {
        const tf = self.tf;
        tf.wasm.setWasmPaths(`${location.origin}/${PEERS_DIR}/@tensorflow/tfjs-backend-wasm/dist/`);
        tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // the SIMD build, not the threaded one
        tf.wasm.setThreadsCount(1);
        if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
        await tf.ready();
        const masks = {};
        const scale = tf.scalar(1 / Math.sqrt(DK));
        impls['tfjs-wasm'] = {
          run: (T) => {
            masks[T] ??= tf.keep(tf.tensor2d(causalMask(T), [T, T]));
            const y = tf.tidy(() => {
              const Q = tf.tensor2d(ins[T][0], [T, DK]), K = tf.tensor2d(ins[T][1], [T, DK]), V = tf.tensor2d(ins[T][2], [T, DK]);
              const s = tf.add(tf.mul(tf.matMul(Q, tf.transpose(K)), scale), masks[T]);
              return tf.matMul(tf.softmax(s), V);
            });
            const d = y.dataSync();
            y.dispose();
            return d;
          },
          info: { version: tf.wasm.version_wasm, simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'),
            threaded: tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT'), threads: tf.wasm.getThreadsCount() },
        };
        for (const T of Ts) impls['tfjs-wasm'].run(T); // masks made outside the clock
      } catch (e) { res.push({ impl: 'tfjs-wasm', error: String(e?.message ?? e) }); delete impls['tfjs-wasm']; }
      try {
        const ort = await import(`/${PEERS_DIR}/onnxruntime-web/dist/ort.wasm.min.mjs`);
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.wasmPaths = `${location.origin}/${PEERS_DIR}/onnxruntime-web/dist/`;
        const model = new Uint8Array(await (await fetch(onnxUrl)).arrayBuffer());
        const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
        const masks = Object.fromEntries(Ts.map((T) => [T, new ort.Tensor('float32', causalMask(T), [T, T])]));
        const t32 = (a, T) => new ort.Tensor('float32', a, [T, DK]);
        impls['ort-wasm'] = {
          run: async (T) => (await session.run({ q: t32(ins[T][0], T), k: t32(ins[T][1], T), v: t32(ins[T][2], T), mask: masks[T] })).out.data,
          info: { version: ort.env.versions?.web, threads: ort.env.wasm.numThreads },
        };
      } catch (e) { res.push({ impl: 'ort-wasm', error: String(e?.message ?? e) }); }
    }
    const names = Object.keys(impls);
    head.peers = Object.fromEntries(names.filter((n) => impls[n].info).map((n) => [n, impls[n].info]));
    // Checked once per (impl, T), outside the clock, against the float64 reference rows.
    const errs = {};
    for (const T of Ts) {
      const rows = sampleRows(T), ref = referenceRows(...ins[T], T, DK, rows);
      for (const n of names) if (!impls[n].probe) errs[`${n}|${T}`] = maxAbsError(await impls[n].run(T), ref, rows, DK);
    }
    // Warm-up: at least 3 rounds and 3 s, so the engine's background compiler can tier every hot
    // function up (a call already running in the baseline tier stays there). Each round is
    // followed by as long a pause: pinned to one vCPU with a busy page, V8's background
    // TurboFan jobs starved and our kernels stayed in Liftoff code (T = 64 kernel 0.078 ms
    // against 0.043 with --no-liftoff, after 5 s of back-to-back calls); a page between inputs
    // is idle, and so is this one half of the warm-up time.
    const w0 = performance.now();
    for (let w = 0; w < 3 || performance.now() - w0 < warmupMs; w++) {
      const r0 = performance.now();
      for (const T of Ts) for (const n of names) await impls[n].run(T);
      await new Promise((r) => setTimeout(r, Math.max(50, performance.now() - r0)));
    }
    // Each rep's order is a fresh permutation (seeded: the same every run). A rotation keeps every
    // impl behind the same predecessor in every rep, so whatever one leaves behind (garbage the
    // next batch pays to collect, evicted caches) would always land on the same neighbour.
    const rand = uniform(0x9e3779b9);
    const orderOf = (i) => {
      if (ORDER === 'rotate') return names.map((_, j) => names[(j + i) % names.length]);
      const o = [...names];
      for (let j = o.length - 1; j > 0; j--) { const x = Math.floor(rand() * (j + 1)); [o[j], o[x]] = [o[x], o[j]]; }
      return o;
    };
    for (const T of Ts) {
      const r = Object.fromEntries(names.map((n) => [n, { impl: n, build: n, relaxed: impls[n].relaxed, T, ms: [],
        kernelMs: [], maxAbsError: errs[`${n}|${T}`] }]));
      const batch = T <= 64 ? 50 : T <= 256 ? 10 : 1;
      // Small T costs nothing to repeat: at least 20 reps there, so a few disturbed ones (a
      // collection of the previous size's garbage, a late tier-up) cannot carry the median.
      const n = T <= 256 ? Math.max(20, reps * 2) : T <= 1024 ? reps * 2 : reps;
      // Settle at the new size, untimed: one batch of every impl, then the page idles as long
      // (at least 50 ms), as between the warm-up's rounds. With 6 reps and no settling, the
      // first reps after the T = 4096 warm-up calls ran 2-4x slower (kernel time included)
      // and moved the T = 64 medians from 0.03-0.04 to 0.07-0.12 ms.
      const s0 = performance.now();
      for (const b of names) for (let j = 0; j < batch; j++) await impls[b].run(T);
      await new Promise((res) => setTimeout(res, Math.max(50, performance.now() - s0)));
      for (let i = 0; i < n; i++) {
        for (const b of orderOf(i)) {
          const { run, kernelMs } = impls[b];
          let k = 0;
          const t0 = performance.now();
          for (let j = 0; j < batch; j++) {
            const y = run(T);
            if (y instanceof Promise) await y;
            if (kernelMs) k += kernelMs();
          }
          r[b].ms.push(+((performance.now() - t0) / batch).toFixed(4));
          if (kernelMs) r[b].kernelMs.push(+(k / batch).toFixed(4));
        }
      }
      res.push(...Object.values(r));
    }
    return res;
  }, { Ts, reps, peers, PEERS_DIR, onnxUrl, DK, warmupMs, ORDER });
  out[0].chromium = browser.version();
  for (const r of out) console.log(JSON.stringify(r));
} finally {
  await browser.close();
  await close();
}
