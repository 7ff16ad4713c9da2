// Times core.attention, the browser module's JS API, in Node after warm-up: the whole call as
// the page sees it (checks, one copy in, kernel, one copy out) and, from core.lastKernelMs(),
// the kernel alone, so overhead = call - kernel is measured in the same call. Several module
// builds given with --module are called interleaved (A/B under the same machine load).
//   node bench/api_bench.mjs [--T 64,256,1024,2048] [--reps 20] [--module build/wasm/attn_core.mjs ...]
//        [--dk 64] [--kernel tiled] [--causal 1] [--into] [--dir bench/out] [--warm-ms 250]
//        (--into: caller-owned result arrays)
// prints one JSON line per (module, T): {"module","T","ms":[...],"kernelMs":[...],"cpuMs":[...]}
// (kernelMs empty for builds without lastKernelMs). Inputs: bench/inputs.mjs (seeded, the same
// bytes in every process and for every peer); with --dir (bench/out, written by run.mjs) also
// "maxAbsError" of the output against the float64 reference rows there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inputs, readCase, maxAbsError } from './inputs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (n, d) => { const i = argv.indexOf('--' + n); return i >= 0 ? argv[i + 1] : d; };
const Ts = arg('T', '64,256,1024,2048').split(',').map(Number);
const reps = +arg('reps', '20');
const dk = +arg('dk', '64');
const kernel = arg('kernel', 'tiled');
const causal = arg('causal', '1') !== '0';
const useInto = argv.includes('--into');
const modPaths = argv.flatMap((a, i) => (a === '--module' ? [argv[i + 1]] : []));
if (!modPaths.length) modPaths.push('build/wasm/attn_core.mjs');

const cores = [];
for (const m of modPaths) {
  const file = path.resolve(root, m);
  const create = (await import(pathToFileURL(file))).default;
  cores.push(await create({ wasmBinary: fs.readFileSync(file.replace(/\.mjs$/, '.wasm')) }));
}
const opts = (T) => ({ heads: 1, tq: T, tk: T, dk, dv: dk, causal, kernel });
const dir = arg('dir', null);
const ins = new Map(Ts.map((T) => [T, inputs(T, dk)]));
const refs = new Map(dir && causal ? Ts.map((T) => [T, readCase(path.resolve(root, dir), T, dk)]) : []);
// Warm-up: every T in every build for at least WARM_MS and 3 calls (grows each heap to its size
// and lets V8 optimise the API's JavaScript: with 3 calls, T = 64 was timed in unoptimised glue,
// 0.07 ms per call against 0.024 ms once warm). PyTorch back to back is timed warm too, and the
// Chromium bench warms for ≥ 3 s.
const WARM_MS = +arg('warm-ms', '250');
for (const T of Ts) {
  for (const c of cores) {
    const t0 = performance.now();
    for (let w = 0; w < 3 || performance.now() - t0 < WARM_MS; w++) c.attention(...ins.get(T), opts(T));
  }
}
for (const T of Ts) {
  const [q, k, v] = ins.get(T);
  const o = opts(T);
  const n = T <= 256 ? reps * 10 : T <= 1024 ? reps * 2 : reps; // short calls: more samples
  const res = cores.map(() => ({ ms: [], kernelMs: [], cpuMs: [] }));
  const into = useInto ? { output: new Float32Array(T * dk), entropy: new Float32Array(T), lse: new Float32Array(T) } : undefined;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < cores.length; j++) {
      const c = cores[j], r = res[j];
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const y = c.attention(q, k, v, o, into).output;
      const t1 = performance.now();
      const cu = process.cpuUsage(c0);
      r.ms.push(+(t1 - t0).toFixed(4));
      r.cpuMs.push((cu.user + cu.system) / 1000);
      if (c.lastKernelMs) r.kernelMs.push(+c.lastKernelMs().toFixed(4));
      if (i === 0 && refs.has(T)) r.maxAbsError = maxAbsError(y, refs.get(T).ref, refs.get(T).rows, dk);
    }
  }
  res.forEach((r, j) => console.log(JSON.stringify({ module: modPaths[j], T, into: useInto, ...r })));
}
