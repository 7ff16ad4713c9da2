// One peer of `npm run bench -- --peers` in Node, one thread, after warm-up:
//   node bench/peers/run_peer.mjs --impl tfjs-wasm|ort-wasm --T 64,256 --reps 10 --dir bench/out
// Reads the shared inputs (bench/inputs.mjs, written by run.mjs), times one causal attention
// call per rep, wall clock from the Float32Arrays in to a Float32Array out (tensor creation,
// the ops, reading the result back), and checks the output against the float64 reference.
// Prints one JSON line per T: {"impl","T","ms":[...],"maxAbsError"}.
//   tfjs-wasm: @tensorflow/tfjs-backend-wasm (SIMD, 1 thread): its fast spelling, K transposed
//     explicitly, then matMul, mul by the scale, add the additive causal mask, softmax, matMul.
//   ort-wasm: onnxruntime-web's wasm EP (SIMD, numThreads 1) on bench/out/attention.onnx
//     (exported by bench/peers/make_onnx.py with torch.onnx: MatMul, Mul, Add mask, Softmax, MatMul).
// The additive mask (0 / -inf) is built once per T outside the clock, like every peer's.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { readCase, maxAbsError } from '../inputs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const argv = process.argv.slice(2);
const arg = (n, d) => { const i = argv.indexOf('--' + n); return i >= 0 ? argv[i + 1] : d; };
const impl = arg('impl');
const Ts = arg('T', '64,256').split(',').map(Number);
const reps = +arg('reps', '10');
const dir = path.resolve(arg('dir', path.join(here, '..', 'out')));
const d = +arg('dk', '64');

function causalMask(T) {
  const m = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -Infinity;
  return m;
}

let run; // (q, k, v, mask, T) -> Promise<Float32Array>
if (impl === 'tfjs-wasm') {
  const tf = require('@tensorflow/tfjs-core');
  const wasm = require('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const scale = 1 / Math.sqrt(d);
  run = async (q, k, v, mask, T) => {
    const out = tf.tidy(() => {
      const Q = tf.tensor2d(q, [T, d]), K = tf.tensor2d(k, [T, d]), V = tf.tensor2d(v, [T, d]);
      const s = tf.add(tf.mul(tf.matMul(Q, tf.transpose(K)), tf.scalar(scale)), mask);
      return tf.matMul(tf.softmax(s), V);
    });
    const y = out.dataSync();
    out.dispose();
    return y;
  };
  run.mask = (T) => tf.keep(tf.tensor2d(causalMask(T), [T, T]));
  run.info = { version: require('@tensorflow/tfjs-backend-wasm/package.json').version, threads: wasm.getThreadsCount?.() ?? 1 };
} else if (impl === 'ort-wasm') {
  const ort = require('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  const session = await ort.InferenceSession.create(fs.readFileSync(path.join(dir, `attention-d${d}.onnx`)),
    { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  run = async (q, k, v, mask, T) => {
    const r = await session.run({
      q: new ort.Tensor('float32', q, [T, d]), k: new ort.Tensor('float32', k, [T, d]),
      v: new ort.Tensor('float32', v, [T, d]), mask,
    });
    return r.out.data;
  };
  run.mask = (T) => new ort.Tensor('float32', causalMask(T), [T, T]);
  run.info = { version: JSON.parse(fs.readFileSync(path.join(here, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version, threads: 1 };
} else {
  throw new Error(`unknown --impl ${impl}`);
}

const cases = Ts.map((T) => ({ T, ...readCase(dir, T, d) }));
for (const c of cases) c.mask = run.mask(c.T);
// Warm-up: every T twice (compiles, tiers up, sizes the allocators).
for (let w = 0; w < 2; w++) for (const c of cases) await run(c.q, c.k, c.v, c.mask, c.T);
for (const c of cases) {
  const ms = [];
  let err = 0;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const y = await run(c.q, c.k, c.v, c.mask, c.T);
    ms.push(+(performance.now() - t0).toFixed(4));
    if (i === 0) err = maxAbsError(y, c.ref, c.rows, d);
  }
  console.log(JSON.stringify({ impl, T: c.T, ms, maxAbsError: err, ...run.info }));
}
