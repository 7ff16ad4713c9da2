// Is the API's time the same in every process? (the API speed targets: "find and remove the
// bimodality first".) Runs bench/api_bench.mjs in N fresh Node processes per placement (pinned
// to each vCPU with taskset, and unpinned), and prints each process's median per T and the
// spread (slowest / fastest process median) per placement. A spread near 1 on each pinned vCPU
// with different levels between vCPUs says the machine, not the module (memory growth,
// alignment, tier-up would show on one vCPU too).
//   node bench/process_spread.mjs [--T 256,2048] [--n 5] [--module build/wasm/attn_core.mjs]
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const arg = (n, d) => { const i = argv.indexOf('--' + n); return i >= 0 ? argv[i + 1] : d; };
const Ts = arg('T', '256,2048');
const n = +arg('n', '5');
const mod = arg('module', 'build/wasm/attn_core.mjs');
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const placements = [...os.cpus().keys()].map((c) => ({ name: `vCPU ${c}`, pre: ['taskset', '-c', String(c)] }));
placements.push({ name: 'unpinned', pre: [] });
const flags = ['--experimental-wasm-relaxed-simd', '--no-experimental-fetch'];
const results = {};
for (let i = 0; i < n; i++) { // placements interleaved, so load drifts hit all of them alike
  for (const p of placements) {
    const cmd = [...p.pre, process.execPath, ...flags, path.join(root, 'bench/api_bench.mjs'), '--T', Ts, '--reps', '5', '--module', mod];
    const r = spawnSync(cmd[0], cmd.slice(1), { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${p.name}: ${r.stderr}`);
    for (const line of r.stdout.trim().split('\n')) {
      const j = JSON.parse(line);
      ((results[p.name] ??= {})[j.T] ??= []).push(median(j.ms));
    }
  }
}
console.log(`core.attention (${mod}), causal, one head, d_k 64: median ms of each of ${n} processes`);
for (const p of placements) {
  for (const [T, meds] of Object.entries(results[p.name])) {
    const spread = Math.max(...meds) / Math.min(...meds);
    console.log(`  ${p.name.padEnd(9)} T=${String(T).padStart(5)}  ${meds.map((x) => x.toFixed(3).padStart(8)).join('')}` +
      `   spread ${spread.toFixed(2)}×`);
  }
}
