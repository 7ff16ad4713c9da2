// The cards that grow a size: why √d_k (over d_k), the cost per doubling of T, FlashAttention's bytes per T.
import type { AttnCore } from '../wasm/attn-core';
import { exampleFor, runModel, type RunModel } from './run';
import { f, type CardResult } from './card-format';
import { costSnippet, flashSnippet, sqrtSnippet } from './card-snippets';

// ---------- why √d_k ----------
export const SQRT_DKS = [1, 4, 16, 64, 256, 1024];
/** Lesson 2's own example (its code with default_rng(0): T = 6, d = 8, d_k = 4, causal). */
export const LESSON2_MODEL: RunModel = {
  source: 'random',
  tokens: ['t0', 't1', 't2', 't3', 't4', 't5'],
  sharpness: 14,
  seed: 0,
  init: 'normal',
  generator: 'numpy',
  heads: 1,
  kvHeads: 1,
  dModel: 8,
  dK: 4,
  causal: true,
  window: 0,
  padding: [],
  fill: 'neg_inf',
  scale: 'sqrt',
};
export function sqrtCard(core: AttnCore, seed = 3): CardResult {
  const n = 64;
  const std: number[] = [];
  for (const dk of SQRT_DKS) {
    // Unit-variance vectors: rows of the core's N(0, 1) example input X (d_model = d_k).
    const a = core.example('random', { seed, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const b = core.example('random', { seed: seed + 1, t: n, dModel: dk, heads: 1, dk: 1, init: 'normal' }).x;
    const s = core.attention(a, b, new Float32Array(n), {
      heads: 1,
      tq: n,
      tk: n,
      dk,
      dv: 1,
      scale: 1,
      returnScores: true,
    }).scores!;
    let mean = 0;
    for (const x of s) mean += x;
    mean /= s.length;
    let v = 0;
    for (const x of s) v += (x - mean) ** 2;
    std.push(Math.sqrt(v / s.length));
  }
  const at = (dk: number) => std[SQRT_DKS.indexOf(dk)];
  // Lesson 2: "delete that division and re-run: the weight matrix becomes almost one-hot".
  const ex = exampleFor(core, LESSON2_MODEL);
  const T = ex.t;
  const rowMax = (scale: RunModel['scale']) => {
    const w = runModel(core, ex, { ...LESSON2_MODEL, scale }, {}).weights!;
    return Array.from({ length: T }, (_, i) => Math.max(...w.subarray(i * T, (i + 1) * T)));
  };
  const withDiv = rowMax('sqrt'),
    without = rowMax('none');
  // The spread of its scores with the division, over the cells the causal mask allows.
  const sc = runModel(core, ex, LESSON2_MODEL, {}).scores!;
  const allowed: number[] = [];
  for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) allowed.push(sc[i * T + j]);
  const mean = allowed.reduce((a, b) => a + b, 0) / allowed.length;
  const scoreStd = Math.sqrt(allowed.reduce((a, b) => a + (b - mean) ** 2, 0) / allowed.length);
  const above = (xs: number[]) => xs.filter((x) => x > 0.9).length;
  const list = (xs: number[]) => xs.map((x) => f(x)).join(', ');
  const figures: Record<string, number> = Object.fromEntries(SQRT_DKS.map((d, i) => [`std${d}`, std[i]]));
  withDiv.forEach((x, i) => (figures[`lesson2With${i}`] = x));
  without.forEach((x, i) => (figures[`lesson2Without${i}`] = x));
  figures.lesson2WithAbove09 = above(withDiv);
  figures.lesson2WithoutAbove09 = above(without);
  figures.lesson2ScoreStd = scoreStd;
  return {
    id: 'sqrtdk',
    numpy: sqrtSnippet(T),
    title: 'Why √d_k, measured',
    line: 'S = (Q @ K.T) * scale',
    lead: 'A dot product of two random vectors spreads more the longer the vectors are; dividing by √d_k keeps the scores’ spread near 1 at any width.',
    measured: `Random unit-variance vectors from the core’s generator, ${n} queries × ${n} keys for each d_k, scale 1 (the raw q·k); then lesson 2’s own example (its code with default_rng(0): ${T} tokens, d = 8, d_k = 4, causal) with and without the division.`,
    text: [
      `Standard deviation of q·k: ${SQRT_DKS.map((d, i) => `${f(std[i], 2)} at d_k = ${d}`).join(', ')}.`,
      `At d_k = 64 the spread is ${f(at(64) / at(1), 2)}× that at d_k = 1 (√64 = 8): dividing by √d_k brings it back to about ${f(at(64) / 8, 2)}.`,
      `Lesson 2 says that without the division its W “becomes almost one-hot”. On its own example each row's largest weight (rows 0 to ${T - 1}) is ${list(withDiv)} with the division and ${list(without)} without: ${above(withDiv)} of ${T} rows put more than 0.9 on one key with it, ${above(without)} without.`,
      `So the claim overstates at this size: with the division ${above(withDiv)} of ${T} rows are already that close to one-hot, and deleting it makes ${above(without)}. At d_k = 4 the division only halves the scores, and lesson 2 draws X and the weights from N(0, 1), so each entry of q and k is a sum of 8 products (expected variance 8, not 1): divided by 2, the scores the mask allows still have a standard deviation of ${f(scoreStd, 2)}. The division matters where lesson 1 measures it: unit-variance q and k, and wide heads (at d_k = 64 it divides by 8).`,
    ],
    figures,
  };
}

// ---------- does each doubling quadruple the time? ----------
/** Lesson 2's timing loop: X (T, 512), three projections to d_k = 64, then Q Kᵀ and W V. */
export const COST_TS = [256, 512, 1024, 2048, 4096, 8192, 16384];
const COST_D = 512,
  COST_DK = 64;
export function costCard(): CardResult {
  // Operations of the matrix products, 2 per multiply-add (an (a, b) @ (b, c) product is 2abc).
  const mm = (a: number, b: number, c: number) => 2 * a * b * c;
  const rows = COST_TS.map((t) => ({
    t,
    proj: 3 * mm(t, COST_D, COST_DK),
    quad: mm(t, COST_DK, t) + mm(t, t, COST_DK),
  }));
  const total = (r: (typeof rows)[number]) => r.proj + r.quad;
  const ratios = rows.slice(1).map((r, i) => total(r) / total(rows[i]));
  // The T × T products equal the projections where 4 T² d_k = 6 T d d_k: T = 1.5 d.
  const crossover = (3 * COST_D) / 2;
  const lessonRatios = ratios.slice(0, 3);
  const figures: Record<string, number> = { crossover };
  ratios.forEach((r, i) => (figures[`ratio${COST_TS[i + 1]}`] = r));
  const ops = (x: number) => `${(x / 1e9).toFixed(x < 1e9 ? 3 : 2)} G`;
  return {
    id: 'cost',
    numpy: costSnippet(COST_TS, COST_D, COST_DK),
    title: 'Does each doubling quadruple the time?',
    line: 'S = (Q @ K.T) … O = W @ V',
    lead: 'Lesson 2 times its function for T = 256 to 2048 and says each doubling roughly quadruples the time; only the T × T part of the work grows that fast.',
    measured: `Counted, not timed: the operations of the matrix products in lesson 2's loop (X of width ${COST_D}, three projections to d_k = ${COST_DK}, Q @ K.T and W @ V), two per multiply-add; the scale, the mask and the softmax are left out.`,
    text: [
      `Per doubling the count grows ×${lessonRatios.map((r) => f(r, 2)).join(', ×')} from T = 256 to 2048, the lesson's own sizes, then ×${ratios
        .slice(3)
        .map((r) => f(r, 2))
        .join(', ×')} up to T = ${COST_TS[COST_TS.length - 1]}.`,
      `The projections grow ×2 per doubling and the two T × T products ×4; the products catch up with the projections only at T = ${crossover} (1.5 × d = ${COST_D}). So “quadruples” holds once T is well above that; at the lesson's sizes the count gives ×${f(lessonRatios[0], 1)} to ×${f(lessonRatios[lessonRatios.length - 1], 1)}, and the Timing lab measures the time in this browser.`,
    ],
    figures,
    table: {
      caption: `Operations of lesson 2's loop (d = ${COST_D}, d_k = ${COST_DK}), in billions`,
      head: ['T', 'projections', 'T × T products', 'total', '× prev. T'],
      rows: rows.map((r, i) => ({
        cells: [String(r.t), ops(r.proj), ops(r.quad), ops(total(r)), i ? `×${f(ratios[i - 1], 2)}` : ''],
        data: { t: r.t, projections: r.proj, quadratic: r.quad, total: total(r) },
      })),
    },
  };
}

// ---------- what FlashAttention makes linear ----------
// Every byte count is the core's (core.traffic, the IO model of Dao et al. 2022, checked in
// tests/cpp/test_traffic.cpp against simulations of the loops and against the NumPy walk of the
// loops in tests/oracle/flash_io.py).
export const FLASH_TS = [512, 1024, 2048, 4096, 8192];
/** The head width the card uses (the lesson's d_k). */
export const FLASH_D = 64;
/** The smallest and largest on-chip memory the card offers (KiB). */
const SMALL_KIB = 16,
  LARGE_KIB = 228;
export function flashCard(core: AttnCore, sramKiB = 64): CardResult {
  const d = FLASH_D,
    sramBytes = sramKiB * 1024,
    M = sramBytes / 4;
  const at = (t: number, kernel: 'naive' | 'tiled', bytes = sramBytes, loopOrder: 'q-outer' | 'kv-outer' = 'q-outer') =>
    core.traffic({ tq: t, tk: t, dk: d, dv: d, heads: 1, causal: false, kernel, sramBytes: bytes, loopOrder });
  const sweep = FLASH_TS.map((t) => ({
    t,
    std: at(t, 'naive'),
    q: at(t, 'tiled'),
    kv: at(t, 'tiled', sramBytes, 'kv-outer'),
  }));
  const last = sweep[sweep.length - 1],
    prev = sweep[sweep.length - 2];
  const T = last.t;
  const kvAt = (kib: number) => at(T, 'tiled', kib * 1024, 'kv-outer').slowMemoryBytes;
  const qAt = (kib: number) => at(T, 'tiled', kib * 1024).slowMemoryBytes;
  const mib = (b: number) => b / 2 ** 20;
  // The paper's constant: about 12 T² d² / M elements with key blocks outside (Q, O, l, m re-read
  // per key block), 8 T² d² / M with query blocks outside (K, V re-read per query block).
  const kvModel = (4 * 12 * T * T * d * d) / M,
    qModel = (4 * 8 * T * T * d * d) / M;
  const capKiB = (4 * d * d * 4) / 1024; // M = 4d² floats: B_r reaches d
  const capped = last.q.blockRows === d && Math.ceil(M / (4 * d)) > d;
  const figures: Record<string, number> = {
    sramKiB,
    footprintStandardRatio: last.std.footprintBytes / prev.std.footprintBytes,
    footprintTiledRatio: last.q.footprintBytes / prev.q.footprintBytes,
    trafficStandardRatio: last.std.slowMemoryBytes / prev.std.slowMemoryBytes,
    trafficTiledRatio: last.q.slowMemoryBytes / prev.q.slowMemoryBytes,
    trafficKvOuterRatio: last.kv.slowMemoryBytes / prev.kv.slowMemoryBytes,
    footprintStandardMiB: mib(last.std.footprintBytes),
    footprintTiledMiB: mib(last.q.footprintBytes),
    trafficStandardMiB: mib(last.std.slowMemoryBytes),
    trafficTiledMiB: mib(last.q.slowMemoryBytes),
    trafficKvOuterMiB: mib(last.kv.slowMemoryBytes),
    trafficSmallSramRatio: qAt(SMALL_KIB) / last.q.slowMemoryBytes,
    kvOuterSmallMiB: mib(kvAt(SMALL_KIB)),
    kvOuterLargeMiB: mib(kvAt(LARGE_KIB)),
    qOuterSmallMiB: mib(qAt(SMALL_KIB)),
    qOuterLargeMiB: mib(qAt(LARGE_KIB)),
    kvOuterOverModel: last.kv.slowMemoryBytes / kvModel,
    qOuterOverModel: last.q.slowMemoryBytes / qModel,
    blockRows: last.q.blockRows,
    blockCols: last.q.blockCols,
  };
  const ratio = (a: number, b: number) => (b ? `×${f(a / b, 2)}` : '');
  return {
    id: 'flash',
    numpy: flashSnippet(sramKiB, d),
    title: 'What FlashAttention makes linear',
    line: 'S = (Q @ K.T) * scale … O = W @ V (tiled: S and W stay on chip)',
    lead: 'FlashAttention computes the same result in tiles, so the T × T matrices never go to slow memory: the memory it needs grows in proportion to T, but the bytes it moves still grow with T².',
    measured: `The core’s IO model (core.traffic: counted, nothing is run): d_k = ${d}, one head, no mask, float32; M = ${sramKiB} KiB of on-chip memory = ${M} floats, so blocks of ${last.q.blockRows} query rows × ${last.q.blockCols} keys (the paper’s Algorithm 1: B_c = ⌈M/4d⌉ keys, B_r = min(⌈M/4d⌉, d) queries).`,
    text: [
      `Footprint (what stays in slow memory), T = ${prev.t} → ${T}: the standard computation ${f(figures.footprintStandardMiB, 1)} MiB, ×${f(figures.footprintStandardRatio, 2)} per doubling (S and W are T × T); the tiled one ${f(figures.footprintTiledMiB, 1)} MiB, ×${f(figures.footprintTiledRatio, 2)} (Q, K, V, O and two numbers per row): linear in T.`,
      `Bytes moved at T = ${T}: standard ${f(figures.trafficStandardMiB, 0)} MiB; tiled with the key blocks as the outer loop (the paper’s Algorithm 1, FlashAttention-1) ${f(figures.trafficKvOuterMiB, 0)} MiB; tiled with the query blocks outer (FlashAttention-2’s order, and this core’s tiled kernel) ${f(figures.trafficTiledMiB, 0)} MiB. Per doubling of T: ×${f(figures.trafficStandardRatio, 2)}, ×${f(figures.trafficKvOuterRatio, 2)} and ×${f(figures.trafficTiledRatio, 2)}: all still quadratic.`,
      `The constant: key blocks outer re-read Q, O and the two row statistics once per key block, about 12·T²·d²/M floats (this count is ${f(figures.kvOuterOverModel, 2)} times that); query blocks outer re-read K and V once per query block, about 8·T²·d²/M while a query block is under d rows${capped ? `; at this M it is capped at d rows, so K and V are re-read 2·T² floats’ worth (${f(figures.qOuterOverModel, 2)} times 8·T²·d²/M)` : ` (this count is ${f(figures.qOuterOverModel, 2)} times that)`}.`,
      `More on-chip memory: with key blocks outer the bytes keep falling, ${f(figures.kvOuterSmallMiB, 0)} MiB at ${SMALL_KIB} KiB to ${f(figures.kvOuterLargeMiB, 0)} MiB at ${LARGE_KIB} KiB. With query blocks outer they fall from ${f(figures.qOuterSmallMiB, 0)} MiB to ${f(figures.qOuterLargeMiB, 0)} MiB and stop at ${capKiB} KiB (4d² floats), because Algorithm 1 caps a query block at d = ${d} rows${capped ? ' (as at this M)' : ''}: a consequence of pairing that loop order with Algorithm 1’s block sizes in this model, not something either paper states.`,
      `Where lesson 2 simplifies: it says “what became linear is the memory traffic”. In the paper’s own IO model what became linear is the memory the computation keeps (the footprint); the traffic stays quadratic in T, Θ(T²d²/M) (Dao et al. 2022, Theorem 2). It beats the standard computation’s 4·T² floats of S and W traffic only when M is large next to d²: here key blocks outer move ${compared(figures.trafficKvOuterMiB, figures.trafficStandardMiB)} and query blocks outer ${compared(figures.trafficTiledMiB, figures.trafficStandardMiB)} than the standard computation.`,
    ],
    figures,
    table: {
      caption: `Bytes as T doubles (d_k = ${d}, one head, no mask, float32; tiled with M = ${sramKiB} KiB)`,
      // Bytes moved first: a phone shows these columns and scrolls to the footprints.
      head: [
        'T',
        'moved: standard',
        'moved: tiled, key blocks outer (FA-1)',
        'moved: tiled, query blocks outer (FA-2 order)',
        'moved × prev. T: standard / key outer / query outer',
        'footprint: standard',
        'footprint: tiled',
      ],
      rows: sweep.map((r, i) => ({
        cells: [
          String(r.t),
          mibText(r.std.slowMemoryBytes),
          mibText(r.kv.slowMemoryBytes),
          mibText(r.q.slowMemoryBytes),
          i
            ? `${ratio(r.std.slowMemoryBytes, sweep[i - 1].std.slowMemoryBytes)} / ${ratio(r.kv.slowMemoryBytes, sweep[i - 1].kv.slowMemoryBytes)} / ${ratio(r.q.slowMemoryBytes, sweep[i - 1].q.slowMemoryBytes)}`
            : '',
          mibText(r.std.footprintBytes),
          mibText(r.q.footprintBytes),
        ],
        data: {
          t: r.t,
          stdFootprint: r.std.footprintBytes,
          tiledFootprint: r.q.footprintBytes,
          stdMoved: r.std.slowMemoryBytes,
          tiledMoved: r.q.slowMemoryBytes,
          kvOuterMoved: r.kv.slowMemoryBytes,
        },
      })),
    },
  };
}

/** "1.31× fewer bytes" or "3.04× more bytes": a against b. */
const compared = (a: number, b: number): string =>
  a <= b ? `${f(b / a, 2)}× fewer bytes` : `${f(a / b, 2)}× more bytes`;

const mibText = (b: number): string => `${(b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 2 : 1)} MiB`;
