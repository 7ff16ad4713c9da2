// The Decode tab's linear-attention run state (decode/session.ts) against a fake client: training
// a linear model here, the recurrent state's check against the recompute path (same tokens or
// not), and the state-against-cache timing run (fits, bytes per T, cancel, one timing Worker at a
// time, the export). No DOM, no Worker.
import { describe, it, expect } from 'vitest';
import { DecodeSession, TIMING_SHAPE, type DecodeClientLike } from '../../web/src/decode/session';
import type { DecodeMessage, TimingParams, Trajectory } from '../../web/src/decode/protocol';
import { stateBytesFormula, cacheBytesFormula } from '../../web/src/decode/model';
import { stats } from '../../web/src/measure/model';

class FakeClient implements DecodeClientLike {
  calls: string[] = [];
  params: TimingParams | null = null;
  timingOn: ((m: DecodeMessage) => void) | null = null;
  constructor(readonly onStep: (m: DecodeMessage) => void) {}
  setModel(m: unknown, normalizer?: 'linear') { this.calls.push(m ? 'model:train-tab' : `model:default${normalizer ? `:${normalizer}` : ''}`); }
  trajectory(seq: number, keep: number) { this.calls.push(`trajectory:${seq}/${keep}`); }
  cancelStepper() { return true; }
  runTiming(p: TimingParams, _b: number, on: (m: DecodeMessage) => void) { this.calls.push(`timing:${p.tStart}-${p.tEnd}${p.linear ? ':linear' : ''}`); this.params = p; this.timingOn = on; }
  cancelTiming() { const was = this.timingOn !== null; this.timingOn = null; this.calls.push('cancel-timing'); return was; }
}

function make() {
  let client!: FakeClient;
  const changes: string[] = [];
  const s = new DecodeSession((on) => (client = new FakeClient(on)), (w) => changes.push(w));
  return { s, client, changes };
}

const shape = { layers: 2, heads: 2, kvHeads: 2, dModel: 64, vocab: 32, seqLen: 32 };
const ready = (normalizer: string): DecodeMessage => ({ kind: 'model-ready', source: 'default', step: 400, accuracy: 0.42, shape, config: { normalizer } });
const traj = (state: Trajectory['state'], recomputeTokens: number[]): Trajectory => ({
  seq: 0, shape, tokens: [], promptLen: 2, firstCopy: 0, secondCopy: 1, sLen: 1, recomputeTokens, maxAbsDiff: 0, cacheBytes: 32768, cachedMs: [], recomputeMs: [], steps: [], state,
} as unknown as Trajectory);
const pt = (t: number, mode: 'state' | 'cached', ms: number) => ({ t, mode, samples: [ms], stats: stats([ms]), heapBytes: 0 });

describe('DecodeSession: a linear-attention model', () => {
  it('trains config A with linear attention on request and says so', () => {
    const { s, client } = make();
    s.loadModel(null, 'linear');
    expect(client.calls).toEqual(['model:default:linear']);
    client.onStep(ready('linear'));
    expect(s.linear).toBe(true);
    expect(s.modelText).toMatch(/linear attention.*400 steps.*42 %/);
    s.loadModel(null);
    expect(client.calls.at(-1)).toBe('model:default');
    client.onStep(ready('softmax'));
    expect(s.linear).toBe(false);
    expect(s.modelText).toMatch(/default induction model/);
  });

  it('the state check reads the trajectory: same tokens as recompute, or how many agree', () => {
    const { s, client } = make();
    s.loadModel(null, 'linear');
    client.onStep(ready('linear'));
    expect(s.stateCheck()).toBeNull();
    s.requestTrajectory(0, 2);
    const st = { tokens: [3, 4, 5, 6], sameTokens: true, maxAbsDiff: 2.5e-6, bytes: 4352, cacheBytes: 32768, ms: [] };
    client.onStep({ kind: 'trajectory', trajectory: traj(st, [3, 4, 5, 6]) });
    expect(s.stateCheck()).toEqual({ checked: true, same: true, text: 'Same tokens as recompute: checked (4 of 4 tokens; max |Δ logits| 2.5e-6).' });
    client.onStep({ kind: 'trajectory', trajectory: traj({ ...st, sameTokens: false, tokens: [3, 4, 9, 9] }, [3, 4, 5, 6]) });
    expect(s.stateCheck()!.same).toBe(false);
    expect(s.stateCheck()!.text).toMatch(/^Not the same tokens as recompute: 2 of 4 agree/);
    client.onStep({ kind: 'trajectory', trajectory: traj(null, [3, 4]) });
    expect(s.stateCheck()).toBeNull();
  });
});

describe('DecodeSession: the state against the cache, timed', () => {
  it('runs a linear timing run, fits p ≈ 0 for the state and ≈ 1 for the cache, keeps the bytes, exports them', () => {
    const { s, client, changes } = make();
    s.startStateTiming(256, 1024);
    expect(client.calls).toEqual(['timing:256-1024:linear']);
    expect(client.params).toEqual({ tStart: 256, tEnd: 1024, ...TIMING_SHAPE, linear: true });
    expect(s.stateRunning).toBe(true);
    const on = client.timingOn!;
    on({ kind: 'progress', phase: 'timing', fraction: 0.5, text: 'T = 512, state: repeat 3' });
    expect(s.stateFraction).toBe(0.5);
    expect(changes.at(-1)).toBe('state-progress');
    const bytes = [256, 512, 1024].map((t) => ({ t, state: stateBytesFormula(TIMING_SHAPE, 8), cache: cacheBytesFormula(TIMING_SHAPE, 8, t) }));
    on({ kind: 'state-bytes', rows: bytes });
    for (const [t, st, c] of [[256, 0.05, 0.1], [512, 0.05, 0.2], [1024, 0.05, 0.4]]) {
      on({ kind: 'point', point: pt(t, 'state', st) });
      on({ kind: 'point', point: pt(t, 'cached', c) });
    }
    on({ kind: 'done', heapBytes: 1 });
    expect(s.stateRunning).toBe(false);
    expect(s.stateStatus.text).toBe('Done: 6 points; exponents 0.00 with the recurrent state, 1.00 with the K/V cache.');
    // The main sweep is untouched.
    expect(s.sweep).toBeNull();
    const e = s.exportData(null, 'ua').state!;
    expect(e.exponents.state).toBeCloseTo(0, 9);
    expect(e.exponents.cached).toBeCloseTo(1, 9);
    expect(e.rows).toEqual(bytes.map((r, i) => ({ T: r.t, stateBytes: r.state, cacheBytes: r.cache, stateMs: 0.05, cachedMs: [0.1, 0.2, 0.4][i] })));
    // d_head 32: 2 layers · 8 K/V heads · (32² + 32) · 4 B, the same at every T.
    expect(e.rows[0].stateBytes).toBe(2 * 8 * (32 * 32 + 32) * 4);
    expect(e.rows[2].cacheBytes).toBe(2 * 2 * 8 * 1024 * 32 * 4);
  });

  it('the export has a state section only when there is one (other exports keep their keys)', () => {
    const { s } = make();
    expect(Object.keys(s.exportData(null, 'ua')).sort()).toEqual(['cacheBytes', 'config', 'exponents', 'steps', 'timing']);
    s.startStateTiming(256, 512);
    expect(s.exportData(null, 'ua').state?.rows).toEqual([]);
  });

  it('cancel keeps the points; one timing Worker at a time: each run cancels the other', () => {
    const { s, client } = make();
    expect(s.cancelStateTiming()).toBe(false);
    s.startStateTiming(256, 4096);
    client.timingOn!({ kind: 'point', point: pt(256, 'state', 0.05) });
    expect(s.cancelStateTiming()).toBe(true);
    expect(s.stateStatus).toEqual({ state: 'cancelled', text: 'Cancelled; 1 point kept.' });
    s.startStateTiming(256, 4096);
    s.startTiming(256, 4096);
    expect(s.stateSweep!.phase).toBe('cancelled');
    expect(s.stateStatus.text).toMatch(/other timing run/);
    expect(s.timingRunning).toBe(true);
    s.startStateTiming(256, 4096);
    expect(s.sweep!.phase).toBe('cancelled');
    expect(s.stateRunning).toBe(true);
    // A late message for a finished run changes nothing.
    client.timingOn!({ kind: 'fatal', message: 'boom' });
    expect(s.stateStatus).toEqual({ state: 'failed', text: 'boom' });
    client.timingOn!({ kind: 'point', point: pt(512, 'state', 1) });
    expect(s.stateSweep!.points.length).toBe(0);
  });
});
