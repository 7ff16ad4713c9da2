// The Lesson feature: its state rows (link round trips, hostile values corrected with a notice,
// the core's refused combinations fixed before the core sees them), the variant reaching the
// attention views' compute service, and the runs behind the side-by-side view and the cards,
// against the real wasm core in Node and the NumPy oracle's fixtures (tests/fixtures/variants.json,
// tests/fixtures/lesson.json).
import { describe, it, expect, beforeAll } from 'vitest';
import fc from 'fast-check';
import type { AttnCore } from '../../web/src/wasm/attn-core';
import { loadWasmCore } from './wasm-core';
import { decodeHash, encodeState, defaultState, normalizeState, withLinkFields, linkFields, type State } from '../../web/src/app/state';
import { computeAttention } from '../../web/src/attention/compute';
import { NORMALIZERS, POSITIONS, PRECISIONS, MASK_MODES } from '../../web/src/shared/variant';
import { compare } from '../../web/src/lesson/run';
import { codeLines } from '../../web/src/lesson/code-lines';
import { afterCard, amplifyCard, costCard, loopCard, overflowThreshold, permutation, runCard, shuffleCard, sqrtCard, flashCard, variantCard, VARIANT_CARD_IDS } from '../../web/src/lesson/experiments';
import { EXPERIMENT_IDS } from '../../web/src/lesson/experiment-ids';
import { STEPS } from '../../web/src/lesson/path-steps';
import { SRAM_KIB } from '../../web/src/lesson/state';
import variantsText from '../fixtures/variants.json?raw';
import lessonText from '../fixtures/lesson.json?raw';

let core: AttnCore;
beforeAll(async () => {
  core = await loadWasmCore();
});

const clean = (fields: Record<string, unknown>): State => {
  const n = normalizeState(withLinkFields(defaultState(), fields));
  expect(n.notices).toEqual([]);
  return n.state;
};

describe('lesson state rows', () => {
  it('round-trip every value of every variant key through a link', () => {
    const arb = fc.record({
      norm: fc.constantFrom(...NORMALIZERS), posenc: fc.constantFrom(...POSITIONS), qkn: fc.boolean(), shift: fc.boolean(),
      mmode: fc.constantFrom(...MASK_MODES), prec: fc.constantFrom(...PRECISIONS), sbias: fc.oneof(fc.constant('auto'), fc.integer({ min: -100, max: 100 })),
      lstep: fc.integer({ min: 0, max: STEPS.length }), view: fc.constantFrom('lesson', 'heads', 'mask', 'scale', 'output'),
    });
    fc.assert(fc.property(arb, (f) => {
      const s = normalizeState(withLinkFields(defaultState(), f)).state;
      const d = decodeHash(encodeState(s));
      expect(d.notices).toEqual([]);
      expect(linkFields(d.state)).toEqual(linkFields(s));
    }), { numRuns: 200 });
  }, 60_000);

  it('a lesson link reads back field by field', () => {
    const d = decodeHash('#v=1&view=lesson&norm=sigmoid&sbias=-2.5&posenc=rope&qkn=1&mmode=after&prec=float64&lstep=3&lexp=shuffle');
    expect(d.notices).toEqual([]);
    expect(d.state.page.view).toBe('lesson');
    expect(d.state.lesson).toMatchObject({ normalizer: 'sigmoid', sigmoidBias: -2.5, position: 'rope', qkNorm: true, maskMode: 'after', precision: 'float64', step: 3, exp: 'shuffle' });
  });

  const hostile: [string, RegExp, Partial<State['lesson']>][] = [
    ['norm=banana', /normalizer “banana” is unknown; using softmax/, { normalizer: 'softmax' }],
    ['posenc=%E2%80%AE', /position encoding/, { position: 'none' }],
    ['prec=float8', /precision “float8” is unknown/, { precision: 'float32' }],
    ['sbias=Infinity', /sigmoid bias/, { sigmoidBias: 'auto' }],
    ['sbias=1e9', /sigmoid bias: 1000000000 is outside/, { sigmoidBias: 100 }],
    ['qkn=maybe', /qkn/, { qkNorm: false }],
    ['lstep=999', /guided path step: 999 is outside/, { step: STEPS.length }],
    ['lstep=-1', /guided path step/, { step: 0 }],
    ['lexp=%3Cscript%3E', /experiment “<script>” is unknown/, { exp: 'none' }],
    ['mmode=sideways', /mask mode/, { maskMode: 'before' }],
    // Combinations the core refuses: corrected before the core sees them.
    ['norm=linear&posenc=alibi', /linear attention never forms/, { normalizer: 'linear', position: 'none' }],
    ['norm=relu&shift=0', /max shift: only softmax and softmax1/, { normalizer: 'relu', maxShift: true }],
    ['prec=float16&norm=sigmoid', /float16 is emulated for plain softmax only/, { precision: 'float32' }],
    ['src=random&dk=5&posenc=rope', /d_k = 5 is odd/, { position: 'none' }],
  ];
  for (const [q, notice, want] of hostile) {
    it(`corrects ${q}`, () => {
      const d = decodeHash(`#v=1&view=lesson&${q}`);
      expect(d.notices.join(' | ')).toMatch(notice);
      expect(d.state.lesson).toMatchObject(want);
      // The corrected state is itself clean.
      expect(decodeHash(encodeState(d.state)).notices).toEqual([]);
    });
  }

  it('every guided path step is a clean state', () => {
    for (const s of STEPS) clean(s.link);
  });
});

describe('the variant reaches the Heads views’ compute service', () => {
  it('sigmoid weights in the Heads view are the core’s sigmoid weights, not softmax', () => {
    const std = computeAttention(core, clean({}));
    const sig = computeAttention(core, clean({ norm: 'sigmoid' }));
    expect(sig.check).toBeNull(); // the Check covers the standard computation only
    let d = 0;
    for (let i = 0; i < std.weights.length; i++) d = Math.max(d, Math.abs(std.weights[i] - sig.weights[i]));
    expect(d).toBeGreaterThan(0.1);
    const c = compare(core, clean({ norm: 'sigmoid' }).model, clean({ norm: 'sigmoid' }).lesson, 0);
    const T = c.t;
    for (let i = 0; i < T * T; i++) expect(sig.weights[i]).toBe(c.changed.weights[i]);
  });
  it('float16 and every position / normalizer compute in the Heads view (no refusal)', () => {
    const h = computeAttention(core, clean({ prec: 'float16' }));
    expect(h.weights.every((w) => Number.isFinite(w) || Number.isNaN(w))).toBe(true);
    for (const norm of NORMALIZERS) for (const posenc of POSITIONS) {
      const n = normalizeState(withLinkFields(defaultState(), { norm, posenc })).state;
      expect(() => computeAttention(core, n), `${norm} ${posenc}`).not.toThrow();
    }
  });
  it('float64 results are drawn as Float32Arrays in the Heads view', () => {
    const r = computeAttention(core, clean({ prec: 'float64' }));
    expect(r.weights).toBeInstanceOf(Float32Array);
    const c = compare(core, clean({ prec: 'float64' }).model, clean({ prec: 'float64' }).lesson, 0);
    expect(c.changed.weights).toBeInstanceOf(Float64Array);
  });
});

interface VariantCase { name: string; opts: Record<string, unknown>; [k: string]: unknown }
const fixtures = JSON.parse(variantsText) as { cases: VariantCase[] };

describe('side by side and badges', () => {
  it('the standard computation: rows sum to 1, inside the values’ range, no NaN, cost T²', () => {
    const s = clean({});
    const c = compare(core, s.model, s.lesson, 1);
    expect(c.badges.standard.maxRowSumError).toBeLessThan(1e-6);
    expect(c.badges.standard.rangeViolation).toBeLessThanOrEqual(1e-6);
    expect(c.badges.standard.nanRows).toBe(0);
    expect(c.maxAbsDiff).toBe(0);
  });
  it('mask after: rows sum below 1 (the badge shows it); linear: cost T', () => {
    const s = clean({ mmode: 'after' });
    const c = compare(core, s.model, s.lesson, 0);
    expect(c.badges.changed.maxRowSumError).toBeGreaterThan(0.1);
    const l = clean({ norm: 'linear' });
    expect(compare(core, l.model, l.lesson, 0).badges.changed.cost).toBe('T');
  });
  it('the fixtures exist for the normalizers the cards use', () => {
    const names = new Set(fixtures.cases.map((c) => String(c.opts.normalizer ?? 'softmax')));
    for (const n of ['softmax1', 'sigmoid', 'relu', 'linear']) expect(names.has(n)).toBe(true);
  });
});

describe('code lines', () => {
  it('changing the normalizer changes its line, the shift line (relu has none) and the mask line (forbidden weights are 0, no fill)', () => {
    const s = clean({ norm: 'relu' });
    const lines = codeLines({ variant: s.lesson, scale: 'sqrt', fill: 'neg_inf' }, { variant: clean({}).lesson, scale: 'sqrt', fill: 'neg_inf' });
    expect(lines.filter((l) => l.changed).map((l) => l.id)).toEqual(['mask', 'shift', 'norm']);
  });
  it('mask after adds the after line', () => {
    const s = clean({ mmode: 'after' });
    const lines = codeLines({ variant: s.lesson, scale: 'sqrt', fill: 'neg_inf' }, { variant: clean({}).lesson, scale: 'sqrt', fill: 'neg_inf' });
    expect(lines.some((l) => l.id === 'after')).toBe(true);
  });
});

describe('experiment runs', () => {
  it('max shift: the row turns NaN at ln(largest finite) of each format', () => {
    // ln(65504) = 11.0898…, ln(FLT_MAX) = 88.7228…, ln(DBL_MAX) = 709.7827…: each format's
    // overflow point of exp (the fixture's thresholds are the same constants).
    expect(overflowThreshold(core, 'float32')).toBeCloseTo(Math.log(3.4028234663852886e38), 3);
    expect(overflowThreshold(core, 'float64')).toBeCloseTo(Math.log(Number.MAX_VALUE), 3);
    const f16 = overflowThreshold(core, 'float16');
    expect(f16).toBeGreaterThan(11.08);
    expect(f16).toBeLessThan(11.1);
  });
  it('shuffle: identical output without positions; RoPE, ALiBi and an unpermuted causal mask break it', () => {
    const s = clean({});
    const c = shuffleCard(core, s.model);
    expect(c.figures.maxDeltaNone).toBeLessThan(1e-5);
    expect(c.figures.maxDeltaRope).toBeGreaterThan(1e-3);
    expect(c.figures.maxDeltaAlibi).toBeGreaterThan(1e-3);
    expect(c.figures.maxDeltaCausal).toBeGreaterThan(1e-3);
    expect([...permutation(11, 7)].sort((a, b) => a - b)).toEqual([...Array(11).keys()]);
  });
  it('heads as a loop equals the packed call up to float32 rounding', () => {
    const s = clean({ src: 'random', heads: 4, kv: 2, dm: 16, dk: 4, seed: 7 });
    const f = loopCard(core, s.model).figures;
    expect(f.heads).toBe(4);
    expect(f.maxDelta).toBeLessThan(1e-5);
  });
  it('cannot amplify: softmax stays inside, sigmoid/relu rows exceed 1, softmax1 below 1', () => {
    const s = clean({});
    const f = amplifyCard(core, s.model).figures;
    expect(f.softmaxViolation).toBeLessThanOrEqual(1e-5);
    expect(f.softmax1MinRowSum).toBeLessThan(1);
  });
  it('zero after: rows below 1 and smaller outputs; sigmoid unchanged', () => {
    const f = afterCard(core, clean({}).model).figures;
    expect(f.minRowSumAfter).toBeLessThan(1);
    expect(f.meanNormAfter).toBeLessThan(f.meanNormBefore);
    expect(f.sigmoidMaxDelta).toBe(0);
  });
  it('√d_k: the spread of q·k grows like √d_k (8× from 1 to 64, within 25 %)', () => {
    const f = sqrtCard(core).figures;
    expect(f.std64 / f.std1).toBeGreaterThan(6);
    expect(f.std64 / f.std1).toBeLessThan(10);
    expect(f.std1024 / 32).toBeGreaterThan(0.8);
    expect(f.std1024 / 32).toBeLessThan(1.2);
  });
  it('FlashAttention: the footprint becomes linear, the traffic stays quadratic and is divided by M', () => {
    // Written from the IO model (Dao et al. 2022) for T = 8192, d = 64, one head, no mask, float32:
    // standard keeps Q, K, V, O and the T × T S and P, and moves them each once more; tiled keeps
    // Q, K, V, O and m, ℓ, reads K and V once per block of B_r = min(⌈M/4d⌉, d) query rows.
    const T = 8192, d = 64, MiB = 2 ** 20;
    const tiledTraffic = (M: number) => 4 * (T * (2 * d + 2) + Math.ceil(T / Math.min(Math.ceil(M / (4 * d)), d)) * T * 2 * d);
    const f = flashCard(core).figures;
    expect(f.footprintStandardMiB).toBeCloseTo((4 * (4 * T * d + 2 * T * T)) / MiB, 6);
    expect(f.footprintTiledMiB).toBeCloseTo((4 * (4 * T * d + 2 * T)) / MiB, 6);
    expect(f.trafficStandardMiB).toBeCloseTo((4 * (4 * T * d + 4 * T * T)) / MiB, 6);
    expect(f.trafficTiledMiB).toBeCloseTo(tiledTraffic(16384) / MiB, 6);
    expect(f.footprintTiledRatio).toBeGreaterThan(1.9);
    expect(f.footprintTiledRatio).toBeLessThan(2.1);
    expect(f.trafficTiledRatio).toBeGreaterThan(3.9);
    expect(f.trafficSmallSramRatio).toBeCloseTo(tiledTraffic(4096) / tiledTraffic(16384), 6);
  });
  it('FlashAttention card: every on-chip size offered, every T of its table, against the IO model written out here', () => {
    // Dao et al. 2022 (section 3.1 and Theorem 2), float32, one head, no mask, d = 64; M floats on
    // chip, B_r = min(⌈M/4d⌉, d) query rows per block. Standard: Q, K read, S written; S read,
    // P written; P, V read, O written. Tiled: Q, O, m, ℓ once, K and V once per query block.
    const d = 64;
    const model = (T: number, sramBytes: number) => {
      const M = Math.floor(sramBytes / 4), Br = Math.min(Math.ceil(M / (4 * d)), d);
      return {
        stdFootprint: 4 * (4 * T * d + 2 * T * T), tiledFootprint: 4 * (4 * T * d + 2 * T),
        stdMoved: 4 * (4 * T * d + 4 * T * T), tiledMoved: 4 * (T * (2 * d + 2) + Math.ceil(T / Br) * T * 2 * d), Br,
      };
    };
    for (const kib of SRAM_KIB) {
      const card = flashCard(core, kib);
      expect(card.table!.rows.map((r) => r.data.t)).toEqual([512, 1024, 2048, 4096, 8192]);
      for (const r of card.table!.rows) {
        const { Br, ...want } = model(r.data.t, kib * 1024);
        expect({ ...r.data, t: undefined, kvOuterMoved: undefined }).toEqual({ ...want, t: undefined, kvOuterMoved: undefined });
        expect(card.figures.blockRows).toBe(Br);
        // Both loop orders against the NumPy oracle's walk of the loops (tests/oracle/flash_io.py).
        const walked = (kernel: string) => oracle.flash.cases.find((c) => c.kernel === kernel && c.tq === r.data.t && !c.causal && c.dk === 64 && c.sramBytes === (kernel === 'naive' ? 0 : kib * 1024))!;
        expect(r.data.kvOuterMoved).toBe(walked('kv-outer').loaded + walked('kv-outer').stored);
        expect(r.data.tiledMoved).toBe(walked('q-outer').loaded + walked('q-outer').stored);
        expect(r.data.stdMoved).toBe(walked('naive').loaded + walked('naive').stored);
        expect(r.data.tiledFootprint).toBe(walked('kv-outer').footprint);
      }
      // Footprint linear (×2 per doubling within 1 %), traffic quadratic (≥ ×3.9).
      expect(card.figures.footprintTiledRatio).toBeGreaterThan(1.98);
      expect(card.figures.footprintTiledRatio).toBeLessThan(2.02);
      expect(card.figures.trafficTiledRatio).toBeGreaterThan(3.9);
      const text = card.text.join(' ');
      expect(card.measured).toContain(`M = ${kib} KiB`);
      expect(text).toMatch(/what became linear is the memory the computation keeps \(the footprint\); the traffic stays quadratic in T, Θ\(T²d²\/M\)/);
      expect(text).toContain('key blocks as the outer loop (the paper’s Algorithm 1, FlashAttention-1)');
      // The constants stated: 12·T²·d²/M (key blocks outer), 8·T²·d²/M (query blocks outer).
      expect(card.figures.kvOuterOverModel).toBeGreaterThan(1);
      expect(card.figures.kvOuterOverModel).toBeLessThan(1.06);
      if (kib < 64) expect(Math.abs(card.figures.qOuterOverModel - 1)).toBeLessThan(0.05);
      // Past 4d² floats (64 KiB at d = 64) the query block is capped at d rows: the card says so.
      expect(text.includes('capped at d rows')).toBe(kib > 64);
      // More memory: key blocks outer keep falling, query blocks outer stop at 64 KiB.
      expect(card.figures.kvOuterLargeMiB).toBeLessThan(0.1 * card.figures.kvOuterSmallMiB);
      expect(card.figures.qOuterLargeMiB).toBe(flashCard(core, 64).figures.trafficTiledMiB);
      // Fewer or more bytes than the standard computation, said the right way round.
      expect(text).toMatch(kib >= 64 ? /key blocks outer move [\d.]+× fewer bytes/ : /key blocks outer move [\d.]+× more bytes/);
    }
    // The audit's figures: 790 MiB at 64 KiB and 227 MiB at 228 KiB with key blocks outer (788 and
    // 224.5 without writing the initial O, l, m), 516 MiB at both with query blocks outer.
    expect(flashCard(core, 64).figures.trafficKvOuterMiB).toBeCloseTo(790.0625, 6);
    expect(flashCard(core, 228).figures.trafficKvOuterMiB).toBeCloseTo(226.5625, 6);
    expect(flashCard(core, 228).figures.trafficTiledMiB).toBeCloseTo(516.0625, 6);
    // Divided by M: 32 KiB moves half the tiled K/V bytes of 16 KiB (B_r 32 vs 16), as the card says.
    expect(flashCard(core, 32).figures.trafficSmallSramRatio).toBeCloseTo(model(8192, 16384).tiledMoved / model(8192, 32768).tiledMoved, 9);
  });
  it('the on-chip memory is in the link as lsram (default 64 stays out); other values are corrected', () => {
    const d = decodeHash('#v=1&view=lesson&lexp=flash&lsram=164');
    expect(d.notices).toEqual([]);
    expect(d.state.lesson.sram).toBe(164);
    expect(encodeState(d.state)).toMatch(/lsram=164/);
    expect(encodeState(decodeHash('#v=1&view=lesson&lexp=flash').state)).not.toMatch(/lsram/);
    const bad = decodeHash('#v=1&view=lesson&lexp=flash&lsram=100000');
    expect(bad.state.lesson.sram).toBe(64);
    expect(bad.notices.join(' ')).toMatch(/on-chip memory \(KiB\) “100000” is not one of 16, 32/);
  });
  it('every variant card runs', () => {
    const s = clean({});
    for (const id of VARIANT_CARD_IDS) {
      const c = variantCard(core, s.model, id);
      expect(Number.isFinite(c.figures.maxDeltaWeights), id).toBe(true);
    }
  });
});

interface FlashCase { kernel: string; tq: number; tk: number; dk: number; causal: boolean; sramBytes: number; loaded: number; stored: number; footprint: number }
type HeadFigures = { after: Record<string, number>; amplify: Record<string, number>; variants: Record<string, Record<string, number>> };
const oracle = JSON.parse(lessonText) as {
  heads: HeadFigures[]; lesson2: { with: number[]; without: number[]; withAbove09: number; withoutAbove09: number; scoreStd: number };
  cost: { ts: number[]; projections: number[]; quadratic: number[]; ratios: number[]; crossover: number }; flash: { cases: FlashCase[] };
};
const close = (got: Record<string, number>, want: Record<string, number>, tol: number, what: string) => {
  for (const [k, v] of Object.entries(want)) expect(Math.abs(got[k] - v), `${what} ${k}: ${got[k]} vs ${v}`).toBeLessThanOrEqual(tol);
};

describe('the Lesson view tells the truth', () => {
  it('the standard side is the lessons’ standard computation whatever the controls say (scale, fill)', () => {
    const base = compare(core, clean({}).model, clean({}).lesson, 0);
    for (const f of [{ scale: 'none' }, { scale: 10 }, { fill: 'finite' }, { fill: 'zero' }] as Record<string, unknown>[]) {
      const s = clean({ view: 'lesson', ...f });
      const c = compare(core, s.model, s.lesson, 0);
      expect(Array.from(c.standard.weights)).toEqual(Array.from(base.standard.weights));
    }
    // Deleting the division: the changed side differs, so the two can be compared.
    const none = clean({ view: 'lesson', scale: 'none' });
    expect(compare(core, none.model, none.lesson, 0).maxAbsDiff).toBeGreaterThan(0.05);
    // Line 5 is marked changed against the standard lines (scale 1/√d_k), not against the state's.
    const std = { variant: clean({}).lesson, scale: 'sqrt' as const, fill: 'neg_inf' as const };
    expect(codeLines({ variant: none.lesson, scale: 'none', fill: 'neg_inf' }, std).filter((l) => l.changed).map((l) => l.id)).toEqual(['scores']);
  });

  for (const h of [0, 1]) {
    it(`cards on lesson 1’s example measure the head drawn (head ${h + 1}), against the NumPy oracle`, () => {
      const s = clean({ view: 'lesson', head: h });
      expect(s.page.head).toBe(h);
      const want = oracle.heads[h];
      const after = afterCard(core, s.model, h);
      close(after.figures, want.after, 1e-5, 'after');
      expect(after.measured).toContain(`head ${h + 1} of 2`);
      const amp = amplifyCard(core, s.model, h);
      close(amp.figures, want.amplify, 1e-5, 'amplify');
      expect(amp.measured).toContain('scale 1/√d_k');
      for (const id of VARIANT_CARD_IDS) {
        const c = variantCard(core, s.model, id, h);
        const { entropyChanged, ...rest } = want.variants[id];
        close(c.figures, ['softmax1', 'sigmoid', 'relu'].includes(id) ? rest : { ...rest, entropyChanged }, 1e-5, id);
        expect(c.measured).toContain(`head ${h + 1} of 2`);
        // The badges above show the same head: with the card's variant set, the same figures.
        const v = normalizeState(withLinkFields(defaultState(), { view: 'lesson', head: h, lexp: id, ...(id === 'rope' ? { posenc: 'rope' } : id === 'alibi' ? { posenc: 'alibi' } : id === 'qknorm' ? { qkn: true } : { norm: id }) })).state;
        const cmp = compare(core, v.model, v.lesson, v.page.head);
        expect(cmp.badges.changed.maxRowSumError).toBeCloseTo(c.figures.maxRowSumError, 6);
        expect(cmp.maxAbsDiff).toBeCloseTo(c.figures.maxDeltaWeights, 6);
        // Entropy only where the rows are distributions.
        const text = c.text.join(' ');
        expect(text.includes('mean row entropy'), id).toBe(!['softmax1', 'sigmoid', 'relu'].includes(id));
      }
    });
  }

  it('every card opens with one plain sentence and says what it measured', () => {
    const s = clean({});
    for (const id of EXPERIMENT_IDS) {
      const c = runCard(core, id, s.model, 100, 'float32', 64, 0);
      expect(c.lead, id).toMatch(/^\S.*\.$/u);
      expect(c.lead!.split(/\. /).length, id).toBe(1);
      expect(c.measured, id).toBeTruthy();
    }
    expect(runCard(core, 'shift', s.model, 100, 'float32').measured).toMatch(/precision select is line 1’s/);
    expect(runCard(core, 'amplify', clean({ scale: 'none' }).model, 100, 'float32').measured).toMatch(/no scale \(scale 1/);
  });

  it('√d_k card: lesson 2’s own W with and without the division, as NumPy runs lesson 2’s code', () => {
    const f = sqrtCard(core).figures;
    oracle.lesson2.with.forEach((x, i) => expect(f[`lesson2With${i}`]).toBeCloseTo(x, 5));
    oracle.lesson2.without.forEach((x, i) => expect(f[`lesson2Without${i}`]).toBeCloseTo(x, 5));
    expect(f.lesson2WithAbove09).toBe(oracle.lesson2.withAbove09);
    expect(f.lesson2WithoutAbove09).toBe(oracle.lesson2.withoutAbove09);
    expect(f.lesson2ScoreStd).toBeCloseTo(oracle.lesson2.scoreStd, 4);
  });

  it('cost card: lesson 2’s loop counted per doubling, as the oracle counts it', () => {
    const c = costCard();
    expect(c.table!.rows.map((r) => r.data.t)).toEqual(oracle.cost.ts);
    c.table!.rows.forEach((r, i) => {
      expect(r.data.projections).toBe(oracle.cost.projections[i]);
      expect(r.data.quadratic).toBe(oracle.cost.quadratic[i]);
    });
    oracle.cost.ratios.forEach((x, i) => expect(c.figures[`ratio${oracle.cost.ts[i + 1]}`]).toBeCloseTo(x, 12));
    expect(c.figures.crossover).toBe(oracle.cost.crossover);
    expect(c.text.join(' ')).toContain('×2.50, ×2.80, ×3.14 from T = 256 to 2048');
  });

  it('guided path: each Lesson step names its own line; rows count from 0', () => {
    const lines = STEPS.map((s) => s.line ?? null);
    expect(lines[6]).toBe('shift');
    expect(lines[7]).toBe('mask');
    expect(lines[8]).toBe('scores');
    for (const s of STEPS) {
      expect(s.text, s.title).not.toMatch(/\brow 1\b/);
      if (s.line) expect(s.link.view).toBe('lesson');
    }
    expect(STEPS[2].text).toMatch(/row 0 has no key left/);
    // Step 7 talks about the shift being off: its state has it off.
    expect(clean(STEPS[6].link).lesson.maxShift).toBe(false);
  });
});
