// The Train tab's run/session object (web/src/train/session.ts) against fake trainer clients: no
// Worker, no DOM. It checks what the session sends and what it says: play and pause (and a play
// asked for while loading), the stop step, divergence (the notice, going on after it), a refused
// config, and Compare (a second client on the same data seed that follows play/pause).
import { describe, it, expect } from 'vitest';
import { TrainSession, type TrainClientLike } from '../../web/src/train/session';
import { defaultTrainState, type TrainState } from '../../web/src/train/config';
import type { HeadScores, Snapshot, TrainMessage, TrainRequest } from '../../web/src/train/protocol';
import { headName, nonFiniteWhat, num } from '../../web/src/train/numbers';
import { shelfAndDrop } from '../../web/src/train/history';

class FakeClient implements TrainClientLike {
  sent: TrainRequest[] = [];
  started: Record<string, unknown>[] = [];
  workers: (number | undefined)[] = [];
  stopped = false;
  constructor(readonly emit: (m: TrainMessage) => void) {}
  start(config: Record<string, unknown>, _evalEvery?: number, _snapEvery?: number, workers?: number): void {
    this.started.push(config);
    this.workers.push(workers);
  }
  send(m: TrainRequest): void {
    this.sent.push(m);
  }
  weights(): Promise<null> {
    return Promise.resolve(null);
  }
  stop(): void {
    this.stopped = true;
  }
  kinds(): string[] {
    return this.sent.map((m) => m.kind);
  }
}

const L = 2, H = 2, T = 4;
function scores(step: number): HeadScores {
  const z = () => new Float32Array(L * H);
  return { step, previousToken: z(), induction: z(), duplicateToken: z(), ablationLoss: z(), kComposition: new Float32Array(H * H), loss: 3 };
}
function snapshot(step: number): Snapshot {
  return { scores: scores(step), attention: new Float32Array(L * H * T * T), scoreGrad: new Float64Array(L * H), wqGradNorm: new Float64Array(L) };
}
function ready(lr = 0.001): TrainMessage {
  return { kind: 'ready', step: 0, probe: new Int32Array(T), probeMask: new Uint8Array(T), snapshot: snapshot(0), evalLoss: 3.4, evalAccuracy: 0.03, config: { layers: L, heads: H, vocab: 32, seqLen: T, lr }, startMs: 12 };
}
function progress(firstStep: number, n: number, loss = 2.5): TrainMessage {
  return {
    kind: 'progress', firstStep, losses: new Float32Array(n).fill(loss), gradNorms: new Float32Array(n).fill(1),
    evals: [{ step: firstStep + n - 1, loss, accuracy: 0.2 }], scores: [], snapshot: null, step: firstStep + n - 1, trainMs: 10, wallMs: 20,
  };
}

function setup(over: Partial<TrainState> = {}) {
  let t: TrainState = { ...defaultTrainState(), lr: 0.001, ...over };
  const clients: FakeClient[] = [];
  const runs: string[] = [];
  const s = new TrainSession({
    newClient: (on) => {
      const c = new FakeClient(on);
      clients.push(c);
      return c;
    },
    settings: () => t,
    hooks: { runChanged: (r) => runs.push(r) },
    now: () => 0,
  });
  s.apply(t);
  return { s, clients, runs, main: clients[0], set: (p: Partial<TrainState>) => { t = { ...t, ...p }; s.apply(t); } };
}

describe('TrainSession', () => {
  it('play asked for while loading starts once the trainer is ready; pause sends pause and waits for the stop', () => {
    const { s, main } = setup();
    expect(s.run).toBe('loading');
    expect(main.started).toHaveLength(1);
    s.play();
    expect(main.kinds()).not.toContain('run');
    main.emit(ready());
    expect(s.run).toBe('running');
    expect(s.statusText).toMatch(/^Training from step 0/); // not "Ready … Press Play" while training
    expect(main.sent.find((m) => m.kind === 'run')).toMatchObject({ steps: null });
    main.emit(progress(1, 10));
    expect(s.step).toBe(10);
    expect(s.history.steps).toBe(10);
    s.togglePlay();
    expect(main.kinds().at(-1)).toBe('pause');
    expect(s.run).toBe('running'); // until the Worker says it stopped
    main.emit({ kind: 'stopped', reason: 'paused', step: 10 });
    expect(s.run).toBe('stopped');
    expect(s.statusText).toMatch(/Paused at step 10/);
    // Step 1 runs exactly one step
    s.runSteps(1);
    expect(main.sent.at(-1)).toMatchObject({ kind: 'run', steps: 1 });
  });

  it('Workers: the count goes to the trainer, a change is sent without a restart, the comparison run keeps one', () => {
    const { s, main, clients, set } = setup({ workers: 2, compare: 'noscale' });
    expect(main.workers).toEqual([2]);
    expect(clients[1].workers).toEqual([undefined]); // the comparison: the client's default, 1
    main.emit({ ...ready(), workers: 2 } as TrainMessage);
    expect(s.workers).toBe(2);
    set({ workers: 4 });
    expect(main.started).toHaveLength(1); // same bits for any count: no restart
    expect(main.sent.at(-1)).toEqual({ kind: 'workers', workers: 4 });
    expect(clients[1].sent.some((m) => m.kind === 'workers')).toBe(false);
    main.emit({ kind: 'workers', workers: 1, note: 'Training runs on 1 Worker: no nested Workers.' });
    expect(s.workers).toBe(1);
    expect(s.statusText).toMatch(/runs on 1 Worker/);
  });

  it('a stale chunk (not continuing the run) is dropped', () => {
    const { s, main } = setup();
    main.emit(ready());
    s.play();
    main.emit(progress(1, 5));
    main.emit(progress(3, 5));
    expect(s.history.steps).toBe(5);
  });

  it('Play without a stop step ends when the held-out loss has plateaued, and says so; Play goes on from there', () => {
    const { s, main } = setup();
    main.emit(ready());
    s.play();
    // The held-out loss falls for 500 steps, then stays flat: chunks of 50 steps, one evaluation each.
    let first = 1;
    const chunk = (loss: number, accuracy = 0.2) => {
      const m = progress(first, 50, loss) as Extract<TrainMessage, { kind: 'progress' }>;
      m.evals[0].accuracy = accuracy;
      main.emit(m);
      first += 50;
    };
    while (first < 500) chunk(3 - (first / 500) * 2);
    while (first <= 1950) chunk(1);
    expect(main.kinds().at(-1)).toBe('run'); // step 1,950: not yet two windows
    chunk(1);
    expect(s.step).toBe(2000);
    expect(main.kinds().at(-1)).toBe('pause');
    main.emit({ kind: 'stopped', reason: 'paused', step: 2000 });
    expect(s.run).toBe('stopped');
    expect(s.statusText).toBe('Stopped at step 2000: the held-out loss has plateaued: its best over the last 1,000 steps, 1.000, is not 1% below its best before them, 1.000, without induction heads forming. Press Play to go on, or set “Stop at step” for a longer run.');
    // Play goes on; the next plateau is measured from step 2,000.
    s.play();
    expect(s.run).toBe('running');
    const sent = main.sent.length;
    for (let k = 0; k < 30; k++) chunk(1);
    expect(main.sent.length).toBe(sent);
    // Step 10 runs and a run with a stop step are never cut short by a plateau.
    const u = setup({ until: 100000 });
    u.main.emit(ready());
    u.s.play();
    first = 1;
    const flat = () => {
      u.main.emit(progress(first, 50, 1));
      first += 50;
    };
    for (let k = 0; k < 60; k++) flat();
    expect(u.main.kinds()).not.toContain('pause');
  });

  it('the phase (“induction heads have formed”) is on the page, not only announced', () => {
    const { s, main } = setup();
    main.emit(ready());
    s.play();
    main.emit(progress(1, 10));
    expect(s.phaseText).toBe('');
    const m = progress(11, 10) as Extract<TrainMessage, { kind: 'progress' }>;
    m.evals[0].accuracy = 0.95;
    main.emit(m);
    expect(s.phaseText).toBe('Step 20: Accuracy crossed 0.9: induction heads have formed.');
  });

  it('the stop step: play at it is refused with a reason, nothing is sent', () => {
    const { s, main } = setup({ until: 20 });
    main.emit(ready());
    s.play();
    main.emit(progress(1, 20));
    main.emit({ kind: 'stopped', reason: 'until', step: 20 });
    const before = main.sent.length;
    s.play();
    expect(main.sent.length).toBe(before);
    expect(s.run).toBe('stopped');
    expect(s.statusText).toMatch(/stop step/);
  });

  it('divergence: a notice with Reset, the last good step kept; Play goes on and clears it', () => {
    const { s, main } = setup();
    main.emit(ready());
    s.play();
    main.emit(progress(1, 7));
    main.emit({ kind: 'stopped', reason: 'diverged', step: 7, message: 'Step 8: the gradient norm became non-finite.' });
    expect(s.run).toBe('diverged');
    expect(s.step).toBe(7);
    expect(s.notice?.offerReset).toBe(true);
    expect(s.notice?.text).toMatch(/gradient norm/);
    expect(s.statusText).toMatch(/^Stopped at step 7: the next step was not finite/);
    s.play();
    expect(s.notice).toBeNull();
    expect(s.run).toBe('running');
  });

  it('a refused config: state refused, a notice naming the field, Play does nothing', () => {
    const { s, main } = setup();
    main.emit({ kind: 'refused', message: 'too big', field: 'dModel' });
    expect(s.run).toBe('refused');
    expect(s.notice?.text).toMatch(/field: dModel/);
    const before = main.sent.length;
    s.play();
    expect(main.sent.length).toBe(before);
  });

  it('Compare: a second client on the same data seed with the one setting changed, following play and pause', () => {
    const { s, clients, main } = setup({ compare: 'noscale', seed: 3 });
    expect(clients).toHaveLength(2);
    const cmp = clients[1];
    expect(main.started[0].scale).not.toEqual(cmp.started[0].scale);
    expect(cmp.started[0].dataSeed).toBe(3);
    cmp.emit(ready());
    main.emit(ready());
    s.play();
    expect(cmp.kinds()).toContain('run');
    cmp.emit(progress(1, 5, 2.0));
    expect(s.cmp?.history.steps).toBe(5);
    s.pause();
    expect(cmp.kinds().at(-1)).toBe('pause');
    expect(main.kinds().at(-1)).toBe('pause');
  });

  it('an architecture change restarts (a new history, the trainer started again); a rate change does not', () => {
    const { s, main, set } = setup();
    main.emit(ready());
    s.play();
    main.emit(progress(1, 5));
    const h = s.history;
    set({ lr: 0.002 });
    expect(s.history).toBe(h);
    expect(main.sent.at(-1)).toEqual({ kind: 'lr', lr: 0.002 });
    set({ layers: 1 });
    expect(s.history).not.toBe(h);
    expect(main.started).toHaveLength(2);
    expect(s.run).toBe('loading');
    expect(s.wantPlay).toBe(true);
  });

  it('ablation waits for a pause', () => {
    const { s, main } = setup();
    main.emit(ready());
    s.play();
    s.toggleAblation(0, 1);
    expect(main.kinds()).not.toContain('ablate');
    main.emit({ kind: 'stopped', reason: 'paused', step: 0 });
    s.toggleAblation(0, 1);
    expect(main.sent.at(-1)).toEqual({ kind: 'ablate', layer: 0, head: 1, on: true });
  });
});

describe('Train numbers', () => {
  it('prints losses of any size readably, names heads from 1, says what became non-finite', () => {
    expect(num(2.7e26)).toBe('2.70·10²⁶');
    expect(num(590000)).toBe('5.90·10⁵');
    expect(num(2.345678)).toBe('2.346');
    expect(num(-0.5)).toBe('−0.500');
    expect(num(Infinity)).toBe('∞');
    expect(headName(0, 1)).toBe('L1 H2');
    expect(nonFiniteWhat(2.7e26, Infinity)).toBe('the gradient norm');
    expect(nonFiniteWhat(NaN, NaN)).toBe('the loss and the gradient norm');
  });

  it('no shelf is claimed for a curve that only falls', () => {
    const step = Array.from({ length: 11 }, (_, i) => i * 5);
    const falling = step.map((_, i) => 5.9e5 * 0.8 ** i);
    expect(shelfAndDrop(step, falling)).toBeNull();
  });
});
