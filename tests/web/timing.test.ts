import { describe, it, expect } from 'vitest';
import { decodeHash, encodeState, defaultState, type State, withLinkFields } from '../../web/src/app/state';
import { PRESETS, presetState } from '../../web/src/app/presets';
import {
  batchSize, checkBudget, fitExponent, kernelsOf, plannedCalls, stats, sweepTs,
} from '../../web/src/measure/model';

const roundTrip = (s: State) => decodeHash(encodeState(s));

describe('timing lab: URL fields', () => {
  it('the timing defaults stay out of the link', () => {
    const d = defaultState();
    expect(encodeState(withLinkFields(d, { view: 'timing' }))).toBe('#v=1&view=timing');
    expect(decodeHash('#v=1&view=timing')).toEqual({ state: withLinkFields(d, { view: 'timing' }), notices: [] });
  });

  const variants: [string, Record<string, unknown>][] = [
    ['tstart', { tstart: 8 }],
    ['tend', { tend: 16384 }],
    ['tstart = tend', { tstart: 512, tend: 512 }],
    ['tdm', { tdm: 2048 }],
    ['tdk', { tdk: 1 }],
    ['th', { th: 16 }],
    ['tker naive', { tker: 'naive' }],
    ['tker tiled', { tker: 'tiled' }],
    ['tker linear', { tker: 'linear' }],
    ['tcausal', { tcausal: true }],
    ['tmode', { tmode: 'proj' }],
    ['tw 2', { tw: 2 }],
    ['tw 4', { tw: 4 }],
  ];
  for (const [name, patch] of variants) {
    it(`round-trips ${name}`, () => {
      const s = withLinkFields(defaultState(), { view: 'timing', ...patch });
      const enc = encodeState(s);
      expect(enc).not.toBe('#v=1&view=timing');
      expect(roundTrip(s)).toEqual({ state: s, notices: [] });
    });
  }

  it('writes readable keys', () => {
    const s: State = withLinkFields(defaultState(), { view: 'timing', tstart: 256, tend: 2048, tdm: 512, tdk: 64, th: 2, tker: 'naive', tcausal: true, tmode: 'proj' });
    expect(encodeState(s)).toBe('#v=1&view=timing&tstart=256&tend=2048&th=2&tker=naive&tcausal=1&tmode=proj');
  });

  it('the lesson preset is lesson 2’s loop: X of width 512 → d_k 64, T = 256 … 2048, causal', () => {
    const p = PRESETS.find((x) => x.id === 'timing-lesson')!;
    const s = presetState(p);
    expect([s.page.view, s.timing.input, s.timing.dModel, s.timing.dK, s.timing.heads, s.timing.firstT, s.timing.lastT, s.timing.causal]).toEqual(['timing', 'proj', 512, 64, 1, 256, 2048, true]);
    expect(PRESETS.find((x) => x.id === 'timing')!.state).toEqual({ page: { view: 'timing' } });
  });
});

describe('timing lab: hostile links are corrected', () => {
  const dec = (h: string) => decodeHash(h);
  it('non-powers of two go to the nearest power of two', () => {
    const d = dec('#v=1&view=timing&tstart=100&tend=2500');
    expect(d.state.timing.firstT).toBe(128);
    expect(d.state.timing.lastT).toBe(2048);
    expect(d.notices.join(' ')).toMatch(/first T: 100 is not a power of two/);
  });
  it('out-of-range values are clamped with notices', () => {
    const d = dec('#v=1&tstart=1&tend=1e12&tdm=0&tdk=99999&th=-3');
    expect([d.state.timing.firstT, d.state.timing.lastT, d.state.timing.dModel, d.state.timing.dK, d.state.timing.heads]).toEqual([8, 16384, 1, 1024, 1]);
    expect(d.notices.length).toBeGreaterThanOrEqual(5);
  });
  it('an end below the start becomes the start', () => {
    const d = dec('#v=1&tstart=1024&tend=64');
    expect([d.state.timing.firstT, d.state.timing.lastT]).toEqual([1024, 1024]);
    expect(d.notices.join(' ')).toMatch(/last T/);
  });
  it('a start above the default end moves the default end with it', () => {
    expect(dec('#v=1&tstart=8192').state.timing.lastT).toBe(8192);
  });
  it('NaN, Infinity, hex and fractions', () => {
    const d = dec('#v=1&tstart=NaN&tend=Infinity&tdm=0x10&tdk=2.5&th=1.4');
    expect([d.state.timing.firstT, d.state.timing.lastT, d.state.timing.dModel, d.state.timing.dK, d.state.timing.heads]).toEqual([64, 4096, 512, 3, 1]);
    expect(d.notices.some((n) => /tdk|d_k/.test(n))).toBe(true);
  });
  it('unknown kernels, inputs and causal values', () => {
    const d = dec('#v=1&tker=%3Cscript%3Ealert(1)%3C%2Fscript%3E&tmode=gpu&tcausal=maybe');
    expect([d.state.timing.kernels, d.state.timing.input, d.state.timing.causal]).toEqual(['both', 'qkv', false]);
    expect(d.notices).toHaveLength(3);
    expect(d.notices.every((n) => n.length < 200)).toBe(true);
  });
  it('workers other than 1, 2 or 4 fall back to 1 with a notice', () => {
    for (const v of ['3', '0', '-2', '8', '2.5', 'NaN', '1e9', 'two']) {
      const d = dec(`#v=1&view=timing&tw=${v}`);
      expect(d.state.timing.workers, v).toBe(1);
      expect(d.notices.length, v).toBe(1);
    }
    expect(dec('#v=1&tw=4').state.timing.workers).toBe(4);
    expect(encodeState(withLinkFields(defaultState(), { view: 'timing', tw: 2 }))).toBe('#v=1&view=timing&tw=2');
  });
  it('duplicate timing keys keep the first value', () => {
    expect(dec('#v=1&th=2&th=8').state.timing.heads).toBe(2);
  });
});

describe('timing lab: model', () => {
  it('sweeps T by doubling, inclusive', () => {
    expect(sweepTs(64, 4096)).toEqual([64, 128, 256, 512, 1024, 2048, 4096]);
    expect(sweepTs(256, 256)).toEqual([256]);
    expect(kernelsOf('both')).toEqual(['naive', 'tiled']);
    expect(kernelsOf('tiled')).toEqual(['tiled']);
  });
  it('median, min–max and IQR', () => {
    expect(stats([5, 1, 3])).toMatchObject({ median: 3, min: 1, max: 5, n: 3 });
    expect(stats([1, 2, 3, 4])).toMatchObject({ median: 2.5, q1: 1.75, q3: 3.25 });
    expect(stats([]).n).toBe(0);
  });
  it('fits the exponent of an exact power law and ignores points under the floor', () => {
    const pts = [64, 128, 256, 512, 1024].map((t) => ({ t, ms: 1e-5 * t * t }));
    const f = fitExponent([{ t: 32, ms: 0.2 }, ...pts])!;
    expect(f.exponent).toBeCloseTo(2, 10);
    expect(f.ts[0]).toBe(256); // 1e-5·256² = 0.66 ms is the first point ≥ 0.5 ms
    expect(fitExponent([{ t: 64, ms: 1 }])).toBeNull();
    expect(fitExponent(pts.map((p) => ({ t: p.t, ms: p.ms * 1e-6 })))).toBeNull();
  });
  // The memory figures come from the core: tests/web/core-ui.test.ts.
  it('skips a point over the cap, and one the ×4 rule predicts over the time budget', () => {
    expect(checkBudget(101, 100, 4096, null)).toMatchObject({ kind: 'memory', t: 4096, bytes: 101, cap: 100 });
    expect(checkBudget(100, 100, 4096, null)).toBeNull();
    // 2 s at T = 2048 → 8 s per call at 4096, 4 calls ≥ 15 s.
    expect(checkBudget(0, 100, 4096, { t: 2048, ms: 2000 }, 15_000)).toMatchObject({ kind: 'time', t: 4096 });
    expect(checkBudget(0, 100, 4096, { t: 2048, ms: 100 }, 15_000)).toBeNull();
  });
  it('plans more, batched samples for fast points', () => {
    expect(plannedCalls(1).repeats).toBeGreaterThan(plannedCalls(5000).repeats);
    expect(batchSize(0.1)).toBe(100);
    expect(batchSize(50)).toBe(1);
    expect(batchSize(0)).toBe(256);
  });
});

describe('formatMs: long durations with sensible digits', () => {
  it('seconds, minutes and hours, never "1964.82 s"', async () => {
    const { formatMs } = await import('../../web/src/measure/model');
    expect(formatMs(1964820)).toBe('32.7 min');
    expect(formatMs(45_300)).toBe('45.3 s');
    expect(formatMs(4_321)).toBe('4.32 s');
    expect(formatMs(250_000)).toBe('250 s');
    expect(formatMs(3 * 3600 * 1000)).toBe('3.0 h');
  });
});
