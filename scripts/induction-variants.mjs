#!/usr/bin/env node
// "Which variants form induction heads?": config A (the Train tab's default: induction task,
// vocab 32, seqLen 32, 2 layers, 2 heads, dModel 64, AdamW lr 1e-2, batch 32) with each attention
// variant, over init seeds 0..4 and one data seed (0, the data stream the tab's seed 0 uses), each
// run to 1,000 steps through the wasm training module (build/wasm/attn_train.*), as the Train tab
// runs it: held-out evaluation every 5 steps; steps to accuracy 0.9 = the first evaluation at or
// above 0.9 (the tab's crossing); at the end, the best layer-0 previous-token score and the best
// layer-1 induction score over the heads (tr.headScores()).
//
//   node scripts/induction-variants.mjs                  # every row, writes docs/induction-variants.json
//   node scripts/induction-variants.mjs --rows softmax,rope --seeds 0 --out /tmp/x.json
//   node scripts/induction-variants.mjs --merge /tmp/a.json,/tmp/b.json   # join partial runs
//   node scripts/induction-variants.mjs --table                            # docs/experiments.md's table
// A full run also writes web/src/train/induction-variants-data.ts (the Train tab's card).
//
// The runs are deterministic (same module, same bits): tests/js/train-variants.test.mjs re-runs
// rows and checks the figures the card and docs state.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const STEPS = 1000;
export const EVAL_EVERY = 5;
export const DATA_SEED = 0;
export const SEEDS = [0, 1, 2, 3, 4];
export const CONFIG_A = { task: 'induction', vocab: 32, seqLen: 32, layers: 2, heads: 2, dModel: 64,
  positional: 'learned', layerNorm: false, lr: 1e-2, beta1: 0.9, beta2: 0.99, weightDecay: 0.01, batch: 32 };
/** Each row: what it changes in config A (the Train tab's fields). */
export const ROWS = [
  { id: 'softmax', label: 'softmax (config A)', patch: {} },
  { id: 'softmax1', label: 'softmax₁', patch: { normalizer: 'softmax1' } },
  { id: 'sigmoid', label: 'sigmoid (b = −ln T)', patch: { normalizer: 'sigmoid' } },
  { id: 'relu', label: 'ReLU / T', patch: { normalizer: 'relu' } },
  { id: 'linear', label: 'linear (elu + 1)', patch: { normalizer: 'linear' } },
  { id: 'rope', label: 'RoPE (no learned table)', patch: { positional: 'rope' } },
  { id: 'alibi', label: 'ALiBi (no learned table)', patch: { positional: 'alibi' } },
  { id: 'qknorm', label: 'qkNorm (scale 1/√d_k)', patch: { qkNorm: true } },
  { id: 'qknorm-10', label: 'qkNorm, scale 10', patch: { qkNorm: true, scale: 10 } },
];

export async function loadModule() {
  const mjs = path.join(ROOT, 'build', 'wasm', 'attn_train.mjs');
  const { default: create } = await import(mjs);
  return create({ wasmBinary: fs.readFileSync(path.join(ROOT, 'build', 'wasm', 'attn_train.wasm')) });
}

/** One run: the held-out curve every EVAL_EVERY steps, the crossing, the end scores. */
export function runOne(lib, row, seed, steps = STEPS) {
  const cfg = { ...CONFIG_A, ...row.patch, seed, dataSeed: DATA_SEED };
  const tr = lib.createTrainer(cfg);
  try {
    const e0 = tr.evaluate();
    const curve = [[0, e0.loss, e0.accuracy]];
    let at90 = e0.accuracy >= 0.9 ? 0 : null;
    let finite = true;
    for (let s = EVAL_EVERY; s <= steps; s += EVAL_EVERY) {
      const r = tr.train(EVAL_EVERY);
      finite = finite && r.finite;
      const e = tr.evaluate();
      curve.push([s, e.loss, e.accuracy]);
      if (at90 === null && e.accuracy >= 0.9) at90 = s;
    }
    const hs = tr.headScores();
    const H = cfg.heads;
    const prev0 = Math.max(...hs.previousToken.subarray(0, H));
    const ind1 = Math.max(...hs.induction.subarray(H, 2 * H));
    const last = curve[curve.length - 1];
    return { seed, at90, finalLoss: last[1], finalAccuracy: last[2], prev0, ind1, finite, curve };
  } finally {
    tr.delete();
  }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** A row's summary: how many seeds crossed 0.9 and the median crossing over those that did. */
export function summarise(runs) {
  const crossed = runs.filter((r) => r.at90 !== null).map((r) => r.at90);
  return {
    crossed: crossed.length,
    seeds: runs.length,
    medianAt90: crossed.length ? median(crossed) : null,
    medianPrev0: median(runs.map((r) => r.prev0)),
    medianInd1: median(runs.map((r) => r.ind1)),
    medianFinalAccuracy: median(runs.map((r) => r.finalAccuracy)),
  };
}

/** The median held-out loss over the seeds, every `every` steps: the card's curve. */
export function medianCurve(runs, every = 25) {
  const out = [];
  for (let k = 0; k < runs[0].curve.length; k++) {
    const step = runs[0].curve[k][0];
    if (step % every !== 0) continue;
    out.push([step, median(runs.map((r) => r.curve[k][1]))]);
  }
  return out;
}

/** The Train tab's copy of the result (web/src/train/induction-variants-data.ts): no full curves. */
export function cardData(result) {
  const r4 = (x) => (x === null ? null : Number(x.toFixed(4)));
  return {
    steps: result.steps, evalEvery: result.evalEvery, dataSeed: result.dataSeed, seeds: result.seeds,
    rows: result.rows.map((row) => ({
      id: row.id, label: row.label, patch: row.patch,
      at90: row.runs.map((r) => r.at90), prev0: row.runs.map((r) => r4(r.prev0)), ind1: row.runs.map((r) => r4(r.ind1)),
      finalAccuracy: row.runs.map((r) => r4(r.finalAccuracy)),
      curve: medianCurve(row.runs).map(([s, l]) => [s, r4(l)]),
    })),
  };
}

export function markdownTable(result) {
  const f2 = (x) => x.toFixed(2);
  const lines = ['| variant | reached 0.9 | steps to 0.9, seeds ' + result.seeds.join(', ') + ' | median | layer-0 previous-token, per seed | layer-1 induction, per seed | final accuracy, median | held-out loss at 0 / 250 / 500 / 1000 (median) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const row of result.rows) {
    const s = summarise(row.runs);
    const at = (k) => median(row.runs.map((r) => r.curve.find((c) => c[0] === k)[1]));
    lines.push(`| ${row.label} | ${s.crossed}/${s.seeds} | ${row.runs.map((r) => r.at90 ?? '–').join(', ')} | ${s.medianAt90 ?? '–'} | ` +
      `${row.runs.map((r) => f2(r.prev0)).join(', ')} | ${row.runs.map((r) => f2(r.ind1)).join(', ')} | ${f2(s.medianFinalAccuracy)} | ` +
      `${[0, 250, 500, result.steps].map((k) => f2(at(k))).join(' / ')} |`);
  }
  return lines.join('\n');
}

function writeCard(result) {
  const file = path.join(ROOT, 'web', 'src', 'train', 'induction-variants-data.ts');
  const text = '// Written by scripts/induction-variants.mjs (do not edit): the measured result of the\n' +
    '// "Which variants form induction heads?" experiment, per row and init seed (data seed ' + result.dataSeed + ').\n' +
    '// at90: first evaluation (every ' + result.evalEvery + ' steps) with held-out accuracy >= 0.9, null = not within ' + result.steps + ' steps;\n' +
    '// prev0 / ind1: best layer-0 previous-token / layer-1 induction score at step ' + result.steps + '; curve: median held-out loss.\n' +
    'export interface VariantsRow {\n  id: string;\n  label: string;\n  patch: Record<string, unknown>;\n' +
    '  at90: (number | null)[];\n  prev0: number[];\n  ind1: number[];\n  finalAccuracy: number[];\n  curve: [number, number][];\n}\n' +
    'export const INDUCTION_VARIANTS: { steps: number; evalEvery: number; dataSeed: number; seeds: number[]; rows: VariantsRow[] } =\n  ' +
    JSON.stringify(cardData(result)) + ';\n';
  fs.writeFileSync(file, text);
  console.log(`wrote ${file}`);
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined && !args[i + 1].startsWith('--') ? args[i + 1] : def;
  };
  // --table [file]: the Markdown table of docs/experiments.md from a result file.
  if (args.includes('--table')) {
    const file = opt('--table', path.join(ROOT, 'docs', 'induction-variants.json'));
    console.log(markdownTable(JSON.parse(fs.readFileSync(file, 'utf8'))));
    return;
  }
  // --merge a.json,b.json: join partial runs (rows in ROWS order), write the docs JSON and the card.
  if (args.includes('--merge')) {
    const parts = opt('--merge', '').split(',').map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
    const result = { ...parts[0], rows: ROWS.flatMap((r) => parts.flatMap((p) => p.rows.filter((x) => x.id === r.id))) };
    const out = opt('--out', path.join(ROOT, 'docs', 'induction-variants.json'));
    fs.writeFileSync(out, JSON.stringify(result) + '\n');
    console.log(`wrote ${out}`);
    writeCard(result);
    return;
  }
  const rowIds = opt('--rows', ROWS.map((r) => r.id).join(',')).split(',');
  const seeds = opt('--seeds', SEEDS.join(',')).split(',').map(Number);
  const out = opt('--out', path.join(ROOT, 'docs', 'induction-variants.json'));
  const lib = await loadModule();
  const result = { description: 'Which variants form induction heads? (scripts/induction-variants.mjs)',
    config: CONFIG_A, steps: STEPS, evalEvery: EVAL_EVERY, dataSeed: DATA_SEED, seeds, rows: [] };
  for (const id of rowIds) {
    const row = ROWS.find((r) => r.id === id);
    if (!row) throw new Error(`unknown row ${id}`);
    const runs = [];
    for (const seed of seeds) {
      const t0 = Date.now();
      const r = runOne(lib, row, seed);
      runs.push(r);
      console.log(`${id.padEnd(10)} seed ${seed}: 0.9 at ${r.at90 ?? 'not within ' + STEPS} · final acc ${r.finalAccuracy.toFixed(3)} loss ${r.finalLoss.toFixed(3)} · prev0 ${r.prev0.toFixed(3)} ind1 ${r.ind1.toFixed(3)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    result.rows.push({ id, label: row.label, patch: row.patch, summary: summarise(runs), runs });
    fs.writeFileSync(out, JSON.stringify(result, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(5)) : v)) + '\n');
  }
  console.log(`wrote ${out}`);
  if (rowIds.length === ROWS.length && seeds.length === SEEDS.length) writeCard(result);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
