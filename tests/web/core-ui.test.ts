// The page's own paths (web/src/attention/compute.ts, the Timing lab's memory figures) run against the
// real wasm core in Node and are checked against the NumPy oracle's fixtures, not against the page:
// the mask the page draws (tests/fixtures/masks.json), the NaN rows it counts, the memory it
// predicts (the core's own refusal threshold), the lesson-2 preset's weights
// (tests/fixtures/numpy_rng.json) and the Check readout.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnCore } from '../../web/src/wasm/attn-core';
import { loadWasmCore } from './wasm-core';
import { computeAttention, checkAttention, exampleOf } from '../../web/src/attention/compute';
import { coreBytes, checkBudget, memoryTable } from '../../web/src/measure/model';
import { defaultState, withLinkFields, normalizeState, type State } from '../../web/src/app/state';
import { PRESETS, findPreset, presetState } from '../../web/src/app/presets';
import masksText from '../fixtures/masks.json?raw';
import rngText from '../fixtures/numpy_rng.json?raw';


let core: AttnCore;
beforeAll(async () => {
  core = await loadWasmCore();
});

interface MaskCase { name: string; tq: number; tk: number; causal: boolean; window: number; keyPadding: number[] | null; mask: number[] | null; allowed: string }
const maskCases = (JSON.parse(masksText) as { cases: MaskCase[] }).cases;

const state = (fields: Record<string, unknown>): State => {
  const n = normalizeState(withLinkFields(defaultState(), fields));
  expect(n.notices).toEqual([]);
  return n.state;
};

describe('the page draws the core’s mask (NumPy oracle masks)', () => {
  // The page's masks are square, from causal, window (at most T) and padding: those fixture cases.
  const square = maskCases.filter((c) => c.tq === c.tk && c.mask === null && c.tq <= 256 && c.window <= c.tq);
  it('there are such cases', () => expect(square.length).toBeGreaterThan(3));
  for (const c of square) {
    it(c.name, () => {
      const tokens = Array.from({ length: c.tq }, (_, i) => `t${i}`);
      // keyPadding in the fixture: 1 = real token; the state lists padded positions.
      const pad = c.keyPadding ? c.keyPadding.flatMap((real, j) => (real === 0 ? [j] : [])) : [];
      const r = computeAttention(core, state({ src: 'random', tokens, heads: 1, kv: 1, causal: c.causal, win: c.window, pad, fill: 'zero' }));
      expect(Array.from(r.allowed).join('')).toBe(c.allowed);
    });
  }
});

describe('NaN rows come from the core', () => {
  it('all padding with −∞ fill: every row of every head is NaN, and the count says so', () => {
    const r = computeAttention(core, presetState(findPreset('pad-neginf')!));
    const counted = Array.from({ length: r.heads }, (_, h) => {
      let n = 0;
      for (let i = 0; i < r.t; i++) if (Number.isNaN(r.weights[(h * r.t + i) * r.t])) n++;
      return n;
    });
    expect(r.nanRowsPerHead).toEqual(counted);
    expect(r.nanRowsPerHead).toEqual([4]);
  });
  it('the −1e9 fill has none', () => {
    expect(computeAttention(core, presetState(findPreset('pad-finite')!)).nanRowsPerHead).toEqual([0]);
  });
});

describe('the Mask view’s row sums are the core’s', () => {
  // Summed here in float64 over the weights the result carries: 1 per row, 0 for a zero-fill row,
  // NaN for a NaN row, whichever kernel pass produced them.
  for (const id of ['induction', 'pad-neginf', 'pad-finite']) {
    it(`${id}: rowSums (H, T) = Σ_j w_ij of the weights`, () => {
      const r = computeAttention(core, presetState(findPreset(id)!));
      expect(r.rowSums).not.toBeNull();
      expect(r.rowSums!.length).toBe(r.heads * r.t);
      for (let row = 0; row < r.heads * r.t; row++) {
        let sum = 0;
        for (let j = 0; j < r.t; j++) sum += r.weights[row * r.t + j];
        if (Number.isNaN(sum)) expect(r.rowSums![row]).toBeNaN();
        else expect(Math.abs(r.rowSums![row] - sum)).toBeLessThan(1e-5);
      }
    });
  }
});

describe('Timing lab memory: the core’s estimate is the core’s cap', () => {
  const cases = [
    { heads: 2, dk: 16, dModel: 64, mode: 'qkv' as const, t: 128 },
    { heads: 1, dk: 64, dModel: 512, mode: 'qkv' as const, t: 256 },
  ];
  for (const p of cases) {
    for (const kernel of ['naive', 'tiled'] as const) {
      it(`${kernel}, H=${p.heads}, T=${p.t}: a call with exactly that cap runs, one byte less is refused`, () => {
        const bytes = coreBytes(core, p, p.t, kernel);
        const n = p.heads * p.t * p.dk;
        const q = new Float32Array(n).fill(0.1), k = new Float32Array(n).fill(0.2), v = new Float32Array(n).fill(0.3);
        const opts = { heads: p.heads, tq: p.t, tk: p.t, dk: p.dk, dv: p.dk, kernel };
        expect(() => core.attention(q, k, v, { ...opts, memoryCap: bytes })).not.toThrow();
        expect(() => core.attention(q, k, v, { ...opts, memoryCap: bytes - 1 })).toThrow(expect.objectContaining({ field: 'memory' }));
      });
    }
  }
  it('8 heads at T = 4096: the naive point is skipped before calling, the tiled one is not', () => {
    const p = { heads: 8, dk: 64, dModel: 512, mode: 'qkv' as const };
    const cap = core.limits.memoryCap;
    expect(checkBudget(coreBytes(core, p, 4096, 'naive'), cap, 4096, null)).toMatchObject({ kind: 'memory', t: 4096 });
    expect(checkBudget(coreBytes(core, p, 4096, 'tiled'), cap, 4096, null)).toBeNull();
  });
  it('the memory table the view shows is the core’s', () => {
    const m = memoryTable(core, { heads: 1, dk: 64, dModel: 512, mode: 'proj', ts: [256, 512] });
    expect(m.cap).toBe(core.limits.memoryCap);
    expect(m.tiledScratch).toBe(core.tiledScratchBytes(64));
    expect(m.rows[1].naive).toBe(core.estimateMultiHeadBytes({ t: 512, dModel: 512, heads: 1, dk: 64, dv: 64 }, 'naive'));
  });
});

describe('the lesson-2 preset is NumPy’s default_rng(0) draw, bit for bit', () => {
  const l2 = (JSON.parse(rngText) as { lesson2: Record<string, string | string[]> }).lesson2;
  it('X, W_q, W_k, W_v equal NumPy’s numbers rounded to float32', () => {
    const ex = exampleOf(core, presetState(findPreset('lesson2')!));
    expect([ex.t, ex.dModel, ex.dk]).toEqual([Number(l2.t), Number(l2.dModel), Number(l2.dk)]);
    for (const name of ['x', 'wq', 'wk', 'wv'] as const) {
      const want = (l2[name] as string[]).map((v) => Math.fround(Number(v)));
      expect(Array.from(ex[name]), name).toEqual(want);
    }
  });
  it('its weights are the printed matrix (NumPy float64 within the fixture’s print margin)', () => {
    const r = computeAttention(core, presetState(findPreset('lesson2')!));
    const want = (l2.weights as string[]).map(Number);
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(r.weights[i] - want[i]));
    console.log(`lesson2 preset: max |W − NumPy W| = ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(Number(l2.printMargin));
  });
});

describe('the Check readout', () => {
  // The Lesson view's cards draw no Check (and may set a variant, which the Check does not cover).
  const heatmapPresets = PRESETS.filter((p) => !['timing', 'lesson'].includes(presetState(p).page.view));
  it('every heatmap preset is checked with each computation and passes (figures reported)', () => {
    const lines: string[] = [];
    for (const p of heatmapPresets) {
      const r = computeAttention(core, presetState(p));
      expect(r.check, p.id).not.toBeNull();
      const c = r.check!;
      lines.push(`${p.id}: f32 vs f64 ${c.f32VsF64.maxAbs.toExponential(2)} (tol ${c.f32VsF64.tolerance.toExponential(2)}), tiled vs naive ${c.tiledVsNaive.maxAbs.toExponential(2)} (tol ${c.tiledVsNaive.tolerance.toExponential(2)}), simd ${c.simd}`);
      expect(c.f32VsF64.maxAbs, p.id).toBeLessThanOrEqual(c.f32VsF64.tolerance);
      expect(c.tiledVsNaive.maxAbs, p.id).toBeLessThanOrEqual(c.tiledVsNaive.tolerance);
      expect(c.pass, p.id).toBe(true);
    }
    console.log('Check per preset:\n  ' + lines.join('\n  '));
  });
  it('a large state is not checked with each computation; on request it is', () => {
    const big = state({ src: 'random', tokens: Array.from({ length: 256 }, (_, i) => `w${i}`), heads: 8, kv: 8, dm: 64, dk: 64 });
    expect(computeAttention(core, big).check).toBeNull();
    const c = checkAttention(core, big);
    expect(c.t).toBe(256);
    expect(c.f32VsF64.maxAbs).toBeLessThanOrEqual(c.f32VsF64.tolerance);
  });
});
