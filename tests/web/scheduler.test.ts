// The compute scheduler (attention/scheduler.ts) and readiness (app/readiness.ts) against a fake
// compute client and a fake page core, with fake timers: small states on the page's core once it
// is loaded, large ones and refusals' fallbacks in the Worker; results go back to the core that
// made them; the Check of a page-computed result is sent once the changes pause, only for the
// last one, and a stale answer is not shown; the page is ready only when nothing is pending.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createScheduler, CHECK_QUIET_MS, type LocalCore } from '../../web/src/attention/scheduler';
import { createReadiness, type Status } from '../../web/src/app/readiness';
import type { AttentionResult, CheckResult } from '../../web/src/attention/protocol';
import type { ComputeOutcome } from '../../web/src/attention/worker-client';
import { defaultState, withLinkFields, normalizeState, type State } from '../../web/src/app/state';

const small = (seed = 0) => normalizeState(withLinkFields(defaultState(), { src: 'random', tokens: ['a', 'b', 'c', 'd'], heads: 1, kv: 1, dm: 8, dk: 4, seed })).state;
const large = () => normalizeState(withLinkFields(defaultState(), { src: 'random', tokens: Array.from({ length: 256 }, (_, i) => `t${i}`), heads: 8, kv: 8, dm: 512, dk: 64 })).state;

function result(s: State, extra: Partial<AttentionResult> = {}): AttentionResult {
  const m = s.model;
  return { t: m.tokens.length, heads: m.heads, kvHeads: m.kvHeads, dModel: m.dModel, dk: m.dK, dv: m.dK, weights: new Float32Array(4), ...extra } as unknown as AttentionResult;
}

function setup(start: State) {
  let state = start;
  let shown: { state: State; result: AttentionResult } | null = null;
  const log: string[] = [];
  const outcomes: { o: ComputeOutcome<State>; onPage: boolean }[] = [];
  const checks: { s: State; resolve: (c: CheckResult) => void; reject: (e: Error) => void }[] = [];
  let workerBusy = false;
  const client = {
    request: (s: State) => { workerBusy = true; log.push(`worker:${s.model.seed}`); },
    recycle: (r: AttentionResult) => log.push(`recycle-worker:${r.t}`),
    check: (s: State) => new Promise<CheckResult>((resolve, reject) => checks.push({ s, resolve, reject })),
    get busy() { return workerBusy; },
  };
  let fail: Error | null = null;
  const core: LocalCore<State> = {
    compute: (s) => { if (fail) throw fail; log.push(`page:${s.model.seed}`); return result(s); },
    recycle: (r) => log.push(`recycle-page:${r.t}`),
  };
  let idle: (() => void) | null = null;
  const panel: string[] = [];
  let status: Status = 'loading';
  let failed = false;
  const sched = createScheduler<State>({
    client,
    loadLocal: () => Promise.resolve(core),
    state: () => state,
    shown: () => shown,
    onOutcome: (o, onPage) => outcomes.push({ o, onPage }),
    onWorkerRequest: () => readiness.busy(),
    whenIdle: (fn) => { idle = fn; },
    check: { show: (c) => panel.push(c ? 'shown' : 'too large'), pending: () => panel.push('pending'), failed: (m) => panel.push(`failed:${m}`) },
    onCheckDone: () => readiness.settle(),
  });
  const readiness = createReadiness({ blockers: [() => client.busy, () => sched.checking], failed: () => failed, set: (s) => (status = s), get: () => status });
  return {
    sched, readiness, log, outcomes, checks, panel,
    setState: (s: State) => (state = s),
    show: (s: State, r: AttentionResult) => (shown = { state: s, result: r }),
    workerDone: () => (workerBusy = false),
    runIdle: () => idle?.(),
    failWith: (e: Error | null) => (fail = e),
    setFailed: (f: boolean) => (failed = f),
    status: () => status,
  };
}

describe('compute scheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('computes in the Worker until the page core is loaded, then small states on the page', async () => {
    const p = setup(small(1));
    p.sched.request();
    expect(p.log).toEqual(['worker:1']);
    expect(p.status()).toBe('busy');
    p.show(small(1), result(small(1)));
    p.sched.startLocalCore();
    await Promise.resolve();
    p.runIdle(); // the warm-up: computed and recycled, not drawn
    expect(p.log.slice(1)).toEqual(['page:1', 'recycle-page:4']);
    p.setState(small(2));
    p.sched.request();
    expect(p.log.at(-1)).toBe('page:2');
    expect(p.outcomes.at(-1)).toMatchObject({ onPage: true, o: { latest: true } });
  });

  it('sends large states to the Worker even with the page core loaded', async () => {
    const p = setup(small(1));
    p.show(small(1), result(small(1)));
    p.sched.startLocalCore();
    await Promise.resolve();
    p.setState(large());
    expect(p.sched.computesHere()).toBe(false);
    p.sched.request();
    expect(p.log).toEqual(['worker:0']);
  });

  it('reports a refusal from the page core as an error; any other failure moves to the Worker for good', async () => {
    const p = setup(small(1));
    p.show(small(1), result(small(1)));
    p.sched.startLocalCore();
    await Promise.resolve();
    p.failWith(Object.assign(new Error('d_k too large'), { name: 'AttnError', field: 'dk' }));
    p.sched.request();
    expect(p.outcomes.at(-1)).toMatchObject({ onPage: true, o: { error: { field: 'dk', fatal: false } } });
    p.failWith(new Error('memory access out of bounds'));
    p.sched.request();
    expect(p.log.at(-1)).toBe('worker:1');
    p.failWith(null);
    p.sched.request();
    expect(p.log.at(-1)).toBe('worker:1'); // the page core is not used again
    expect(p.log.filter((l) => l.startsWith('worker'))).toHaveLength(2);
  });

  it('gives arrays back to the core that made them, and never the trained model’s', () => {
    const p = setup(small(1));
    p.sched.recycle(result(small(1)), false);
    p.sched.recycle(result(small(1), { source: 'Trained model, layer 0' }), false);
    expect(p.log).toEqual(['recycle-worker:4']);
  });

  it('checks a page-computed result once the changes pause, only the last one, and not a stale answer', async () => {
    const p = setup(small(1));
    p.readiness.settle();
    expect(p.status()).toBe('ready');
    const s1 = small(1), s2 = small(2);
    p.show(s1, result(s1));
    p.sched.scheduleCheck(s1, result(s1));
    expect(p.sched.checking).toBe(true);
    vi.advanceTimersByTime(CHECK_QUIET_MS - 1);
    p.show(s2, result(s2));
    p.sched.scheduleCheck(s2, result(s2)); // a newer result before the pause: the first is never sent
    vi.advanceTimersByTime(CHECK_QUIET_MS - 1);
    expect(p.checks).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(p.checks.map((c) => c.s.model.seed)).toEqual([2]);
    p.readiness.settle();
    expect(p.status()).toBe('ready'); // settle() does nothing while the Check runs
    p.readiness.busy();
    p.readiness.settle();
    expect(p.status()).toBe('busy');
    p.checks[0].resolve({} as CheckResult);
    await vi.runAllTimersAsync();
    expect(p.panel).toEqual(['pending', 'pending', 'shown']);
    expect(p.sched.checking).toBe(false);
    expect(p.status()).toBe('ready');
    // A check whose state is no longer shown is dropped.
    p.sched.scheduleCheck(s1, result(s1));
    vi.advanceTimersByTime(CHECK_QUIET_MS);
    p.show(s2, result(s2));
    p.checks[1].resolve({} as CheckResult);
    await vi.runAllTimersAsync();
    expect(p.panel.at(-1)).toBe('pending');
  });

  it('does not schedule a Check that is too large to run with every change', () => {
    const p = setup(large());
    p.sched.scheduleCheck(large(), result(large()));
    expect(p.panel).toEqual(['too large']);
    expect(p.sched.checking).toBe(false);
    vi.advanceTimersByTime(CHECK_QUIET_MS * 2);
    expect(p.checks).toHaveLength(0);
  });

  it('is ready only when the Worker, the Check and the link are all done; error when the last computation failed', () => {
    const p = setup(small(1));
    p.sched.request();
    p.readiness.settle();
    expect(p.status()).toBe('busy');
    p.workerDone();
    p.setFailed(true);
    p.readiness.settle();
    expect(p.status()).toBe('error');
    p.readiness.busyIfReady();
    expect(p.status()).toBe('error');
    p.setFailed(false);
    p.readiness.settle();
    p.readiness.busyIfReady();
    expect(p.status()).toBe('busy');
  });
});
