// Training-step and decoding timings of the attn_train wasm module under Node (bench/run.mjs).
//
//   node --no-liftoff bench/train_bench.mjs --mode train --dmodel 64,32 --reps 40
//     one JSON line per d_model: median ms of forward, backward (forward+backward - forward)
//     and optimizer (clip + AdamW) over `reps` steps on one fixed batch after warm-up,
//     config A otherwise (vocab 32, T 32, 2 layers, 2 heads, batch 32, naive kernel).
//   node --no-liftoff bench/train_bench.mjs --mode decode --T 256,512,1024,2048,4096
//     one JSON line: per-token ms with and without the KV cache at each length T for a random
//     d_model 256, 8-head, 2-layer model (seqLen = max T, tiled kernel for the recompute
//     forward), timed over a few appends after prefilling T - k tokens.
//   node --no-liftoff bench/train_bench.mjs --mode workers --workers 1,2 --steps 60 --rounds 3
//     one JSON line per Worker count: steps/s of config A trained by the Train tab's Worker pool
//     (worker_threads; the same bits for every count) and the speed-up over the first count;
//     with --independent, one more line: the steps/s of that many trainers that share nothing,
//     stepping at once on as many threads, against one alone (what the machine allows).
//   node --no-liftoff bench/train_bench.mjs --mode ab --module DIR_A --module DIR_B --dmodel 64,32
//        [--rounds 60] [--reps 10]
//     two (or more) builds of attn_train (DIR/attn_train.{mjs,wasm}) in one process, their
//     trainers' profile(reps) called alternately for `rounds` rounds: one JSON line per build
//     and d_model with the median and best forward and forward+backward ms. On a noisy VM
//     (a shared core's other thread) separate processes differed by more than a change
//     does; alternating calls in one process see the same noise.
//   node --no-liftoff bench/train_bench.mjs --mode decode-state --T 256,512,1024,2048,4096
//     one JSON line: the same model with normalizer 'linear': per-token ms with its recurrent
//     state and with the K/V cache at each T (median over 48 appends ending at T), the bytes
//     each reports, and the least-squares exponents of ms against T.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const loadTrain = async (dir) => {
  const { default: create } = await import(path.join(dir, 'attn_train.mjs'));
  return create({ wasmBinary: fs.readFileSync(path.join(dir, 'attn_train.wasm')) });
};
const mode = arg('mode', 'train');
// --mode ab loads its own builds.
const lib = mode === 'ab' ? null : await loadTrain(path.join(root, 'build/wasm'));
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

if (mode === 'train') {
  const reps = +arg('reps', '40');
  const batch = +arg('batch', '32');
  for (const dModel of arg('dmodel', '64,32').split(',').map(Number)) {
    const tr = lib.createTrainer({ dModel, batch, seed: 0 });
    tr.profile(10); // warm-up: Node tiers the wasm up only for calls that start later
    const p = tr.profile(reps);
    tr.delete();
    console.log(JSON.stringify({ impl: 'wasm', dModel, batch, forward: p.forward,
      backward: p.forwardBackward - p.forward, optimizer: p.optimizer,
      step: p.forwardBackward + p.optimizer }));
  }
} else if (mode === 'ab') {
  const dirs = process.argv.flatMap((a, i) => (a === '--module' ? [path.resolve(process.argv[i + 1])] : []));
  if (dirs.length < 2) throw new Error('--mode ab needs two or more --module DIR (each holding attn_train.mjs and .wasm)');
  const libs = [];
  for (const d of dirs) libs.push(await loadTrain(d));
  const rounds = +arg('rounds', '60');
  const reps = +arg('reps', '10');
  const batch = +arg('batch', '32');
  for (const dModel of arg('dmodel', '64,32').split(',').map(Number)) {
    const trs = libs.map((l) => l.createTrainer({ dModel, batch, seed: 0 }));
    trs.forEach((t) => t.profile(20)); // warm-up
    const f = trs.map(() => []), fb = trs.map(() => []);
    for (let r = 0; r < rounds; r++) {
      trs.forEach((t, i) => {
        const p = t.profile(reps);
        f[i].push(p.forward);
        fb[i].push(p.forwardBackward);
      });
    }
    trs.forEach((t, i) => {
      console.log(JSON.stringify({ impl: 'wasm-ab', module: dirs[i], dModel, batch, rounds,
        forward: median(f[i]), forwardBest: Math.min(...f[i]),
        forwardBackward: median(fb[i]), forwardBackwardBest: Math.min(...fb[i]) }));
      t.delete();
    });
  }
} else if (mode === 'workers') {
  // Steps/s of config A (or --dmodel) trained by the Train tab's Worker pool (web/src/train/pool.ts,
  // transpiled) with 1 and 2 (--workers) Node worker_threads, same bits for every count. Rounds
  // interleave the counts; each times --steps steps after a warm-up; the median per count is printed.
  const os = await import('node:os');
  const { pathToFileURL } = await import('node:url');
  const { Worker } = await import('node:worker_threads');
  const { writePoolModule } = await import('../tests/js/pool-module.mjs');
  const poolUrl = pathToFileURL(writePoolModule(fs.mkdtempSync(path.join(os.tmpdir(), 'attn-pool-')))).href;
  const { ShardPool, coordinatorAwakeMs } = await import(poolUrl);
  const workerFile = new URL('../tests/js/shard-worker-node.mjs', import.meta.url);
  const port = () => {
    const w = new Worker(workerFile, { workerData: { poolUrl, trainMjs: pathToFileURL(path.join(root, 'build/wasm/attn_train.mjs')).href, trainWasm: path.join(root, 'build/wasm/attn_train.wasm') } });
    const ls = [];
    w.on('message', (m) => ls.forEach((f) => f(m)));
    return { post: (m, t = []) => w.postMessage(m, t), listen: (f) => ls.push(f), terminate: () => void w.terminate() };
  };
  const counts = arg('workers', '1,2').split(',').map(Number);
  const steps = +arg('steps', '60');
  const rounds = +arg('rounds', '3');
  const dModel = +arg('dmodel', '64');
  const batch = +arg('batch', '32');
  const pools = {};
  for (const k of counts) {
    const tr = lib.createTrainer({ dModel, batch, seed: 0 });
    pools[k] = { tr, pool: await ShardPool.start(tr, k, port), rate: [] };
    // No page here: the coordinator (this thread) stays awake for its helpers where cores allow.
    pools[k].pool.awakeMs = coordinatorAwakeMs(os.cpus().length, k, 0);
    await pools[k].pool.train(20); // warm-up (Node tiers the wasm up in every thread)
  }
  for (let r = 0; r < rounds; r++) {
    for (const k of counts) {
      const t0 = performance.now();
      await pools[k].pool.train(steps);
      pools[k].rate.push(steps / ((performance.now() - t0) / 1000));
    }
  }
  const base = median(pools[counts[0]].rate);
  for (const k of counts) {
    const sps = median(pools[k].rate);
    console.log(JSON.stringify({ impl: 'wasm-workers', dModel, batch, workers: k, stepsPerSec: sps, speedup: sps / base, cpus: os.cpus().length, load1: os.loadavg()[0] }));
    pools[k].pool.close();
    pools[k].tr.delete();
  }
  // The machine's ceiling for any way of sharing one model's step between two threads: two
  // trainers with nothing in common (each its own module, the same 4-shard step as one Worker)
  // stepping at once on two threads, against one of them stepping alone; rounds alternate.
  // On cores of their own the pair makes 2x the steps; where the host runs the two vCPUs on
  // one core's threads, or on cores it shares with other guests, less.
  const maxW = Math.max(...counts);
  if (maxW >= 2 && process.argv.includes('--independent')) {
    const src = `const { parentPort, workerData } = require('node:worker_threads');
      const fs = require('node:fs');
      (async () => {
        const { default: create } = await import(workerData.trainMjs);
        const lib = await create({ wasmBinary: fs.readFileSync(workerData.trainWasm) });
        const tr = lib.createTrainer({ dModel: workerData.dModel, batch: workerData.batch, seed: 0 });
        tr.train(20);
        parentPort.on('message', (n) => { const t0 = performance.now(); tr.train(n); parentPort.postMessage(performance.now() - t0); });
        parentPort.postMessage('ready');
      })();`;
    const data = { trainMjs: pathToFileURL(path.join(root, 'build/wasm/attn_train.mjs')).href,
      trainWasm: path.join(root, 'build/wasm/attn_train.wasm'), dModel, batch };
    const threads = await Promise.all(Array.from({ length: maxW }, () => new Promise((resolve) => {
      const w = new Worker(src, { eval: true, workerData: data });
      w.once('message', () => resolve(w));
    })));
    const run = (ws) => Promise.all(ws.map((w) => new Promise((resolve) => {
      w.once('message', resolve);
      w.postMessage(steps);
    })));
    const alone = [], together = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      await run(threads.slice(0, 1));
      alone.push(steps / ((performance.now() - t0) / 1000));
      const t1 = performance.now();
      await run(threads);
      together.push((maxW * steps) / ((performance.now() - t1) / 1000));
    }
    threads.forEach((w) => void w.terminate());
    console.log(JSON.stringify({ impl: 'wasm-independent', dModel, batch, threads: maxW, aloneStepsPerSec: median(alone),
      togetherStepsPerSec: median(together), speedup: median(together) / median(alone), cpus: os.cpus().length, load1: os.loadavg()[0] }));
  }
} else if (mode === 'decode-state') {
  const Ts = arg('T', '256,512,1024,2048,4096').split(',').map(Number);
  const maxT = Math.max(...Ts);
  const tr = lib.createTrainer({ task: 'random', vocab: 64, seqLen: maxT, layers: 2, heads: 8, dModel: 256,
    batch: 1, kernel: 'tiled', seed: 1, normalizer: 'linear' });
  const toks = Int32Array.from({ length: maxT }, (_, i) => (i * 7919) % 64);
  const out = { impl: 'wasm-decode-state', dModel: 256, heads: 8, layers: 2, T: Ts, state: [], cache: [], stateBytes: [], cacheBytes: [] };
  const modes = [['state', { state: true }], ['cache', { state: false }]];
  for (const [, o] of modes) {
    const d = tr.decoder(o);
    for (let i = 0; i < 256; i++) d.append(toks[i]);
    d.delete();
  }
  for (const T of Ts) {
    for (const [name, o] of modes) {
      const k = 48;
      const d = tr.decoder(o);
      d.prefill(toks.subarray(0, T - k));
      const ms = [];
      let bytes = 0;
      for (let i = T - k; i < T; i++) {
        const t0 = performance.now();
        bytes = d.append(toks[i]).cacheBytes;
        ms.push(performance.now() - t0);
      }
      d.delete();
      out[name].push(median(ms));
      out[`${name}Bytes`].push(bytes);
    }
  }
  const fit = (ys) => {
    const xs = Ts.map(Math.log), ls = ys.map(Math.log);
    const mx = xs.reduce((a, b) => a + b) / xs.length, my = ls.reduce((a, b) => a + b) / ls.length;
    let sxy = 0, sxx = 0;
    xs.forEach((x, i) => { sxy += (x - mx) * (ls[i] - my); sxx += (x - mx) ** 2; });
    return sxy / sxx;
  };
  out.exponents = { state: fit(out.state), cache: fit(out.cache) };
  tr.delete();
  console.log(JSON.stringify(out));
} else {
  const Ts = arg('T', '256,512,1024,2048,4096').split(',').map(Number);
  const maxT = Math.max(...Ts);
  const tr = lib.createTrainer({ task: 'random', vocab: 64, seqLen: maxT, layers: 2, heads: 8, dModel: 256,
    batch: 1, kernel: 'tiled', seed: 1 });
  const toks = Int32Array.from({ length: maxT }, (_, i) => (i * 7919) % 64);
  const out = { impl: 'wasm-decode', dModel: 256, heads: 8, layers: 2, T: Ts, cached: [], recompute: [], cacheBytes: [] };
  // Warm-up of both paths.
  for (const cache of [true, false]) {
    const d = tr.decoder({ cache });
    for (let i = 0; i < 64; i++) d.append(toks[i]);
    d.delete();
  }
  for (const T of Ts) {
    for (const cache of [true, false]) {
      const k = cache ? 8 : (T >= 2048 ? 2 : 4);
      const d = tr.decoder({ cache });
      d.prefill(toks.subarray(0, T - k));
      const ms = [];
      let bytes = 0;
      for (let i = T - k; i < T; i++) {
        const t0 = performance.now();
        bytes = d.append(toks[i]).cacheBytes;
        ms.push(performance.now() - t0);
      }
      d.delete();
      (cache ? out.cached : out.recompute).push(median(ms));
      if (cache) out.cacheBytes.push(bytes);
    }
  }
  tr.delete();
  console.log(JSON.stringify(out));
}
