// npm run bench [-- --quick] [-- --peers [--api-only]] [-- --cpu N]
//
// --peers: also tfjs-wasm and onnxruntime-web (pinned in bench/peers/package.json,
// installed there with npm ci, apart from the app's dependencies) and PyTorch one thread
// (Debian python3-torch; back to back and interleaved), all on the same input bytes
// (bench/inputs.mjs -> bench/out/), outputs checked against a float64 reference.
// --cpu N: the vCPU every one-thread process is pinned to (taskset; default: the last one).
// On this machine kind the vCPUs differ in speed (~1.45x), and an unpinned process
// lands on either, which made timings bimodal across processes; pinning makes every
// implementation run on the same one.
//
// Part 2: one training step (forward + backward + AdamW) of the attention-only
// transformer, config A and d_model 32, batch 32: the attn_train wasm module under Node vs
// PyTorch eager with one thread (bench/train_bench.mjs, bench/train_torch.py), interleaved with
// the rounds above; and KV-cache decoding per-token time for T = 256 ... 4096 (once).
//
// Times scaled dot-product attention on given Q, K, V (scores, mask, softmax, A.V; no
// projections) for NumPy (the lessons' code, float64 and float32, on OpenBLAS), our
// native build and our wasm builds in Node, in several interleaved rounds (each
// process warms up first), prints medians, ratios and GFLOP/s, checks the speed
// targets, and writes bench/results.json (rows) and bench/results.meta.json.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, machineLine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
// --train-only: only the training-step and decoding part (plus the SIMD peak it reports against).
const trainOnly = process.argv.includes('--train-only');
// --api-only (with --peers): only the JS API rows, the peers and PyTorch (Node) and the Chromium
// table (a few minutes instead of the whole bench); writes bench/results.api.json.
const apiOnly = process.argv.includes('--api-only') && !trainOnly;
const peers = process.argv.includes('--peers');
const cpuArg = process.argv.indexOf('--cpu');
const pinCpu = cpuArg > 0 ? +process.argv[cpuArg + 1] : os.cpus().length - 1;
const PY = '/usr/bin/python3';
const NODE = process.execPath;
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' };
const log = (...a) => console.log(...a);

// ---------------------------------------------------------------- setup
function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { cwd: root, env, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
}
function ensureOpenBlas() {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', 'libopenblas0-pthread'], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.includes('install ok installed')) return 'installed';
  log('libopenblas0-pthread is missing: installing it with apt-get (NumPy runs on OpenBLAS)');
  sh('apt-get', ['install', '-y', 'libopenblas0-pthread'], { stdio: 'inherit' });
  return 'installed now';
}
// PyTorch back to back at its best: its CPU tensors come from malloc, and glibc hands large blocks
// back to the kernel (mmap above 32 MiB, trimming below), so every call of T ≥ 2048 page-faults
// its score matrices in afresh: 70 vs 20 ms at T = 2048 on an AMD EPYC here. jemalloc with no
// decay keeps them (T = 4096: 930 -> 82 ms). Installed with apt-get when missing.
const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
function ensureJemalloc() {
  if (fs.existsSync(JEMALLOC)) return 'installed';
  log('libjemalloc2 is missing: installing it with apt-get (PyTorch back to back runs on it)');
  sh('apt-get', ['install', '-y', 'libjemalloc2'], { stdio: 'inherit' });
  return 'installed now';
}
function build() {
  log('building the bench drivers (native attn_bench, wasm attn_bench_wasm{,_scalar}) ...');
  if (!fs.existsSync(path.join(root, 'build/native/CMakeCache.txt'))) sh('cmake', ['--preset', 'native']);
  sh('cmake', ['--build', '--preset', 'native', '--target', 'attn_bench']);
  if (!fs.existsSync(path.join(root, 'build/wasm/CMakeCache.txt'))) sh('cmake', ['--preset', 'wasm']);
  sh('cmake', ['--build', '--preset', 'wasm', '--target', 'attn_bench', 'attn_bench_scalar', 'attn_core_js', 'attn_train_js',
    'attn_bench_relaxed', 'attn_core_relaxed_js']);
}

// ---------------------------------------------------------------- jobs
const DK = 64;
const Ts = quick ? [256, 512, 1024, 2048] : [256, 512, 1024, 2048, 4096];
const tiledTs = quick ? Ts : [...Ts, 8192, 16384];
const denseTs = quick ? [1024, 2048] : [1024, 2048, 4096];
const rounds = quick ? 3 : 7;
const list = (a) => a.join(',');

// OpenBLAS (NumPy's and PyTorch's BLAS here) picks its kernels by CPU model. The machine's preset
// OPENBLAS_CORETYPE=Haswell cost ~1.5x on an AMD EPYC, so it is unset; but OpenBLAS 0.3.21 does not
// know every CPU, and on one it does not know (an Intel Xeon of family 6 model 207) it
// falls back to its Prescott (SSE3) kernels: sgemm 1024^3 at 5-7 GFLOP/s instead of ~34 with
// SkylakeX. Then the core is named from the CPU's flags, so the peers are measured at their best.
function blasCoreOverride() {
  const e = { ...env, OPENBLAS_NUM_THREADS: '1' };
  delete e.OPENBLAS_CORETYPE;
  delete e.OPENBLAS_L2_SIZE;
  const r = spawnSync(PY, ['bench/numpy_bench.py', '--info', '--T', ''], { cwd: root, env: e, encoding: 'utf8' });
  let core = '';
  try { core = JSON.parse(r.stdout.split('\n')[0]).blas.openblas_core ?? ''; } catch { return null; }
  if (!/^(prescott|core2|nehalem|katmai|coppermine|northwood|banias|atom|unknown)$/i.test(core)) return null;
  const flags = fs.readFileSync('/proc/cpuinfo', 'utf8');
  if (/\bavx512_bf16\b/.test(flags)) return 'Cooperlake';
  if (/\bavx512f\b/.test(flags)) return 'SkylakeX';
  if (/\bavx2\b/.test(flags)) return 'Haswell';
  return null;
}
const blasCore = blasCoreOverride();
const numpyEnv = (threads) => {
  const e = { ...env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) };
  delete e.OPENBLAS_CORETYPE; // see blasCoreOverride
  delete e.OPENBLAS_L2_SIZE;
  if (blasCore) e.OPENBLAS_CORETYPE = blasCore;
  return e;
};
const wasmArgs = (file) => ['--no-liftoff', '--no-experimental-fetch', path.join(root, 'build/wasm', file)];
const jobs = [];
for (const threads of [1, 2]) {
  for (const [impl, dtype] of [['numpy-f64', 'float64'], ['numpy-f32', 'float32']]) {
    jobs.push({ impl, threads, causal: true, cmd: PY,
      args: ['bench/numpy_bench.py', '--dtype', dtype, '--T', list(Ts), '--dk', String(DK), '--causal', '1'],
      env: numpyEnv(threads) });
  }
}
const ours = (impl, file, kernel, ts, causal) => ({ impl, threads: 1, causal,
  cmd: file ? NODE : path.join(root, 'build/native/attn_bench'),
  args: [...(file ? wasmArgs(file) : []), '--kernel', kernel, '--T', list(ts), '--dk', String(DK),
    '--causal', causal ? '1' : '0'],
  env: { ...env, OPENBLAS_NUM_THREADS: '1' } });
jobs.push(ours('native', null, 'tiled', Ts, true));
jobs.push(ours('wasm-scalar', 'attn_bench_wasm_scalar.js', 'naive', Ts, true));
jobs.push(ours('wasm-simd', 'attn_bench_wasm.js', 'naive', Ts, true));
jobs.push(ours('wasm-tiled', 'attn_bench_wasm.js', 'tiled', tiledTs, true));
jobs.push(ours('wasm-tiled', 'attn_bench_wasm.js', 'tiled', denseTs, false));
// Two threads: one causal call of the browser module split by query rows across 2 worker_threads
// (web/src/timing/attn-split.js), each with its own wasm instance; wall clock from post to merged output.
const splitTs = quick ? [1024, 2048] : [1024, 2048, 4096];
jobs.push({ impl: 'wasm-tiled', threads: 2, causal: true, split: true, cmd: NODE,
  args: ['--no-liftoff', '--no-experimental-fetch', path.join(root, 'bench/split_bench.mjs'), '--T', list(splitTs),
    '--dk', String(DK), '--threads', '2', '--reps', '5'], env });
// Attention backward (dQ, dK, dV; forward run before the clock): PyTorch autograd of the
// lesson's formulation on one thread vs our tiled backward in wasm (SIMD128, and the same
// sources built scalar: the before/after of the SIMD kernel in one run) and the naive one.
const bwdTs = quick ? [2048] : [1024, 2048];
// PyTorch at its best: on jemalloc keeping its freed pages (as torch-b2b below); on glibc malloc
// its T x T buffers page-fault on most calls (41-59 ms medians against 22.6 ms at T = 2048).
jobs.push({ impl: 'torch-bwd', threads: 1, causal: true, cmd: PY,
  args: ['bench/torch_backward_bench.py', '--T', list(bwdTs), '--dk', String(DK), '--causal', '1', '--reps', '3'],
  env: { ...numpyEnv(1), LD_PRELOAD: JEMALLOC, MALLOC_CONF: 'retain:true,dirty_decay_ms:-1,muzzy_decay_ms:-1' } });
for (const [impl, file, kernel] of [['wasm-bwd-tiled', 'attn_bench_wasm.js', 'backward-tiled'],
  ['wasm-bwd-tiled-scalar', 'attn_bench_wasm_scalar.js', 'backward-tiled'],
  ['wasm-bwd-naive', 'attn_bench_wasm.js', 'backward-naive']]) {
  jobs.push({ ...ours(impl, file, kernel, bwdTs, true), args: [...ours(impl, file, kernel, bwdTs, true).args, '--reps', '3'] });
}
jobs.push({ impl: 'wasm-peak', threads: 1, peak: true, cmd: NODE,
  args: [...wasmArgs('attn_bench_wasm.js'), '--kernel', 'peak', '--reps', '3'], env });
// the relaxed-SIMD (FMA) driver; Node 20 validates relaxed SIMD only behind a flag.
const RELAXED = '--experimental-wasm-relaxed-simd';
const fmaArgs = (...a) => [RELAXED, ...wasmArgs('attn_bench_wasm_relaxed.js'), ...a];
jobs.push({ impl: 'wasm-tiled-fma', threads: 1, causal: true, cmd: NODE,
  args: fmaArgs('--kernel', 'tiled', '--T', list(Ts), '--dk', String(DK), '--causal', '1'), env });
jobs.push({ impl: 'wasm-tiled-fma', threads: 1, causal: false, cmd: NODE,
  args: fmaArgs('--kernel', 'tiled', '--T', list(denseTs), '--dk', String(DK), '--causal', '0'), env });
jobs.push({ impl: 'wasm-peak-fma', threads: 1, peak: true, cmd: NODE, args: fmaArgs('--kernel', 'peak', '--reps', '3'), env });
// The backward in the relaxed build (its products use relaxed_madd like the forward's): what
// attentionBackward runs in a browser that validates relaxed SIMD.
jobs.push({ impl: 'wasm-bwd-tiled-fma', threads: 1, causal: true, cmd: NODE,
  args: fmaArgs('--kernel', 'backward-tiled', '--T', list(bwdTs), '--dk', String(DK), '--causal', '1', '--reps', '3'), env });

// Training step: wasm (after warm-up, medians inside the driver) vs PyTorch eager, one thread.
const TRAIN_D = [64, 32];
jobs.push({ impl: 'train-wasm', train: true, cmd: NODE, env,
  args: ['--no-liftoff', '--no-experimental-fetch', path.join(root, 'bench/train_bench.mjs'), '--mode', 'train',
    '--dmodel', list(TRAIN_D), '--reps', quick ? '20' : '40'] });
jobs.push({ impl: 'train-pytorch', train: true, cmd: PY, env: numpyEnv(1),
  args: ['bench/train_torch.py', '--dmodel', list(TRAIN_D), '--reps', quick ? '20' : '40'] });

// The JS API as the page calls it: core.attention through the browser module, Node's
// default tiering (like a browser), wall clock per call and the kernel's own time inside it.
const apiTs = quick ? [64, 256, 1024, 2048] : [64, 256, 1024, 2048, 4096];
const outDir = path.join(root, 'bench/out');
jobs.push({ impl: 'wasm-api', threads: 1, causal: true, api: true, cmd: NODE,
  args: ['--no-experimental-fetch', path.join(root, 'bench/api_bench.mjs'), '--T', list(apiTs), '--reps', quick ? '3' : '5',
    '--dir', outDir], env });
jobs.push({ impl: 'wasm-api-fma', threads: 1, causal: true, api: true, cmd: NODE,
  args: [RELAXED, '--no-experimental-fetch', path.join(root, 'bench/api_bench.mjs'), '--T', list(apiTs), '--reps', quick ? '3' : '5',
    '--dir', outDir, '--module', 'build/wasm/attn_core_relaxed.mjs'], env });
const torchEnv = { ...numpyEnv(1) };
if (peers) {
  for (const impl of ['tfjs-wasm', 'ort-wasm']) {
    jobs.push({ impl, threads: 1, causal: true, peer: true, cmd: NODE,
      args: [path.join(root, 'bench/peers/run_peer.mjs'), '--impl', impl, '--T', list(apiTs), '--reps', '3', '--dir', outDir], env });
  }
  // The same comparison in Chromium: bench/browser_api_bench.mjs --peers runs our two
  // builds, tfjs-wasm and ort-wasm in one page (each rep every implementation once, shuffled, after a
  // warm-up). One launch per round, interleaved with the other jobs like every process here, so its
  // samples and the PyTorch rows share the machine's ups and downs; pinned like the one-thread jobs
  // (taskset covers Chromium's renderer, where the calls run).
  jobs.push({ impl: 'chromium', threads: 1, causal: true, peer: true, chromium: true, cmd: NODE,
    args: [path.join(root, 'bench/browser_api_bench.mjs'), '--peers', '--T', list(apiTs), '--reps', quick ? '2' : '3', '--dir', outDir], env });
  // b2b: jemalloc keeping every freed page (the peer at its best); interleaved: glibc's default
  // malloc, as an application runs it.
  const torchBest = { ...torchEnv, LD_PRELOAD: JEMALLOC, MALLOC_CONF: 'retain:true,dirty_decay_ms:-1,muzzy_decay_ms:-1' };
  for (const mode of ['b2b', 'interleaved']) {
    jobs.push({ impl: `torch-${mode}`, threads: 1, causal: true, peer: true, cmd: PY,
      args: ['bench/torch_bench.py', '--T', list(apiTs), '--reps', '3', '--mode', mode, '--dir', outDir], env: mode === 'b2b' ? torchBest : torchEnv });
  }
}
if (trainOnly) jobs.splice(0, jobs.length, ...jobs.filter((j) => j.train || j.peak));
if (apiOnly) jobs.splice(0, jobs.length, ...jobs.filter((j) => j.api || j.peer || j.peak)); // peaks: the flop bound

function runJob(job) {
  if (job.threads === 1 && pinCpu >= 0) { // one-thread jobs all on the same vCPU (see --cpu)
    job = { ...job, cmd: 'taskset', args: ['-c', String(pinCpu), job.cmd, ...job.args], pinned: true };
  }
  const r = spawnSync(job.cmd, job.args, { cwd: root, env: job.env, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${job.impl}: ${job.cmd} ${job.args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------- run
const t0 = Date.now();
const meta = { quick, started: new Date().toISOString(), rounds, openblas: ensureOpenBlas(),
  torchB2bAllocator: `jemalloc (${ensureJemalloc()}; retain, no decay)` };
build();
meta.machine = machineInfo();
log(`CPU: ${machineLine(meta.machine)}; load average at start ${meta.machine.loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}`);
const info = JSON.parse(sh(PY, ['bench/numpy_bench.py', '--info', '--T', ''], { env: numpyEnv(1) }).split('\n')[0]);
meta.numpy = info.numpy;
meta.blas = info.blas;
log(`NumPy ${info.numpy} on ${info.blas.openblas_config ?? info.blas.loaded.join(', ')}`);
meta.blasCoreOverride = blasCore;
log(`BLAS core NumPy and PyTorch used: ${info.blas.openblas_core ?? 'unknown (not OpenBLAS?)'}` +
    (blasCore ? ` (OpenBLAS fell back to a generic core on this CPU: OPENBLAS_CORETYPE=${blasCore} set for the NumPy and PyTorch runs)`
      : ' (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for the NumPy and PyTorch runs)'));
if (peers) log(`PyTorch back to back on ${meta.torchB2bAllocator} (LD_PRELOAD); interleaved on glibc malloc`);

// Shared inputs and float64 references (bench/inputs.mjs), the ONNX graph, the peers' packages.
{
  const { writeCase } = await import('./inputs.mjs');
  for (const T of apiTs) writeCase(outDir, T, DK);
  meta.pinnedCpu = pinCpu;
  if (peers) {
    if (!fs.existsSync(path.join(root, 'bench/peers/node_modules/onnxruntime-web'))) {
      log('installing the bench-only peers (npm ci in bench/peers) ...');
      sh('npm', ['ci', '--no-audit', '--no-fund'], { cwd: path.join(root, 'bench/peers'), stdio: 'inherit' });
    }
    const onnx = path.join(outDir, `attention-d${DK}.onnx`);
    if (!fs.existsSync(onnx)) sh(PY, ['bench/peers/make_onnx.py', onnx, '--dk', String(DK)]);
    const torchVersion = sh(PY, ['-c', 'import torch; print(torch.__version__)']).trim();
    meta.peers = { torch: torchVersion, ...JSON.parse(fs.readFileSync(path.join(root, 'bench/peers/package.json'), 'utf8')).dependencies };
  }
}
const samples = new Map(); // key -> [ms...]
const kernelSamples = new Map(); // wasm-api: key -> [kernel ms...]
const errors = new Map(); // impl|T -> max |output - float64 reference|
const splitOne = new Map(); // T -> [ms...]: the same harness's unsplit call in one thread
const peaks = [];
const peaksFma = [];
const peakForms = { 'wasm-peak': [], 'wasm-peak-fma': [] }; // {chain, acc} per round
const trainSamples = new Map(); // `${impl}|${dModel}` -> { forward: [], backward: [], optimizer: [], step: [] }
const chromiumRows = []; // bench/browser_api_bench.mjs lines, every round's
const chromiumFailures = [];
const keyOf = (impl, T, causal, threads) => `${impl}|${T}|${causal}|${threads}`;
for (let round = 0; round < rounds; round++) {
  const order = jobs.map((_, i) => jobs[(i + round) % jobs.length]); // rotate: interleaved
  process.stdout.write(`round ${round + 1}/${rounds} `);
  for (const job of order) {
    let out;
    try {
      out = runJob(job);
    } catch (e) { // a Chromium failure is reported with its table; anything else stops the bench
      if (!job.chromium) throw e;
      chromiumFailures.push(e.message.split('\n').slice(0, 6).join(' | '));
      out = [];
    }
    for (const row of out) {
      if (job.chromium) chromiumRows.push(row);
      else if (job.peak) {
        (job.impl === 'wasm-peak-fma' ? peaksFma : peaks).push(row.gflops);
        peakForms[job.impl].push({ chain: row.chain, acc: row.acc, step: row.step });
      }
      else if (job.train) {
        const k = `${job.impl}|${row.dModel}`;
        if (!trainSamples.has(k)) trainSamples.set(k, { forward: [], backward: [], optimizer: [], step: [] });
        for (const ph of ['forward', 'backward', 'optimizer', 'step']) trainSamples.get(k)[ph].push(row[ph]);
      }
      else {
        const k = keyOf(job.impl, row.T, job.causal, job.threads);
        if (!samples.has(k)) samples.set(k, []);
        samples.get(k).push(...row.ms);
        if (job.api) kernelSamples.set(k, [...(kernelSamples.get(k) ?? []), ...row.kernelMs]);
        if (row.maxAbsError !== undefined) {
          const e = `${job.impl}|${row.T}`;
          errors.set(e, Math.max(errors.get(e) ?? 0, row.maxAbsError));
        }
        if (job.split) splitOne.set(row.T, [...(splitOne.get(row.T) ?? []), ...row.ms1]);
      }
    }
    process.stdout.write('.');
  }
  log(` ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

// ---------------------------------------------------------------- results
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const flops = (T, causal) => (causal ? 2 : 4) * T * T * DK; // causal: the half the mask allows
// Backward rows: the four products dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q over the
// half the causal mask allows (4 T^2 d_k); the tiled kernel's recomputed S is not counted.
const isBwd = (impl) => impl.includes('bwd');
const rows = [];
for (const [k, ms] of samples) {
  const [impl, T, causal, threads] = k.split('|');
  const m = median(ms);
  rows.push({ impl, T: +T, dk: DK, heads: 1, causal: causal === 'true', threads: +threads,
    ms: +m.toFixed(3),
    gflops: +((isBwd(impl) ? 2 * flops(+T, causal === 'true') : flops(+T, causal === 'true')) / (m * 1e6)).toFixed(2),
    spread: [+Math.min(...ms).toFixed(3), +Math.max(...ms).toFixed(3)] });
}
const peak = median(peaks);
const formsOf = (impl) => ({ chain: +median(peakForms[impl].map((f) => f.chain)).toFixed(2),
  acc: +median(peakForms[impl].map((f) => f.acc)).toFixed(2),
  step: +median(peakForms[impl].map((f) => f.step)).toFixed(2) });
// The two peak forms and the kernels' step, medians over the rounds, per build.
const pf = formsOf('wasm-peak'), pff = formsOf('wasm-peak-fma');
rows.push({ impl: 'wasm-peak', T: null, dk: null, heads: null, causal: null, threads: 1, ms: null,
  gflops: +peak.toFixed(2), ...pf });
const peakFma = median(peaksFma);
rows.push({ impl: 'wasm-peak-fma', T: null, dk: null, heads: null, causal: null, threads: 1, ms: null,
  gflops: +peakFma.toFixed(2), ...pff });
// The kernels' step as a share of its build's peak (printed beside the peaks and the forward targets).
const stepPct = (100 * pf.step / peak).toFixed(0), stepPctFma = (100 * pff.step / peakFma).toFixed(0);
const get = (impl, T, causal = true, threads = 1) =>
  rows.find((r) => r.impl === impl && r.T === T && r.causal === causal && r.threads === threads);

let ws = null;
let bws = null;
if (!trainOnly && !apiOnly) {
// Memory: the tiled kernel's working memory and one large multi-head call in the browser module.
ws = runJob({ impl: 'workspace', cmd: path.join(root, 'build/native/attn_bench'),
  args: ['--kernel', 'workspace', '--T', list([256, 4096, 16384, 65536]), '--dk', String(DK)], env })[0];
meta.tiledWorkspaceBytes = ws;
bws = runJob({ impl: 'backward-workspace', cmd: path.join(root, 'build/native/attn_bench'),
  args: ['--kernel', 'backward-workspace', '--T', list([256, 4096, 16384, 65536]), '--dk', String(DK)], env })[0];
meta.tiledBackwardWorkspaceBytes = bws;
if (!quick) {
  const createAttnCore = (await import(path.join(root, 'build/wasm/attn_core.mjs'))).default;
  const core = await createAttnCore({ wasmBinary: fs.readFileSync(path.join(root, 'build/wasm/attn_core.wasm')) });
  const H = 8, T = 16384;
  const n = H * T * DK;
  const q = new Float32Array(n), k = new Float32Array(n), v = new Float32Array(n);
  let s = 1;
  for (const a of [q, k, v]) for (let i = 0; i < n; i++) a[i] = ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  core.attention(q.subarray(0, 256 * DK), k.subarray(0, 256 * DK), v.subarray(0, 256 * DK),
    { heads: 1, tq: 256, tk: 256, dk: DK, dv: DK, causal: true, kernel: 'tiled' }); // warm-up
  const t1 = performance.now();
  const r = core.attention(q, k, v, { heads: H, tq: T, tk: T, dk: DK, dv: DK, causal: true, kernel: 'tiled' });
  meta.bigTiled = { heads: H, T, dk: DK, causal: true, ms: +(performance.now() - t1).toFixed(1),
    heapBytes: core.heapBytes(), inputBytes: 3 * n * 4, outputBytes: r.output.length * 4,
    finite: r.output.every(Number.isFinite), nanRows: r.nanRows };
}

}

// ---------------------------------------------------------------- print
// Top level: every printing block below uses it (a const inside one block is not seen by the others).
const fmt = (x, w = 9) => (x === undefined || x === null ? '—' : x.toFixed(x < 10 ? 2 : 1)).padStart(w);
if (!trainOnly && !apiOnly) {
const impls = ['numpy-f64', 'numpy-f32', 'native', 'wasm-scalar', 'wasm-simd', 'wasm-tiled'];
log(`\nMedian ms over ${rounds} interleaved rounds; causal, one head, d_k = ${DK}, one thread unless noted.`);
log(`Machine: ${meta.machine.cpu}, ${meta.machine.cores} vCPUs, Node ${meta.machine.node}; ` +
    'other processes may have been running (load average at start ' +
    meta.machine.loadavgAtStart.map((x) => x.toFixed(2)).join(' ') + ').');
const allT = [...new Set(rows.filter((r) => r.T).map((r) => r.T))].sort((a, b) => a - b);
log('\n' + 'T'.padStart(6) + impls.map((i) => i.padStart(12)).join('') + '  np-f64 2t'.padStart(12) +
    '  np-f32 2t'.padStart(12) + '  tiled/f32'.padStart(11) + '  simd/f32'.padStart(10));
for (const T of allT) {
  const cells = impls.map((i) => fmt(get(i, T)?.ms, 12)).join('');
  const f32 = get('numpy-f32', T)?.ms;
  const ratio = (x) => (x && f32 ? (f32 / x).toFixed(2) + '×' : '—');
  log(String(T).padStart(6) + cells + fmt(get('numpy-f64', T, true, 2)?.ms, 12) +
      fmt(get('numpy-f32', T, true, 2)?.ms, 12) + ratio(get('wasm-tiled', T)?.ms).padStart(11) +
      ratio(get('wasm-simd', T)?.ms).padStart(10));
}
log('\nTwo threads: wasm-tiled, causal, one head, one call split by query rows across 2 Node worker_threads' +
    ' (web/src/timing/attn-split.js: blocks balanced by area, each with its own wasm instance and only the keys it can see);' +
    ' wall clock from posting the parts to the merged output, copies in and out included:');
meta.twoThreads = [];
for (const T of splitTs) {
  const two = get('wasm-tiled', T, true, 2)?.ms, one = get('wasm-tiled', T)?.ms;
  const js1 = splitOne.has(T) ? +median(splitOne.get(T)).toFixed(3) : null;
  meta.twoThreads.push({ T, ms2: two, ms1Driver: one, ms1SameHarness: js1 });
  log(`  T=${String(T).padStart(5)}  2 threads ${fmt(two, 7)} ms   1 thread ${fmt(one, 7)} ms (bench driver; ` +
      `${fmt(js1, 6).trim()} ms through the same JS module unsplit)   speed-up ${(one / two).toFixed(2)}× (${(js1 / two).toFixed(2)}× vs the same harness)`);
}

log('\nGFLOP/s (causal rows count the 2·T²·d_k flops the mask allows; non-causal 4·T²·d_k):');
for (const T of allT) {
  const g = (impl, c = true) => get(impl, T, c)?.gflops;
  const dense = get('wasm-tiled', T, false);
  log(`  T=${String(T).padStart(5)}  numpy-f32 ${fmt(g('numpy-f32'), 6)}  wasm-simd ${fmt(g('wasm-simd'), 6)}` +
      `  wasm-tiled ${fmt(g('wasm-tiled'), 6)}` +
      (dense ? `  non-causal wasm-tiled ${fmt(dense.gflops, 6)} (${(100 * dense.gflops / peak).toFixed(0)} % of peak, ${dense.ms} ms)` : ''));
}
log(`  wasm-peak (SIMD128 f32 mul+add microbenchmark, the larger of two forms: 12 chains through the multiply ` +
    `${pf.chain}, 12 accumulators through the add only, like the kernels' loops, ${pf.acc}): ${peak.toFixed(1)} GFLOP/s`);
log(`  wasm-peak-fma (the same two forms with f32x4.relaxed_madd: ${pff.chain}, ${pff.acc}): ${peakFma.toFixed(1)} GFLOP/s ` +
    `(${(peakFma / peak).toFixed(2)}× the SIMD128 peak)`);
// Not a peak: the forward's P.V step alone (two broadcasts, four loads, eight multiply-adds
// per key, its operands in L1), i.e. what the kernels' inner loops can reach on this core.
log(`  the kernels' 2 × 16 P·V step alone, its data in L1 (loads and pointer steps included): SIMD128 ` +
    `${pf.step} GFLOP/s = ${stepPct} % of its peak, relaxed ${pff.step} = ${stepPctFma} % of the FMA peak`);
log('\nRelaxed SIMD (FMA) tiled kernel vs the SIMD128 tiled kernel (bench drivers, in wasm):');
for (const T of allT) {
  const a = get('wasm-tiled', T), b = get('wasm-tiled-fma', T);
  const an = get('wasm-tiled', T, false), bn = get('wasm-tiled-fma', T, false);
  if (!a || !b) continue;
  log(`  T=${String(T).padStart(5)}  causal ${fmt(a.ms, 7)} -> ${fmt(b.ms, 7)} ms (${(a.ms / b.ms).toFixed(2)}×)` +
      (an && bn ? `   non-causal ${fmt(an.ms, 7)} -> ${fmt(bn.ms, 7)} ms (${(an.ms / bn.ms).toFixed(2)}×), ` +
        `FMA ${bn.gflops} GFLOP/s = ${(100 * bn.gflops / peakFma).toFixed(0)} % of the FMA peak` : ''));
}

}
const T = 2048;
const targets = [];
const target = (name, num, den, need, unit = '×') => {
  const v = num && den ? num / den : NaN;
  targets.push({ name, measured: +v.toFixed(3), need, unit, pass: v >= need });
  log(`  ${(v >= need ? 'PASS' : 'MISS').padEnd(5)} ${name}: ${unit === '%' ? (100 * v).toFixed(0) + ' %' : v.toFixed(2) + '×'}` +
      ` (need ≥ ${unit === '%' ? 100 * need + ' %' : need + '×'})`);
};
if (!trainOnly && !apiOnly) {
log(`\nTargets at T = ${T}, causal, one head, d_k = ${DK}, one thread:`);
target('wasm-tiled vs numpy-f64', get('numpy-f64', T)?.ms, get('wasm-tiled', T)?.ms, 5);
target('wasm-tiled vs numpy-f32', get('numpy-f32', T)?.ms, get('wasm-tiled', T)?.ms, 3);
target('wasm-simd vs numpy-f32', get('numpy-f32', T)?.ms, get('wasm-simd', T)?.ms, 1.5);
// The forward kernels against the machine's limit: each build against its own peak (SIMD128
// against the SIMD128 peak, relaxed SIMD against the FMA peak), non-causal, every T >= 1024.
// (An earlier target, relaxed >= 1.4x SIMD128, is gone: where separate multiplies and adds
// already fill the FP pipes, as on this AMD EPYC, the FMA peak equals the SIMD128 peak.)
for (const TT of denseTs.filter((x) => x >= 1024)) {
  target(`forward tiled SIMD128, non-causal T = ${TT}, vs the SIMD128 peak`, get('wasm-tiled', TT, false)?.gflops, peak, 0.85, '%');
  target(`forward tiled relaxed SIMD, non-causal T = ${TT}, vs the FMA peak`, get('wasm-tiled-fma', TT, false)?.gflops, peakFma, 0.85, '%');
}
log(`        (the kernels' P·V step alone, data in L1, reaches ${stepPct} % (SIMD128) and ${stepPctFma} % (relaxed) ` +
    'of the same peaks on this core; the softmax comes on top)');

log('\nAttention backward (dQ, dK, dV of sum(output * dO); the forward runs before the clock), causal, one head,' +
    ` d_k = ${DK}, one thread; GFLOP/s count 4·T²·d_k (the four products over the allowed half):`);
for (const T of bwdTs) {
  const b = (impl) => get(impl, T);
  const tb = b('torch-bwd'), wt = b('wasm-bwd-tiled'), ws1 = b('wasm-bwd-tiled-scalar'), wn = b('wasm-bwd-naive');
  const wf = b('wasm-bwd-tiled-fma');
  log(`  T=${String(T).padStart(5)}  PyTorch autograd ${fmt(tb?.ms, 7)} ms (${fmt(tb?.gflops, 5).trim()} GFLOP/s)` +
      `   wasm tiled SIMD128 ${fmt(wt?.ms, 7)} ms (${fmt(wt?.gflops, 5).trim()} GFLOP/s)` +
      `   relaxed ${fmt(wf?.ms, 7)} ms (${fmt(wf?.gflops, 5).trim()} GFLOP/s)` +
      `   wasm tiled scalar ${fmt(ws1?.ms, 7)} ms   wasm naive SIMD128 ${fmt(wn?.ms, 7)} ms` +
      `   PyTorch / wasm tiled ${(tb?.ms / wt?.ms).toFixed(2)}×   SIMD speed-up ${(ws1?.ms / wt?.ms).toFixed(2)}×`);
}
log(`  tiled backward working memory beyond Q, K, V, dO, output, lse and the gradients ` +
    `(tiled_backward_workspace_bytes, d_k = ${DK}) at T = ${bws.T.join(', ')}: ${bws.bytes.join(', ')} bytes`);
target('backward tiled SIMD128, causal T = 2048, vs the SIMD128 peak', get('wasm-bwd-tiled', 2048)?.gflops, peak, 0.75, '%');
target('backward tiled SIMD128 vs PyTorch autograd one thread (T = 2048, same run)', get('torch-bwd', 2048)?.ms, get('wasm-bwd-tiled', 2048)?.ms, 1.3);
target('backward tiled relaxed SIMD, causal T = 2048, vs the FMA peak', get('wasm-bwd-tiled-fma', 2048)?.gflops, peakFma, 0.75, '%');
target('backward tiled relaxed SIMD vs PyTorch autograd one thread (T = 2048, same run)', get('torch-bwd', 2048)?.ms, get('wasm-bwd-tiled-fma', 2048)?.ms, 1.3);
}
meta.targets = targets;

if (!trainOnly) {
// ---------------------------------------------------------------- the API and the peers
{
  log(`\nThrough the JS API (core.attention in Node, default tiering, after warm-up; causal, one head, d_k = ${DK}),` +
      (pinCpu >= 0 ? ` every one-thread process pinned to vCPU ${pinCpu}` : ' unpinned') + ':');
  const kern = (T, impl = 'wasm-api') => { const k = kernelSamples.get(keyOf(impl, T, true, 1)); return k ? median(k) : NaN; };
  const over = (T, impl = 'wasm-api') => {
    const c = samples.get(keyOf(impl, T, true, 1)), k = kernelSamples.get(keyOf(impl, T, true, 1));
    return c && k ? median(c.map((x, i) => x - k[i])) : NaN;
  };
  const peerImpls = ['torch-b2b', 'torch-interleaved', 'tfjs-wasm', 'ort-wasm'];
  meta.api = [];
  for (const impl of ['wasm-api', 'wasm-api-fma']) {
    log(impl === 'wasm-api' ? 'SIMD128 build (attn_core):' : 'Relaxed-SIMD build (attn_core_relaxed, what load_core.mjs picks where relaxed SIMD validates):');
    const cols = ['api ms', 'kernel', 'overhead'];
    if (peers) cols.push('torch b2b', 'torch int.', 'tfjs-wasm', 'ort-wasm', 'vs b2b', 'vs int.', 'vs tfjs', 'vs ort');
    log('T'.padStart(6) + cols.map((c) => c.padStart(11)).join(''));
    for (const T of apiTs) {
      const a = get(impl, T)?.ms, k = kern(T, impl), o = over(T, impl);
      const p = (x) => get(x, T)?.ms;
      const cells = [fmt(a, 11), fmt(k, 11), (o / k * 100).toFixed(1).padStart(9) + ' %'];
      const entry = { impl, T, apiMs: a, kernelMs: +k.toFixed(4), overheadMs: +o.toFixed(4), overheadPct: +(100 * o / k).toFixed(1) };
      if (peers) {
        for (const x of peerImpls) cells.push(fmt(p(x), 11));
        for (const x of peerImpls) {
          cells.push((p(x) && a ? (p(x) / a).toFixed(2) + '×' : '—').padStart(11));
          entry[x] = p(x);
        }
      }
      meta.api.push(entry);
      log(String(T).padStart(6) + cells.join(''));
    }
  }
  log('Max |output − float64 reference| over 33 sampled rows (same input bytes for every implementation):');
  const errImpls = ['wasm-api', 'wasm-api-fma', ...(peers ? ['torch-b2b', 'torch-interleaved', 'tfjs-wasm', 'ort-wasm'] : [])];
  meta.maxAbsError = {};
  for (const impl of errImpls) {
    const e = apiTs.map((T) => errors.get(`${impl}|${T}`));
    meta.maxAbsError[impl] = e;
    const worst = Math.max(...e.map((x) => x ?? Infinity));
    log(`  ${(worst <= 1e-5 ? 'PASS' : 'MISS').padEnd(5)} ${impl.padEnd(18)} ${e.map((x) => (x === undefined ? '—' : x.toExponential(1))).join('  ')} (need ≤ 1e-5)`);
  }
  log('API speed targets:');
  const o256 = over(256) / kern(256);
  targets.push({ name: 'API overhead at T = 256 (fresh result arrays)', measured: +o256.toFixed(3), need: '<= 0.10', pass: o256 <= 0.1 });
  log(`  ${(o256 <= 0.1 ? 'PASS' : 'MISS').padEnd(5)} API overhead at T = 256 (copies, checks, fresh result arrays): ` +
      `${(100 * o256).toFixed(1)} % of the kernel (need ≤ 10 %)`);
  if (peers) {
    for (const impl of ['wasm-api', 'wasm-api-fma']) {
      // T = 64: >= 2x (the call's overhead is what decides it); T >= 256: >= 1x (the flop bound
      // below says why 2x is out of reach there); every T: >= 3x the wasm peers.
      for (const T of apiTs) target(`Node ${impl} vs PyTorch one thread back to back at T = ${T}`, get('torch-b2b', T)?.ms, get(impl, T)?.ms, T <= 64 ? 2 : 1);
      for (const x of ['tfjs-wasm', 'ort-wasm']) {
        const worst = Math.min(...apiTs.map((T) => (get(x, T)?.ms ?? NaN) / (get(impl, T)?.ms ?? NaN)));
        target(`Node ${impl} vs ${x} at every T (the smallest ratio)`, worst, 1, 3);
      }
    }
    // What 2x would take: the causal products alone (Q.K^T and P.V over the T(T+1)/2 allowed
    // pairs, 2 * T(T+1) * d_k flops) at 100 % of the best multiply-add rate this engine showed
    // in the same run. If even that is slower than half of PyTorch's time, no wasm kernel on
    // this CPU can reach the target (PyTorch's BLAS runs 512-bit FMA; wasm has 128-bit lanes).
    const best = Math.max(peak, peakFma);
    log(`  What ≥ 2× PyTorch back to back would take (flop bound at the best wasm peak of this run, ${best.toFixed(1)} GFLOP/s):`);
    meta.bound = [];
    for (const T of apiTs) {
      const mflop = 2 * T * (T + 1) * DK / 1e6, tMin = mflop / best, tb = get('torch-b2b', T)?.ms; // MFLOP / (GFLOP/s) = ms
      if (!tb) continue;
      const reach = tMin <= tb / 2;
      meta.bound.push({ T, mflop: +mflop.toFixed(2), minMs: +tMin.toFixed(4), torchB2bMs: tb, reachable: reach,
        peakFraction: +(mflop / (tb / 2) / best).toFixed(3) });
      log(`    T=${String(T).padStart(5)}  ${mflop.toFixed(1).padStart(8)} MFLOP ≥ ${fmt(tMin, 8)} ms at the peak; ` +
          `2× needs ≤ ${fmt(tb / 2, 8)} ms = ${(100 * mflop / (tb / 2) / best).toFixed(0).padStart(4)} % of the peak` +
          (reach ? '' : ' — out of reach on this CPU'));
    }
  }
}

// ---------------------------------------------------------------- Chromium
if (peers) {
  const launches = chromiumRows.filter((r) => 'relaxedSimdValidates' in r).length;
  log(`\nIn Chromium (bench/browser_api_bench.mjs --peers, one launch per round: ${launches} of ${rounds}; one page, cross-origin isolated,` +
      ' every rep runs each implementation once in a shuffled order after warm-up; same input bytes; medians over every rep of every round;' +
      ' PyTorch columns from this run\'s torch rows;' + (pinCpu >= 0 ? ` pinned to vCPU ${pinCpu}` : ' unpinned') + '):');
  for (const f of [...new Set(chromiumFailures)]) log(`  a Chromium run failed: ${f}`);
  if (!launches) {
    log('  not run');
  } else {
    const head = chromiumRows.find((r) => 'relaxedSimdValidates' in r);
    const failed = [...new Map(chromiumRows.filter((r) => r.error).map((r) => [`${r.impl}: ${r.error}`, r])).values()];
    meta.chromium = { version: head.chromium, relaxedSimdValidates: head.relaxedSimdValidates, crossOriginIsolated: head.crossOriginIsolated,
      peers: head.peers, launches, failures: chromiumFailures, errors: failed, rows: [] };
    log(`  Chromium ${head.chromium}: relaxed SIMD ${head.relaxedSimdValidates ? 'validates (attn_core_relaxed runs; load_core.mjs picks it)' : 'does NOT validate (SIMD128 only)'};` +
        ` crossOriginIsolated ${head.crossOriginIsolated}; tfjs-wasm ${JSON.stringify(head.peers?.['tfjs-wasm'] ?? null)};` +
        ` ort-wasm ${JSON.stringify(head.peers?.['ort-wasm'] ?? null)}`);
    for (const f of failed) log(`  ${f.impl}: ${f.error}`);
    // Every round's rows of one (impl, T) merged: all samples, the worst error.
    const cget = (impl, T) => {
      const rs = chromiumRows.filter((r) => r.impl === impl && r.T === T && r.ms);
      return rs.length ? { ms: rs.flatMap((r) => r.ms), kernelMs: rs.flatMap((r) => r.kernelMs ?? []),
        maxAbsError: Math.max(...rs.map((r) => r.maxAbsError ?? Infinity)) } : undefined;
    };
    const cms = (impl, T) => { const r = cget(impl, T); return r?.ms?.length ? median(r.ms) : undefined; };
    const impls = [['simd', 'SIMD128'], ['relaxed', 'relaxed'], ['tfjs-wasm', 'tfjs-wasm'], ['ort-wasm', 'ort-wasm']];
    const cols = [...impls.map(([, c]) => c), 'torch b2b', 'torch int.', 'SIMD vs b2b', 'rlx vs b2b', 'SIMD vs int', 'rlx vs int', 'rlx vs tfjs', 'rlx vs ort'];
    log('T'.padStart(6) + cols.map((c) => c.padStart(12)).join(''));
    const ratio = (num, den) => (num && den ? (num / den).toFixed(2) + '×' : '—').padStart(12);
    for (const T of apiTs) {
      const m = Object.fromEntries(impls.map(([i]) => [i, cms(i, T)]));
      const b2b = get('torch-b2b', T)?.ms, int = get('torch-interleaved', T)?.ms;
      log(String(T).padStart(6) + impls.map(([i]) => fmt(m[i], 12)).join('') + fmt(b2b, 12) + fmt(int, 12) +
          ratio(b2b, m.simd) + ratio(b2b, m.relaxed) + ratio(int, m.simd) + ratio(int, m.relaxed) +
          ratio(m['tfjs-wasm'], m.relaxed) + ratio(m['ort-wasm'], m.relaxed));
      for (const [i] of impls) {
        if (m[i] === undefined) continue;
        const r = cget(i, T);
        rows.push({ impl: `chromium-${i}`, T, dk: DK, heads: 1, causal: true, threads: 1, ms: +m[i].toFixed(4),
          gflops: +(flops(T, true) / (m[i] * 1e6)).toFixed(2), spread: [Math.min(...r.ms), Math.max(...r.ms)] });
        meta.chromium.rows.push({ impl: i, T, ms: +m[i].toFixed(4), kernelMs: r.kernelMs.length ? +median(r.kernelMs).toFixed(4) : null,
          maxAbsError: r.maxAbsError });
      }
    }
    // Where a call's time goes in Chromium: the kernel (core.lastKernelMs()) and the rest
    // (checks, copies, and the fresh result arrays, which `into` replaces by the caller's).
    const fine = (x, w) => (x !== undefined && x < 1 ? x.toFixed(3).padStart(w) : fmt(x, w)); // small calls: µs resolution
    log('  Our calls in Chromium: call ms / kernel ms / the rest, with fresh result arrays and with `into`;');
    log('  last, no attention: Float32Array.slice of an array the output\'s size, the browser\'s price for a fresh result:');
    for (const T of apiTs) {
      const cell = (i) => {
        const r = cget(i, T);
        if (!r?.ms?.length) return '—'.padStart(26);
        const c = median(r.ms), k = r.kernelMs.length ? median(r.kernelMs) : NaN;
        return `${fine(c, 8)} /${fine(k, 8)} /${(100 * (c - k) / k).toFixed(0).padStart(4)} %`.padStart(26);
      };
      const bare = cms('fresh-array', T);
      log(`    T=${String(T).padStart(5)}` + ['simd', 'simd+into', 'relaxed', 'relaxed+into'].map((i) => `  ${i.padEnd(12)}${cell(i)}`).join('') +
          `  fresh output-sized array alone${fine(bare, 8)}`);
      if (bare !== undefined) meta.chromium.rows.push({ impl: 'fresh-array', T, ms: +bare.toFixed(4), kernelMs: null });
      for (const i of ['simd+into', 'relaxed+into']) {
        const r = cget(i, T);
        if (r?.ms?.length) meta.chromium.rows.push({ impl: i, T, ms: +median(r.ms).toFixed(4),
          kernelMs: r.kernelMs.length ? +median(r.kernelMs).toFixed(4) : null, maxAbsError: r.maxAbsError });
      }
    }
    log('  Max |output − float64 reference| over 33 sampled rows, in Chromium:');
    for (const [i] of [...impls, ['simd+into'], ['relaxed+into']]) {
      const e = apiTs.map((T) => cget(i, T)?.maxAbsError);
      if (e.every((x) => x === undefined)) { log(`  MISS  ${i.padEnd(18)} not run`); continue; }
      const worst = Math.max(...e.map((x) => x ?? Infinity));
      log(`  ${(worst <= 1e-5 ? 'PASS' : 'MISS').padEnd(5)} ${i.padEnd(18)} ${e.map((x) => (x === undefined ? '—' : x.toExponential(1))).join('  ')} (need ≤ 1e-5)`);
    }
    log('  API speed targets in Chromium: ≥ 2× PyTorch one thread back to back at T = 64, ≥ 1× at T ≥ 256, ≥ 3× tfjs-wasm and ort-wasm at every T:');
    for (const [i, name] of [['simd', 'SIMD128'], ['relaxed', 'relaxed SIMD']]) {
      for (const T of apiTs) target(`Chromium ${name} vs PyTorch one thread back to back at T = ${T}`, get('torch-b2b', T)?.ms, cms(i, T), T <= 64 ? 2 : 1);
      // The same calls with caller-owned result arrays (`into`): in Chromium a fresh typed array
      // costs 5-180 us (new memory faulted in, external-memory GC), 10-40x Node's, which at T = 64
      // is most of the call (docs/performance.md); `into` is how a hot loop avoids it.
      target(`Chromium ${name} with into vs PyTorch one thread back to back at T = 64`, get('torch-b2b', 64)?.ms, cms(`${i}+into`, 64), 2);
      for (const x of ['tfjs-wasm', 'ort-wasm']) {
        const worst = Math.min(...apiTs.map((T) => (cms(x, T) ?? NaN) / (cms(i, T) ?? NaN)));
        target(`Chromium ${name} vs ${x} at every T (the smallest ratio)`, worst, 1, 3);
      }
    }
  }
}

if (!apiOnly) {
log('\nMemory:');
const wsMax = Math.max(...ws.bytes);
log(`  tiled kernel working memory beyond Q, K, V and output (tiled_workspace_bytes, d_k = ${DK}) at T = ` +
    ws.T.join(', ') + `: ${ws.bytes.join(', ')} bytes — ${wsMax < 16 * 2 ** 20 ? 'PASS' : 'MISS'} (< 16 MiB at any T)`);
if (meta.bigTiled) {
  const b = meta.bigTiled;
  log(`  T = ${b.T}, ${b.heads} heads, tiled, in the browser module under Node: ${b.ms} ms, wasm heap ` +
      `${(b.heapBytes / 2 ** 20).toFixed(0)} MiB (inputs ${(b.inputBytes / 2 ** 20).toFixed(0)} MiB, output ` +
      `${(b.outputBytes / 2 ** 20).toFixed(0)} MiB), output finite: ${b.finite}`);
} else {
  log('  (T = 16384 with 8 heads: skipped in --quick)');
}
}

}

if (!apiOnly) {
// ---------------------------------------------------------------- training step
// FLOPs counted the same way for both sides: every matrix product at full size (the
// attention products over the whole T x T, as PyTorch computes them), backward = 2 x forward,
// AdamW + gradient norm 16 per parameter.
const V = 32, TT = 32, L = 2, H = 2, B = 32;
const trainFlops = (D) => {
  const N = B * TT;
  const fwd = L * (2 * N * D * 3 * D + 2 * N * D * D + 4 * B * TT * TT * D) + 2 * N * D * V;
  const params = 2 * V * D + TT * D + L * 4 * D * D;
  return { forward: fwd, backward: 2 * fwd, optimizer: 16 * params, step: 3 * fwd + 16 * params };
};
log(`\nTraining step: attention-only transformer, vocab ${V}, T ${TT}, ${L} layers, ${H} heads, batch ${B}, ` +
    'forward + backward + AdamW on one fixed batch, one thread; wasm = attn_train under Node after warm-up, ' +
    'PyTorch eager float32 (torch.set_num_threads(1), OPENBLAS_CORETYPE/L2_SIZE unset). Medians of the per-round medians.');
log('  d_model  phase        MFLOP   wasm ms  GFLOP/s  % peak   torch ms  GFLOP/s   torch/wasm');
meta.train = [];
for (const D of TRAIN_D) {
  const w = trainSamples.get(`train-wasm|${D}`), p = trainSamples.get(`train-pytorch|${D}`);
  if (!w || !p) continue;
  const f = trainFlops(D);
  const entry = { dModel: D, batch: B, phases: {} };
  for (const ph of ['forward', 'backward', 'optimizer', 'step']) {
    const wm = median(w[ph]), pm = median(p[ph]);
    const wg = f[ph] / (wm * 1e6), pg = f[ph] / (pm * 1e6);
    entry.phases[ph] = { mflop: +(f[ph] / 1e6).toFixed(2), wasmMs: +wm.toFixed(3), torchMs: +pm.toFixed(3),
      wasmGflops: +wg.toFixed(2), torchGflops: +pg.toFixed(2), pctPeak: +(100 * wg / peak).toFixed(1) };
    log(`  ${String(D).padStart(7)}  ${ph.padEnd(10)} ${(f[ph] / 1e6).toFixed(1).padStart(7)} ${wm.toFixed(2).padStart(9)} ` +
        `${wg.toFixed(1).padStart(8)} ${(100 * wg / peak).toFixed(0).padStart(6)} % ${pm.toFixed(2).padStart(9)} ` +
        `${pg.toFixed(1).padStart(8)} ${(pm / wm).toFixed(2).padStart(10)}×`);
    rows.push({ impl: ph === 'step' ? 'train-wasm' : `train-wasm-${ph}`, T: TT, dModel: D, batch: B, threads: 1, ms: +wm.toFixed(3), gflops: +wg.toFixed(2) });
    rows.push({ impl: ph === 'step' ? 'train-pytorch' : `train-pytorch-${ph}`, T: TT, dModel: D, batch: B, threads: 1, ms: +pm.toFixed(3), gflops: +pg.toFixed(2) });
  }
  meta.train.push(entry);
}
log('\nTargets (training step, one thread):');
{
  const e = meta.train.find((x) => x.dModel === 64);
  if (e) target('train step config A (d_model 64): the whole step vs the SIMD128 peak', e.phases.step.wasmGflops, peak, 0.8, '%');
}
for (const [D, need] of [[64, 1.0], [32, 1.5]]) {
  const e = meta.train.find((x) => x.dModel === D);
  if (e) target(`train step d_model ${D}: PyTorch / wasm`, e.phases.step.torchMs, e.phases.step.wasmMs, need);
}

// ---------------------------------------------------------------- decoding
// ---------------------------------------------------------------- Workers
// Config A trained by the Train tab's Worker pool (web/src/train/pool.ts) on 1 and 2 Node
// worker_threads (not pinned: two threads), same bits for every count (tests/js/train-workers);
// then the Train tab itself in Chromium: wall time from Play to held-out accuracy 0.9 with 1 and 2
// Workers (bench/train_tab_bench.mjs, a fresh page per run, the page's frame times meanwhile).
{
  const wk = runJob({ impl: 'train-workers', cmd: NODE, env, args: ['--no-liftoff', '--no-experimental-fetch',
    path.join(root, 'bench/train_bench.mjs'), '--mode', 'workers', '--workers', '1,2', '--steps', quick ? '40' : '60',
    '--rounds', quick ? '3' : '7', '--independent'] });
  const indep = wk.find((w) => w.impl === 'wasm-independent');
  meta.workers = wk.filter((w) => w.impl === 'wasm-workers');
  meta.independent = indep;
  log('\nTraining on Workers (config A, the Train tab\'s pool on Node worker_threads, steps/s, median of interleaved rounds):');
  for (const w of meta.workers) {
    log(`  ${w.workers} Worker${w.workers > 1 ? 's' : ' '}  ${w.stepsPerSec.toFixed(1).padStart(7)} steps/s  (${w.speedup.toFixed(2)}× one Worker)`);
    rows.push({ impl: 'train-workers', T: 32, dModel: 64, batch: 32, threads: w.workers, stepsPerSec: +w.stepsPerSec.toFixed(2) });
  }
  const one = meta.workers.find((w) => w.workers === 1), two = meta.workers.find((w) => w.workers === 2);
  if (indep) {
    // What this machine allows any two-thread scheme: two trainers sharing nothing, at once.
    log(`  the machine's two-thread ceiling: ${indep.threads} independent trainers together ` +
        `${indep.togetherStepsPerSec.toFixed(1)} steps/s against one alone ${indep.aloneStepsPerSec.toFixed(1)} ` +
        `(${indep.speedup.toFixed(2)}×; 2.00× on two cores of its own)` +
        (two && one ? `; the pool reaches ${(100 * (two.stepsPerSec / one.stepsPerSec) / indep.speedup).toFixed(0)} % of it` : ''));
    rows.push({ impl: 'train-independent', T: 32, dModel: 64, batch: 32, threads: indep.threads, stepsPerSec: +indep.togetherStepsPerSec.toFixed(2) });
  }
  target('training config A on 2 Workers vs 1 (steps/s, Node)', two?.stepsPerSec, one?.stepsPerSec, 1.7);
  if (!quick) {
    sh('npx', ['vite', 'build', '--config', 'web/vite.config.ts', '--logLevel', 'error']);
    const tab = runJob({ impl: 'train-tab', cmd: NODE, env, args: [path.join(root, 'bench/train_tab_bench.mjs'), '--workers', '1,2', '--rounds', '5'] }).filter((r) => r.bench === 'train-tab');
    meta.trainTab = tab;
    log('The Train tab in Chromium, default preset, Play -> held-out accuracy 0.9 (medians of 5 fresh pages each):');
    for (const r of tab) {
      log(`  trw=${r.workers}  ${(r.play90Ms / 1000).toFixed(2)} s of playing time (wall ${(r.wallMs / 1000).toFixed(2)} s), step ${r.step90.join('/')}, ` +
          `${r.stepsPerSec.toFixed(0)} steps/s, frames median ${r.frameMedianMs.toFixed(1)} ms, p95 ${r.frameP95Ms.toFixed(1)} ms` +
          (r.perStep ? `; ms per step: steps ${r.perStep.train}, evaluation ${r.perStep.eval}, head scores ${r.perStep.scores}, snapshots ${r.perStep.snap}` : ''));
      target(`Train tab to accuracy 0.9 with ${r.workers} Worker${r.workers > 1 ? 's' : ''}: 1.5 s / playing time`, 1500, r.play90Ms, 1);
    }
    const two2 = tab.find((r) => r.workers === 2) ?? tab.at(-1);
    if (two2) {
      target('Train tab frames while training: 16.7 ms / median frame', 16.7, two2.frameMedianMs, 1);
      target('Train tab frames while training: 33 ms / p95 frame', 33, two2.frameP95Ms, 1);
    }
  }
}

const decTs = quick ? [256, 512, 1024, 2048] : [256, 512, 1024, 2048, 4096];
const dec = runJob({ impl: 'decode', cmd: NODE, env,
  args: ['--no-liftoff', '--no-experimental-fetch', path.join(root, 'bench/train_bench.mjs'), '--mode', 'decode', '--T', list(decTs)] })[0];
const fit = (xs, ys) => { // least-squares slope of log y on log x
  const lx = xs.map(Math.log), ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b) / lx.length, my = ly.reduce((a, b) => a + b) / ly.length;
  let num = 0, den = 0;
  for (let i = 0; i < lx.length; i++) { num += (lx[i] - mx) * (ly[i] - my); den += (lx[i] - mx) ** 2; }
  return num / den;
};
dec.exponentCached = +fit(dec.T, dec.cached).toFixed(2);
dec.exponentRecompute = +fit(dec.T, dec.recompute).toFixed(2);
meta.decode = dec;
log(`\nDecoding: random model d_model ${dec.dModel}, ${dec.heads} heads, ${dec.layers} layers (attn_train under Node), ` +
    'per-token ms for the token appended at length T:');
log('       T   cached ms  recompute ms   speed-up');
dec.T.forEach((T, i) => {
  log(`  ${String(T).padStart(6)} ${dec.cached[i].toFixed(3).padStart(11)} ${dec.recompute[i].toFixed(1).padStart(13)} ` +
      `${(dec.recompute[i] / dec.cached[i]).toFixed(0).padStart(9)}×`);
  rows.push({ impl: 'decode-cached', T, dModel: dec.dModel, heads: dec.heads, threads: 1, ms: +dec.cached[i].toFixed(4) });
  rows.push({ impl: 'decode-recompute', T, dModel: dec.dModel, heads: dec.heads, threads: 1, ms: +dec.recompute[i].toFixed(3) });
});
log(`  fitted exponents (ms ~ T^p): cached p = ${dec.exponentCached}, recompute p = ${dec.exponentRecompute}` +
    ` (expected about 1 and 2 once the O(T) / O(T^2) attention terms dominate the O(d_model^2) projections);` +
    ` KV cache ${(dec.cacheBytes.at(-1) / 2 ** 20).toFixed(0)} MiB at seqLen ${Math.max(...dec.T)}`);

}

// ---------------------------------------------------------------- summary
// Every target of this run in one place, with the machine and both peaks it was judged against.
log(`\nSummary on ${machineLine(meta.machine)}:`);
log(`  one-thread wasm peaks: SIMD128 ${peak.toFixed(1)} GFLOP/s, relaxed-SIMD FMA ${peakFma.toFixed(1)} GFLOP/s`);
for (const t of targets) {
  const said = t.unit === '%' ? `${(100 * t.measured).toFixed(0)} % (need ≥ ${100 * t.need} %)`
    : t.unit === '×' ? `${t.measured.toFixed(2)}× (need ≥ ${t.need}×)` : `${t.measured} (need ${t.need})`;
  log(`  ${(t.pass ? 'PASS' : 'MISS').padEnd(5)} ${t.name}: ${said}`);
}
log(`  ${targets.filter((t) => t.pass).length} of ${targets.length} targets met`);
meta.peaks = { simd128: +peak.toFixed(2), fma: +peakFma.toFixed(2) };

meta.seconds = Math.round((Date.now() - t0) / 1000);
const outName = trainOnly ? 'bench/results.train.json' : apiOnly ? 'bench/results.api.json' : 'bench/results.json';
fs.writeFileSync(path.join(root, outName),
  JSON.stringify(rows.map(({ spread, ...r }) => r), null, 1) + '\n');
fs.writeFileSync(path.join(root, outName.replace(/\.json$/, '.meta.json')),
  JSON.stringify({ ...meta, spreads: rows.filter((r) => r.spread).map((r) => ({ impl: r.impl, T: r.T, causal: r.causal, threads: r.threads, minMax: r.spread })) }, null, 1) + '\n');
log(`\nwrote ${outName} (${rows.length} rows) and its .meta.json in ${meta.seconds} s`);
