// The Timing lab's run state (timing/session.ts) against a fake client and a fake clock: a sweep
// that finishes with its fitted exponent, skips and refusals that stop a kernel, Cancel keeping
// the points, a fatal error, progress that redraws only the status. No DOM, no Worker.
import { describe, it, expect } from 'vitest';
import { TimingSession, type TimingClientLike } from '../../web/src/timing/session';
import type { TimingMessage, TimingPoint } from '../../web/src/timing/protocol';
import { coreBytes, coreKernel, kernelsOf, memoryTable, stats, type SweepParams, type TimingKernel } from '../../web/src/measure/model';
import { decodeHash, encodeState } from '../../web/src/app/state';
import { PRESETS, presetHash } from '../../web/src/app/presets';
import { paramsOf } from '../../web/src/timing/timing-view';

class FakeClient implements TimingClientLike {
  on: ((m: TimingMessage) => void) | null = null;
  runs = 0;
  run(_p: SweepParams, _b: number, on: (m: TimingMessage) => void) { this.runs++; this.on = on; }
  cancel() { const was = this.on !== null; this.on = null; return was; }
}

const params: SweepParams = { tStart: 64, tEnd: 256, dModel: 64, dk: 64, heads: 1, kernels: ['naive', 'tiled'], causal: true, mode: 'qkv', workers: 1 };
const pt = (t: number, kernel: TimingKernel, ms: number): TimingPoint => ({ t, kernel, samples: [ms], stats: stats([ms]), batch: 1, warmup: 1, heapBytes: 1 << 20, heapGrowth: 0, estimateBytes: 1 });

function make() {
  const client = new FakeClient();
  const changes: string[] = [];
  let clock = 1000;
  const s = new TimingSession(client, (w) => changes.push(w), () => clock);
  return { s, client, changes, tick: (ms: number) => { clock += ms; } };
}

describe('TimingSession', () => {
  it('a sweep runs, fits p from the medians, and reports its wall time', () => {
    const { s, client, changes, tick } = make();
    expect(s.phase).toBe('idle');
    s.start(params, 15000);
    expect(client.runs).toBe(1);
    expect(s.phase).toBe('running');
    client.on!({ kind: 'ready', heapBytes: 1, heapStart: {}, cap: 1, tiledScratch: 1, warmupMs: 12 });
    expect(s.statusText).toMatch(/Warmed up in 12/);
    changes.length = 0;
    client.on!({ kind: 'progress', fraction: 0.5, t: 128, kernel: 'naive', text: 'naive, T = 128' });
    expect(changes).toEqual(['status']);
    expect(s.fraction).toBe(0.5);
    for (const [t, ms] of [[64, 1], [128, 4], [256, 16]] as const) {
      client.on!({ kind: 'point', point: pt(t, 'naive', ms) });
      client.on!({ kind: 'point', point: pt(t, 'tiled', ms * 2) });
    }
    tick(2500);
    client.on!({ kind: 'done', heapBytes: 5 });
    expect(s.phase).toBe('done');
    expect(s.fraction).toBe(1);
    expect(s.fits().naive!.exponent).toBeCloseTo(2, 9);
    expect(s.fits().tiled!.exponent).toBeCloseTo(2, 9);
    expect(s.statusText).toBe('Done in 2.5 s. Fitted exponent 2.00 (naive).');
    expect(s.pointsOf('tiled').map((p) => p.t)).toEqual([64, 128, 256]);
  });

  it('a skip or a refusal stops that kernel with a note; Cancel keeps the points; fatal is an error', () => {
    const { s, client } = make();
    expect(s.cancel()).toBe(false);
    s.start(params, 15000);
    client.on!({ kind: 'point', point: pt(64, 'naive', 1) });
    client.on!({ kind: 'skip', kernel: 'naive', skip: { kind: 'memory', t: 128, bytes: 1e9, cap: 5e8 } as never });
    client.on!({ kind: 'refused', kernel: 'tiled', t: 128, message: 'too big', field: 'memory' });
    expect(s.sweep!.notes.map((n) => n.kind)).toEqual(['skip', 'refused']);
    expect(s.sweep!.stops.get('naive')).toEqual({ t: 128, why: 'skipped: over the memory cap' });
    expect(s.sweep!.stops.get('tiled')).toEqual({ t: 128, why: 'refused by the core (memory)' });
    expect(s.cancel()).toBe(true);
    expect(s.phase).toBe('cancelled');
    expect(s.statusText).toBe('Cancelled. The worker was stopped; 1 completed point kept.');
    s.start(params, 15000);
    client.on!({ kind: 'fatal', message: 'The timing worker failed: boom' });
    expect(s.phase).toBe('error');
    expect(s.statusText).toBe('The timing worker failed: boom');
  });

  it('tker=linear: the link selects tiled softmax next to linear attention, and the fits are compared', () => {
    // The gallery's card opens the same comparison.
    expect(presetHash(PRESETS.find((x) => x.id === 'timing-linear')!)).toBe('#v=1&view=timing&tstart=512&tend=8192&tker=linear');
    const d = decodeHash('#v=1&view=timing&tker=linear&tstart=256&tend=1024');
    expect(d.notices).toEqual([]);
    expect(d.state.timing.kernels).toBe('linear');
    expect(encodeState(d.state)).toBe('#v=1&view=timing&tstart=256&tend=1024&tker=linear');
    const p = paramsOf(d.state);
    expect(p.kernels).toEqual(['tiled', 'linear']);
    expect(kernelsOf('both')).toEqual(['naive', 'tiled']);
    // The timed call asks the core for its linear normalizer through the prefix-sum kernel.
    expect(coreKernel('linear')).toEqual({ kernel: 'tiled', normalizer: 'linear' });
    expect(coreKernel('tiled')).toEqual({ kernel: 'tiled' });

    const { s, client, tick } = make();
    s.start(p, 15000);
    // Softmax ×4 per doubling (p = 2), linear ×2 (p = 1).
    for (const [t, ms] of [[256, 1], [512, 4], [1024, 16]] as const) client.on!({ kind: 'point', point: pt(t, 'tiled', ms) });
    expect(s.comparison()).toBeNull(); // no linear fit yet
    for (const [t, ms] of [[256, 1], [512, 2], [1024, 4]] as const) client.on!({ kind: 'point', point: pt(t, 'linear', ms) });
    tick(1500);
    client.on!({ kind: 'done', heapBytes: 5 });
    const c = s.comparison()!;
    expect(c.softmaxKernel).toBe('tiled');
    expect(c.softmax.exponent).toBeCloseTo(2, 9);
    expect(c.linear.exponent).toBeCloseTo(1, 9);
    expect(s.statusText).toBe('Done in 1.5 s. Fitted exponents: linear attention 1.00, tiled softmax 2.00.');
  });

  it('the memory rows ask the core for linear attention with its normalizer', () => {
    const calls: unknown[][] = [];
    const core = {
      estimateBytes: (o: object, k?: string) => { calls.push(['attention', o, k]); return 1; },
      estimateMultiHeadBytes: (o: object, k?: string) => { calls.push(['mha', o, k]); return 2; },
      limits: { memoryCap: 9, tile: { keys: 32 } }, tiledScratchBytes: () => 3,
    };
    expect(coreBytes(core as never, { heads: 2, dk: 8, dModel: 16, mode: 'qkv' }, 64, 'linear')).toBe(1);
    expect(calls.at(-1)).toEqual(['attention', { heads: 2, tq: 64, tk: 64, dk: 8, dv: 8, normalizer: 'linear' }, 'tiled']);
    expect(coreBytes(core as never, { heads: 2, dk: 8, dModel: 16, mode: 'proj' }, 64, 'linear')).toBe(2);
    expect(calls.at(-1)).toEqual(['mha', { t: 64, dModel: 16, heads: 2, dk: 8, dv: 8, normalizer: 'linear' }, 'tiled']);
    expect(memoryTable(core as never, { heads: 1, dk: 8, dModel: 16, mode: 'qkv', ts: [32] }).rows).toEqual([{ t: 32, naive: 1, tiled: 1, linear: 1 }]);
  });
});
