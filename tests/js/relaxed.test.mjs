// The relaxed-SIMD build (attn_core_relaxed, fused multiply-adds) passes the same
// oracle suites as the SIMD128 build, and cpp/bindings/load_core.mjs picks it exactly where
// the engine validates relaxed SIMD. Node validates it only with --experimental-wasm-relaxed-simd,
// so the suites run in a child process with that flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

const FLAG = '--experimental-wasm-relaxed-simd';
const built = fs.existsSync(path.join(ROOT, 'build/wasm/attn_core_relaxed.wasm'));
const node = (args, env = {}) => {
  const e = { ...process.env, ...env };
  delete e.NODE_TEST_CONTEXT; // else the nested runner reports in the parent's private protocol
  return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: e, maxBuffer: 1 << 26 });
};

test('the relaxed build passes the attention, numerics, multi-head and fast-path suites', { skip: !built && 'attn_core_relaxed not built' }, () => {
  const files = ['attention', 'numerics', 'multihead', 'fastpath', 'copies', 'errors'].map((f) => `tests/js/${f}.test.mjs`);
  const r = node([FLAG, '--no-experimental-fetch', '--test', ...files], { ATTN_CORE: 'relaxed' });
  assert.equal(r.status, 0, `relaxed suites failed:\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-2000)}`);
  assert.match(r.stdout, /# fail 0/);
});

test('load_core picks the relaxed build only where relaxed SIMD validates', { skip: !built && 'attn_core_relaxed not built' }, () => {
  const script = `
    import { loadAttnCore, relaxedSimdSupported } from './cpp/bindings/load_core.mjs';
    const core = await loadAttnCore({ dir: 'build/wasm' });
    // One query, two keys with equal scores: the output is the mean of v's rows (0.5).
    const e = 2 ** -12;
    const q = new Float32Array([1 + e]), k = new Float32Array([1 - e, 1 - e]);
    const r = core.attention(q, k, new Float32Array([0, 1]), { heads: 1, tq: 1, tk: 2, dk: 1, dv: 1, kernel: 'tiled' });
    console.log(JSON.stringify({ supported: relaxedSimdSupported(), relaxed: core.limits.relaxedSimd, out: r.output[0] }));`;
  const run = (flags) => JSON.parse(node([...flags, '--input-type=module', '-e', script]).stdout.trim().split('\n').pop());
  const plain = run([]), withFlag = run([FLAG]);
  assert.deepEqual([plain.supported, plain.relaxed], [false, false]);
  assert.deepEqual([withFlag.supported, withFlag.relaxed], [true, true]);
  assert.equal(plain.out, 0.5);
  assert.equal(withFlag.out, 0.5);
});
