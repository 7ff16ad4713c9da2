// Two-thread rows for npm run bench: one core.attention call (the browser module,
// build/wasm/attn_core.mjs, kernel 'tiled') split across N Node worker_threads by query-row
// blocks with web/src/timing/attn-split.js (causal blocks balanced by area, each given only the keys up
// to its diagonal), each worker with its own wasm instance. Inputs are copied to the workers once
// per T (not timed); a timed call is the wall clock from posting "call" to every worker until
// their outputs are back and merged. Also times the same call unsplit in this thread (the
// browser module's own JS path, for comparison). Prints one JSON line per T:
//   {"T":..., "ms":[...], "ms1":[...]}
// usage: node --no-liftoff bench/split_bench.mjs --T 1024,2048 --dk 64 --threads 2 --reps 5
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { planSplit, partCall, mergeParts } from '../web/src/timing/attn-split.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
async function loadCore() {
  const { default: create } = await import(path.join(root, 'build/wasm/attn_core.mjs'));
  return create({ wasmBinary: fs.readFileSync(path.join(root, 'build/wasm/attn_core.wasm')) });
}

if (!isMainThread) {
  const core = await loadCore();
  let part = null;
  parentPort.on('message', (m) => {
    if (m.kind === 'load') { part = m; parentPort.postMessage({ kind: 'loaded' }); return; }
    const r = core.attention(part.q, part.k, part.v, { ...part.opts, kernel: m.kernel });
    parentPort.postMessage({ kind: 'result', result: r }, [r.output.buffer, r.entropy.buffer, r.lse.buffer]);
  });
  parentPort.postMessage({ kind: 'ready' });
} else {
  const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
  const Ts = arg('--T', '1024,2048,4096').split(',').map(Number);
  const dk = +arg('--dk', '64');
  const threads = +arg('--threads', '2');
  const reps = +arg('--reps', '5');
  const kernel = 'tiled';

  const workers = [];
  for (let i = 0; i < threads; i++) {
    const w = new Worker(fileURLToPath(import.meta.url));
    await new Promise((res) => w.once('message', res)); // ready
    workers.push(w);
  }
  const ask = (w, m, transfer) => new Promise((res) => { w.once('message', res); w.postMessage(m, transfer); });
  const core = await loadCore();

  let s = 7;
  const rand = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5; return a; };
  const setup = async (T) => {
    const q = rand(T * dk), k = rand(T * dk), v = rand(T * dk);
    // The split follows the core's causal key ranges (attn-split.js never restates the rule).
    const opts = { heads: 1, tq: T, tk: T, dk, dv: dk, causal: true, ranges: core.keyRanges({ t: T, causal: true }) };
    const plan = planSplit(opts, threads);
    await Promise.all(plan.parts.map((part, i) => {
      const c = partCall(q, k, v, opts, part);
      return ask(workers[i], { kind: 'load', ...c }, [c.q.buffer, c.k.buffer, c.v.buffer]);
    }));
    const call = async () => {
      const rs = await Promise.all(plan.parts.map((_, i) => ask(workers[i], { kind: 'call', kernel })));
      return mergeParts(opts, plan, rs.map((m) => m.result));
    };
    return { q, k, v, opts, call };
  };

  // Warm-up: many short calls (Node starts wasm in a baseline compiler; a running call is never upgraded).
  const warm = await setup(256);
  for (let i = 0; i < 200; i++) { await warm.call(); core.attention(warm.q, warm.k, warm.v, { ...warm.opts, kernel }); }

  for (const T of Ts) {
    const x = await setup(T);
    for (let i = 0; i < 2; i++) { await x.call(); core.attention(x.q, x.k, x.v, { ...x.opts, kernel }); }
    const ms = [], ms1 = [];
    for (let r = 0; r < reps; r++) {
      let t0 = performance.now();
      await x.call();
      ms.push(performance.now() - t0);
      t0 = performance.now();
      core.attention(x.q, x.k, x.v, { ...x.opts, kernel });
      ms1.push(performance.now() - t0);
    }
    console.log(JSON.stringify({ T, ms, ms1 }));
  }
  for (const w of workers) await w.terminate();
}
