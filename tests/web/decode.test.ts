// The Decode tab's pure parts: the copying prompt cut from an induction sequence, FLOPs per
// step, the cache-bytes formula, MHA/GQA/MQA variants, the total-time integral, the settings'
// normalisation and their URL round trip.
import { describe, it, expect } from 'vitest';
import { copyPrompt, expectedAt, stepFlops, cacheBytesFormula, kvVariants, totalMs, growthLawHolds, timingRows, exportCsv } from '../../web/src/decode/model';
import { decodeHash, encodeState, defaultState, normalizeState } from '../../web/src/app/state';
import { stats } from '../../web/src/measure/model';

describe('copyPrompt', () => {
  // [noise(4), s(6), s(6)]: the mask marks the second copy from its 2nd token (positions 11…15).
  const s = [20, 21, 22, 23, 24, 25];
  const tokens = [1, 2, 3, 4, ...s, ...s];
  const mask = tokens.map((_, i) => (i >= 11 ? 1 : 0));
  it('finds noise, both copies and keeps `keep` tokens of the second copy', () => {
    const p = copyPrompt(tokens, mask, 2)!;
    expect(p.firstCopy).toBe(4);
    expect(p.secondCopy).toBe(10);
    expect(p.sLen).toBe(6);
    expect(p.promptLen).toBe(12);
    expect(tokens.slice(0, p.promptLen)).toEqual([1, 2, 3, 4, ...s, 20, 21]);
    expect(expectedAt(p, 12)).toBe(22);
    expect(expectedAt(p, 9)).toBeNull();
  });
  it('clamps keep to 1 … len(s) − 1 and refuses a mask without targets', () => {
    expect(copyPrompt(tokens, mask, 99)!.promptLen).toBe(15);
    expect(copyPrompt(tokens, mask, 0)!.promptLen).toBe(11);
    expect(copyPrompt(tokens, tokens.map(() => 0))).toBeNull();
  });
});

describe('FLOPs and bytes', () => {
  const shape = { layers: 2, heads: 8, kvHeads: 8, dModel: 256, vocab: 64, seqLen: 4096 };
  it('cached grows linearly in t, recompute quadratically', () => {
    const a = stepFlops(shape, 1024), b = stepFlops(shape, 2048);
    // attention part: 4·H·t·d_h per layer; doubling t adds exactly that again.
    expect(b.cached - a.cached).toBe(2 * 4 * 8 * 1024 * 32);
    // recompute at t equals the sum of the cached steps 1…t minus the t − 1 extra logits.
    let sum = 0;
    for (let t = 1; t <= 64; t++) sum += stepFlops(shape, t).cached;
    expect(stepFlops(shape, 64).recompute).toBe(sum - 63 * 2 * 256 * 64);
    expect(a.wasted).toBe(a.recompute - a.cached);
  });
  it('cache bytes = 2 · L · H_kv · T · d_head · 4', () => {
    expect(cacheBytesFormula(shape, 8, 4096)).toBe(2 * 2 * 8 * 4096 * 32 * 4);
    expect(cacheBytesFormula(shape, 1, 4096)).toBe(2 * 2 * 1 * 4096 * 32 * 4);
  });
  it('MHA, GQA and MQA of 8 heads; of 2 heads no GQA', () => {
    expect(kvVariants(8)).toEqual([{ name: 'MHA', kvHeads: 8 }, { name: 'GQA', kvHeads: 2 }, { name: 'MQA', kvHeads: 1 }]);
    expect(kvVariants(2).map((v) => v.name)).toEqual(['MHA', 'MQA']);
  });
  it('total time: the sum of c·t^p over t = 1…N, positive even for a noisy p ≤ −1', () => {
    // p = 1, c = 1e-3 ms: Σ t = N(N+1)/2
    const fit = { exponent: 1, intercept: Math.log(1e-3), ts: [1, 2] };
    expect(totalMs(fit, 1000)).toBeCloseTo((1e-3 * 1000 * 1001) / 2, 6);
    expect(growthLawHolds(fit)).toBe(true);
    // p = −1.12 (measured once on a noisy run): the integral c·N^(p+1)/(p+1) would be negative.
    const noisy = { exponent: -1.12, intercept: Math.log(2), ts: [1, 2] };
    let sum = 0;
    for (let t = 1; t <= 4096; t++) sum += 2 * t ** -1.12;
    expect(totalMs(noisy, 4096)).toBeGreaterThan(0);
    expect(totalMs(noisy, 4096)).toBeCloseTo(sum, 9);
    expect(growthLawHolds(noisy)).toBe(false);
  });
  it('timing rows and CSV pair the modes per T', () => {
    const pt = (t: number, mode: 'cached' | 'recompute', ms: number) => ({ t, mode, samples: [ms], stats: stats([ms]), heapBytes: 0 });
    const rows = timingRows([pt(512, 'recompute', 9), pt(256, 'cached', 1), pt(256, 'recompute', 3)]);
    expect(rows).toEqual([{ T: 256, cachedMs: 1, recomputeMs: 3 }, { T: 512, cachedMs: null, recomputeMs: 9 }]);
    const csv = exportCsv({ config: {}, steps: [{ t: 0, token: 5, expected: null, predicted: 6, source: 'prompt' }], timing: rows, exponents: { cached: null, recompute: null }, cacheBytes: {} });
    expect(csv.split('\n')[1]).toBe('step,0,5,,6,prompt,,');
    expect(csv.split('\n')[2]).toBe('timing,256,,,,,1,3');
  });
});

describe('decode settings (state.decode rows)', () => {
  it('defaults', () => {
    expect(defaultState().decode).toEqual({ seq: 0, keep: 2, step: 0, cache: true, tStart: 256, tEnd: 4096 });
    expect(normalizeState(defaultState()).notices).toEqual([]);
  });
  it('bad values are corrected with a notice', () => {
    const r = normalizeState({ ...defaultState(), decode: { seq: -3, keep: 99, step: 1.5, cache: 'x' as unknown as boolean, tStart: 300, tEnd: 64 } });
    expect(r.state.decode).toEqual({ seq: 0, keep: 8, step: 2, cache: true, tStart: 256, tEnd: 512 });
    expect(r.notices.filter((n) => n.startsWith('decode:')).length).toBeGreaterThanOrEqual(6);
  });
  it('round-trips through the URL and corrects a hostile link', () => {
    const s = defaultState();
    s.page.view = 'decode';
    s.decode = { seq: 12, keep: 3, step: 17, cache: false, tStart: 128, tEnd: 2048 };
    const h = encodeState(s);
    expect(h).toContain('view=decode');
    for (const k of ['dseq=12', 'dkeep=3', 'dstep=17', 'dcache=0', 'dts=128', 'dte=2048']) expect(h).toContain(k);
    expect(decodeHash(h)).toEqual({ state: s, notices: [] });
    const bad = decodeHash('#v=1&view=decode&dkeep=0&dts=100000&dcache=maybe');
    expect(bad.state.decode.keep).toBe(1);
    expect(bad.state.decode.tStart).toBe(2048);
    expect(bad.state.decode.tEnd).toBe(4096);
    expect(bad.state.decode.cache).toBe(true);
    expect(bad.notices.length).toBeGreaterThanOrEqual(3);
  });
});
