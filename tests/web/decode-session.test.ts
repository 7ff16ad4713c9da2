// The Decode tab's run state (decode/session.ts) against a fake client: loading and training a
// model, a cancelled training, trajectories keyed by (sequence, keep), a worker error, a timing
// sweep that finishes, one cancelled and one that fails, and the export. No DOM, no Worker.
import { describe, it, expect } from 'vitest';
import { DecodeSession, currentStep, type DecodeClientLike } from '../../web/src/decode/session';
import type { DecodeMessage, Trajectory } from '../../web/src/decode/protocol';
import { stats } from '../../web/src/measure/model';

class FakeClient implements DecodeClientLike {
  calls: string[] = [];
  timingOn: ((m: DecodeMessage) => void) | null = null;
  constructor(readonly onStep: (m: DecodeMessage) => void) {}
  setModel(m: unknown) { this.calls.push(m ? 'model:train-tab' : 'model:default'); }
  trajectory(seq: number, keep: number) { this.calls.push(`trajectory:${seq}/${keep}`); }
  cancelStepper() { this.calls.push('cancel-stepper'); return true; }
  runTiming(p: { tStart: number; tEnd: number }, _b: number, on: (m: DecodeMessage) => void) { this.calls.push(`timing:${p.tStart}-${p.tEnd}`); this.timingOn = on; }
  cancelTiming() { const was = this.timingOn !== null; this.timingOn = null; this.calls.push('cancel-timing'); return was; }
}

function make() {
  let client!: FakeClient;
  const changes: string[] = [];
  const s = new DecodeSession((on) => (client = new FakeClient(on)), (w) => changes.push(w));
  return { s, client, changes };
}

const shape = { layers: 2, heads: 2, kvHeads: 2, dModel: 64, vocab: 32, seqLen: 32 };
const ready: DecodeMessage = { kind: 'model-ready', source: 'default', step: 150, accuracy: 0.97, shape, config: {} };
const traj = (seq: number): Trajectory => ({
  seq, shape, tokens: [], promptLen: 25, firstCopy: 4, secondCopy: 18, sLen: 14, recomputeTokens: [], maxAbsDiff: 0, cacheBytes: 32768, cachedMs: [], recomputeMs: [],
  steps: Array.from({ length: 32 }, (_, t) => ({ t, token: t, expected: null, predicted: 0, source: t < 25 ? 'prompt' : 'generated', weights: new Float32Array(0), k: [], v: [], prob: 1 })),
} as unknown as Trajectory);
const pt = (t: number, mode: 'cached' | 'recompute', ms: number) => ({ t, mode, samples: [ms], stats: stats([ms]), heapBytes: 0 });

describe('DecodeSession: the model', () => {
  it('trains the default model, then decodes the trajectory asked for, once per (seq, keep)', () => {
    const { s, client, changes } = make();
    s.loadModel(null);
    expect(client.calls).toEqual(['model:default']);
    expect(s.modelPending).toBe(true);
    expect(s.trainFraction).toBe(0);
    client.onStep({ kind: 'progress', phase: 'train', fraction: 0.5, text: 'Training: step 75 of 150' });
    expect(s.trainFraction).toBe(0.5);
    expect(s.modelText).toMatch(/step 75/);
    s.requestTrajectory(0, 2); // no model yet: nothing asked
    expect(client.calls).toEqual(['model:default']);
    client.onStep(ready);
    expect(s.modelPending).toBe(false);
    expect(s.trainFraction).toBeNull();
    expect(s.modelText).toMatch(/default induction model.*150 steps.*97 %/);
    s.requestTrajectory(0, 2);
    s.requestTrajectory(0, 2);
    expect(client.calls).toEqual(['model:default', 'trajectory:0/2']);
    client.onStep({ kind: 'trajectory', trajectory: traj(0) });
    expect(s.trajectoryFor(0, 2)?.seq).toBe(0);
    expect(s.trajectoryFor(1, 2)).toBeNull();
    expect(changes).toContain('step');
  });

  it('Cancel stops the training worker and leaves no model; a worker error is kept for the view', () => {
    const { s, client } = make();
    s.loadModel(null);
    s.cancelTraining();
    expect(client.calls).toEqual(['model:default', 'cancel-stepper']);
    expect(s.modelPending).toBe(false);
    expect(s.model).toBeNull();
    expect(s.modelText).toMatch(/Cancelled/);
    client.onStep({ kind: 'error', message: 'seq out of range', field: 'seq' });
    expect(s.error).toBe('seq out of range (field: seq)');
    client.onStep(ready);
    client.onStep({ kind: 'trajectory', trajectory: traj(0) });
    expect(s.error).toBeNull();
  });

  it('a newer Train-tab model marks the loaded one stale until it is loaded', () => {
    const { s, client } = make();
    s.loadModel(null);
    client.onStep(ready);
    s.markStale();
    expect(s.modelStale).toBe(true);
    s.loadModel({ config: {}, weights: {}, step: 400 });
    expect(s.modelStale).toBe(false);
    expect(s.model).toBeNull();
    expect(s.modelText).toMatch(/step 400/);
    expect(client.calls.at(-1)).toBe('model:train-tab');
  });

  it('step 0 (dstep=0) shows the end of the prompt; steps are clamped to 1 … T', () => {
    const tj = traj(0);
    expect(currentStep(tj, 0)).toBe(25);
    expect(currentStep(tj, 99)).toBe(32);
    expect(currentStep(tj, 3)).toBe(3);
    expect(currentStep(null, 3)).toBe(0);
  });
});

describe('DecodeSession: timing', () => {
  it('a sweep collects points, fits both exponents when done, and exports them', () => {
    const { s, client } = make();
    s.startTiming(64, 256);
    expect(client.calls).toEqual(['timing:64-256']);
    expect(s.timingRunning).toBe(true);
    const on = client.timingOn!;
    on({ kind: 'progress', phase: 'timing', fraction: 0.3, text: 'T = 64' });
    expect(s.timingFraction).toBe(0.3);
    for (const [t, c, r] of [[64, 0.1, 10], [128, 0.2, 40], [256, 0.4, 160]]) {
      on({ kind: 'point', point: pt(t, 'cached', c) });
      on({ kind: 'point', point: pt(t, 'recompute', r) });
    }
    on({ kind: 'memory', t: 256, rows: [{ name: 'MHA', kvHeads: 8, bytes: 1 }], heapBytes: 1000 });
    on({ kind: 'done', heapBytes: 2000 });
    expect(s.timingRunning).toBe(false);
    expect(s.timingStatus.state).toBe('done');
    expect(s.timingStatus.text).toMatch(/6 points; exponents 1\.00 with the cache, 2\.00 without/);
    const e = s.exportData(null, 'ua');
    expect(e.exponents.cached).toBeCloseTo(1, 9);
    expect(e.exponents.recompute).toBeCloseTo(2, 9);
    expect(e.timing.map((r) => r.T)).toEqual([64, 128, 256]);
    expect(e.cacheBytes.heapBytes).toBe(2000);
    expect(e.cacheBytes.T).toBe(256);
  });

  it('Cancel keeps the points; a fatal message fails the run; cancel without a run does nothing', () => {
    const { s, client } = make();
    expect(s.cancelTiming()).toBe(false);
    s.startTiming(256, 4096);
    client.timingOn!({ kind: 'point', point: pt(256, 'cached', 1) });
    expect(s.cancelTiming()).toBe(true);
    expect(s.timingStatus).toEqual({ state: 'cancelled', text: 'Cancelled; 1 point kept.' });
    expect(s.sweep!.points.length).toBe(1);
    s.startTiming(256, 4096);
    client.timingOn!({ kind: 'error', message: 'T = 4096 skipped', field: null });
    client.timingOn!({ kind: 'fatal', message: 'The timing worker failed: boom' });
    expect(s.sweep!.phase).toBe('failed');
    expect(s.sweep!.notes).toEqual(['T = 4096 skipped']);
    expect(s.timingStatus).toEqual({ state: 'failed', text: 'The timing worker failed: boom' });
  });
});
