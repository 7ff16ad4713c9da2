// npm run bench:text [-- --quick] [-- --rounds R] [-- --tokens N] [-- --cpu N]
//
// Training throughput of the shipped text model (scripts/text-model/ship.sh's flags): the
// project's native trainer attn_train_text against PyTorch eager (bench/text_train_torch.py, the
// same model and step) with 1 and 2 threads. Every round runs, in this order, native 1 thread,
// torch 1 thread, native 2 threads, torch 2 threads, each for N training tokens (N / (batch * seq-len)
// steps); R rounds (default 2; --quick: 1 round of 2e5 tokens). Native: training.tokensPerSecond
// of its model.json (the steps alone: the two checkpoints' writing, held-out loss and probe are
// outside it); torch: the same count over its timed steps after 10 warm-up steps (its two-thread
// runs with the OpenMP / OpenBLAS setting a trial found fastest, below). Prints the
// medians, native / torch per thread count with PASS (>= 1.0x) or MISS, the CPU and the load
// average at the start and the end; writes bench/results.text.json and its .meta.json.
//
// One-thread runs are pinned to one vCPU (taskset, --cpu N, default the last: this machine kind's
// vCPUs differ in speed, see bench/README.md); two-thread runs are not pinned. PyTorch runs on
// OpenBLAS as in `npm run bench` (installed with apt-get when missing, core chosen the same way).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, machineLine } from './machine.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const quick = argv.includes('--quick');
const rounds = Number(opt('rounds', quick ? 1 : 2));
const tokens = Number(opt('tokens', quick ? 2e5 : 5e5));
const pinCpu = Number(opt('cpu', os.cpus().length - 1));
const PY = '/usr/bin/python3';
const BIN = path.join(root, 'build/native/attn_train_text');
const OUT = path.join(root, 'bench/out/text');
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' };
const log = (...a) => console.log(...a);
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, env, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });

// The shipped flags, read from ship.sh itself so the bench follows the shipped model; --tokens and
// --checkpoints are overridden below (attn_train_text takes the last value of a flag).
function shippedFlags() {
  const m = fs.readFileSync(path.join(root, 'scripts/text-model/ship.sh'), 'utf8').match(/^FLAGS=\(([^)]*)\)/m);
  if (!m) throw new Error('scripts/text-model/ship.sh: no FLAGS=(...) array');
  return m[1].split(/\s+/).filter(Boolean);
}
const flags = shippedFlags();
// The tokens ship.sh trains on: TOKENS=DIR and spm.py's --vocab N.
const shipText = fs.readFileSync(path.join(root, 'scripts/text-model/ship.sh'), 'utf8');
const TOKENS = path.join(root, shipText.match(/^TOKENS=(\S+)/m)?.[1] ?? 'build/text-model/spm256');
const VOCAB = Number(shipText.match(/spm\.py "\$TOKENS" --vocab (\d+)/)?.[1] ?? 256);
const flag = (name) => flags[flags.indexOf(`--${name}`) + 1];
const B = Number(flag('batch')), T = Number(flag('seq-len'));
const steps = Math.floor(tokens / (B * T));
if (!(steps >= 20)) throw new Error(`--tokens ${tokens}: fewer than 20 steps of ${B} x ${T}`);

// NumPy's and PyTorch's BLAS as bench/run.mjs sets it up (see its blasCoreOverride): OpenBLAS
// present (Debian's reference BLAS is several times slower), the machine's preset
// OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset, and a core named from the CPU flags where OpenBLAS
// 0.3.21 falls back to a generic one.
function ensureOpenBlas() {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', 'libopenblas0-pthread'], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.includes('install ok installed')) return 'installed';
  log('libopenblas0-pthread is missing: installing it with apt-get (PyTorch runs on OpenBLAS)');
  sh('apt-get', ['install', '-y', 'libopenblas0-pthread'], { stdio: 'inherit' });
  return 'installed now';
}
// -> { core: the core OpenBLAS picks by itself, override: OPENBLAS_CORETYPE to set, or null }
function blasCore() {
  const e = { ...env, OPENBLAS_NUM_THREADS: '1' };
  delete e.OPENBLAS_CORETYPE;
  delete e.OPENBLAS_L2_SIZE;
  const r = spawnSync(PY, ['bench/numpy_bench.py', '--info', '--T', ''], { cwd: root, env: e, encoding: 'utf8' });
  let core = '';
  try { core = JSON.parse(r.stdout.split('\n')[0]).blas.openblas_core ?? ''; } catch { return { core: null, override: null }; }
  if (!/^(prescott|core2|nehalem|katmai|coppermine|northwood|banias|atom|unknown)$/i.test(core)) return { core, override: null };
  const cpuFlags = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const override = /\bavx512_bf16\b/.test(cpuFlags) ? 'Cooperlake' : /\bavx512f\b/.test(cpuFlags) ? 'SkylakeX'
    : /\bavx2\b/.test(cpuFlags) ? 'Haswell' : null;
  return { core, override };
}
const torchEnv = (threads, core) => {
  const e = { ...env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) };
  delete e.OPENBLAS_CORETYPE;
  delete e.OPENBLAS_L2_SIZE;
  if (core) e.OPENBLAS_CORETYPE = core;
  return e;
};

function run(cmd, args, threads, runEnv) {
  if (threads === 1 && pinCpu >= 0) [cmd, args] = ['taskset', ['-c', String(pinCpu), cmd, ...args]];
  const r = spawnSync(cmd, args, { cwd: root, env: runEnv, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return r.stdout;
}
function native(threads, round) {
  const dir = path.join(OUT, `native-t${threads}-r${round}`);
  fs.rmSync(dir, { recursive: true, force: true });
  run(BIN, ['--out', dir, '--token-dir', TOKENS, ...flags, '--tokens', String(tokens), '--checkpoints', '2', '--eval-windows', '1',
    '--probe-rows', '1', '--threads', String(threads)], threads, env);
  const tr = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8')).training;
  if (tr.threads !== threads || tr.steps !== steps) throw new Error(`${dir}: ran ${tr.threads} threads, ${tr.steps} steps`);
  fs.rmSync(dir, { recursive: true, force: true });
  return { tokensPerSecond: tr.tokensPerSecond, stepMs: (1e3 * tr.trainSeconds) / tr.steps };
}
// PyTorch with two threads: its OpenMP threads spin while they wait (GOMP's default), and so do
// OpenBLAS's own; on a shared 2-vCPU machine the spinning threads take the cores from the working
// ones (420 ms a step against 19 at load 7). Which setting is fastest depends on the machine's
// load, so a short trial of each picks PyTorch's best before the rounds (all printed). Our pool
// waits on a condition variable, i.e. passively.
const TORCH2 = [
  { name: 'OpenMP and OpenBLAS 2 threads each, default waits', env: {} },
  { name: 'OMP_WAIT_POLICY=PASSIVE, OpenBLAS 2 threads', env: { OMP_WAIT_POLICY: 'PASSIVE' } },
  { name: 'OMP_WAIT_POLICY=PASSIVE, OpenBLAS 1 thread', env: { OMP_WAIT_POLICY: 'PASSIVE', OPENBLAS_NUM_THREADS: '1' } },
];
function torch(threads, core, variant = {}, n = steps) {
  const out = run(PY, ['bench/text_train_torch.py', '--tokens', path.join(TOKENS, 'train.u16'), '--threads', String(threads),
    '--steps', String(n), '--warmup', '10', '--vocab', String(VOCAB), '--d-model', flag('d-model'), '--heads', flag('heads'),
    '--layers', flag('layers'), '--seq-len', String(T), '--batch', String(B), '--lr', flag('lr')], threads,
    { ...torchEnv(threads, core), ...variant });
  const r = JSON.parse(out.split('\n').find((l) => l.startsWith('{')));
  if (r.threads !== threads) throw new Error(`torch ran ${r.threads} threads, not ${threads}`);
  return r;
}

// ---------------------------------------------------------------- run
const t0 = Date.now();
const meta = { quick, started: new Date().toISOString(), rounds, tokens, steps, batch: B, seqLen: T, flags,
  openblas: ensureOpenBlas(), pinnedCpu: pinCpu };
const blas = blasCore();
const core = blas.override;
meta.openblasCore = blas.core;
meta.blasCoreOverride = core;
meta.machine = machineInfo();
log(`CPU: ${machineLine(meta.machine)}; load average at start ${meta.machine.loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}`);
log('building attn_train_text (native Release) ...');
if (!fs.existsSync(path.join(root, 'build/native/CMakeCache.txt'))) sh('cmake', ['--preset', 'native']);
sh('cmake', ['--build', 'build/native', '-j2', '--target', 'attn_train_text']);
fs.mkdirSync(OUT, { recursive: true });
if (!fs.existsSync(path.join(TOKENS, 'train.u16')))
  sh(PY, ['scripts/text-model/spm.py', TOKENS, '--vocab', String(VOCAB)], { stdio: ['ignore', 'ignore', 'inherit'] });
log(`shipped config (scripts/text-model/ship.sh): ${flags.join(' ')}`);
log(`each run: ${steps} steps of ${B} x ${T} = ${steps * B * T} tokens; ${rounds} round${rounds > 1 ? 's' : ''}, ` +
    `one-thread runs pinned to vCPU ${pinCpu}; OpenBLAS core ${blas.core ?? 'unknown'}` +
    (core ? ` (a generic fallback: OPENBLAS_CORETYPE=${core} set for PyTorch)` : ''));
log('PyTorch with 2 threads, a trial of 40 steps per setting:');
meta.torch2Trial = TORCH2.map((v) => {
  const r = torch(2, core, v.env, 40);
  log(`  ${r.tokensPerSecond.toFixed(0).padStart(7)} tokens/s  ${v.name}`);
  return { name: v.name, env: v.env, tokensPerSecond: +r.tokensPerSecond.toFixed(1) };
});
const torch2 = TORCH2[meta.torch2Trial.reduce((b, x, i, a) => (x.tokensPerSecond > a[b].tokensPerSecond ? i : b), 0)];
meta.torch2Setting = torch2;
log(`  the rounds run PyTorch 2 threads with: ${torch2.name}`);
const samples = { native: { 1: [], 2: [] }, torch: { 1: [], 2: [] } };
const torchInfo = [];
for (let r = 0; r < rounds; r++) {
  for (const k of [1, 2]) {
    const n = native(k, r);
    samples.native[k].push(n);
    log(`  round ${r + 1}  native ${k} thread${k > 1 ? 's' : ' '} ${n.tokensPerSecond.toFixed(0).padStart(7)} tokens/s  ${n.stepMs.toFixed(2).padStart(7)} ms/step`);
    const p = torch(k, core, k === 2 ? torch2.env : {});
    samples.torch[k].push({ tokensPerSecond: p.tokensPerSecond, stepMs: (1e3 * B * T) / p.tokensPerSecond });
    torchInfo.push(p);
    log(`  round ${r + 1}  torch  ${k} thread${k > 1 ? 's' : ' '} ${p.tokensPerSecond.toFixed(0).padStart(7)} tokens/s  ${((1e3 * B * T) / p.tokensPerSecond).toFixed(2).padStart(7)} ms/step (median ${p.stepMsMedian.toFixed(2)})`);
  }
}
meta.torch = torchInfo[0].torch;
meta.torchBlas = torchInfo[0].blas;
meta.lossStep0 = { torch: torchInfo[0].lossStep0, numpy: torchInfo[0].lossStep0NumPy };
meta.loadavgAtEnd = os.loadavg();

log(`\nText model training throughput (shipped config, ${VOCAB} BPE pieces, d_model ${flag('d-model')}, ${flag('heads')} heads, ${flag('layers')} layers, T ${T}, batch ${B}), medians of ${rounds} round${rounds > 1 ? 's' : ''}:`);
log(`  PyTorch ${meta.torch} eager float32 on ${meta.torchBlas.join(', ') || 'no BLAS found'}; step-0 loss ${meta.lossStep0.torch.toFixed(6)} ` +
    `(NumPy float64 of the same weights ${meta.lossStep0.numpy.toFixed(6)})`);
log(`  PyTorch 2 threads: ${meta.torch2Setting.name} (the fastest in the trial)`);
log('  threads   native tokens/s   torch tokens/s   native / torch');
const rows = [];
const targets = [];
for (const k of [1, 2]) {
  const nat = median(samples.native[k].map((s) => s.tokensPerSecond)), tor = median(samples.torch[k].map((s) => s.tokensPerSecond));
  const ratio = nat / tor;
  targets.push({ name: `text model training, ${k} thread${k > 1 ? 's' : ''}: native / PyTorch tokens/s`, measured: +ratio.toFixed(3), need: 1.0, pass: ratio >= 1.0, ratio });
  log(`  ${String(k).padStart(7)} ${nat.toFixed(0).padStart(17)} ${tor.toFixed(0).padStart(16)} ${ratio.toFixed(2).padStart(15)}×`);
  for (const [impl, s] of [['text-native', samples.native[k]], ['text-torch', samples.torch[k]]]) {
    rows.push({ impl, T, dModel: 64, batch: B, threads: k, tokensPerSecond: +median(s.map((x) => x.tokensPerSecond)).toFixed(1),
      stepMs: +median(s.map((x) => x.stepMs)).toFixed(3), samples: s.map((x) => +x.tokensPerSecond.toFixed(1)) });
  }
}
log(`\nSummary on ${machineLine(meta.machine)}:`);
for (const t of targets) log(`  ${(t.pass ? 'PASS' : 'MISS').padEnd(5)} ${t.name}: ${t.ratio.toFixed(2)}× (need ≥ ${t.need}×)`);
log(`  load average at start ${meta.machine.loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}, at the end ` +
    `${meta.loadavgAtEnd.map((x) => x.toFixed(2)).join(' ')} (a shared machine: compare within a run)`);
meta.targets = targets.map(({ ratio, ...t }) => t);
meta.seconds = Math.round((Date.now() - t0) / 1000);
fs.writeFileSync(path.join(root, 'bench/results.text.json'), JSON.stringify(rows, null, 1) + '\n');
fs.writeFileSync(path.join(root, 'bench/results.text.meta.json'), JSON.stringify(meta, null, 1) + '\n');
log(`\nwrote bench/results.text.json (${rows.length} rows) and its .meta.json in ${meta.seconds} s`);
