// Where a computation runs and what happens to its arrays, without DOM: the page's own core for
// small states, the Worker for the rest; results given back to the core that made them; and the
// Check of a result computed on the page, sent to the Worker once the changes pause.
//
// Why two cores: a second core on the page's own thread computes small states
// (computeFlops ≤ LOCAL_FLOPS, about a millisecond) inside the input event, so the picture is
// painted in the same frame. A Worker's answer arrives as a task after that frame has started, so
// it is painted one frame (16.7 ms at 60 Hz) later however fast the Worker is. Larger states go
// to the Worker, which keeps the page responsive while it computes. Both run the same build (same
// ?core= choice), so the numbers are the same bits either way.
import { CHECK_AUTO_WORK, checkWork, computeFlops, coreRefusal } from './compute';
import type { AttentionResult, CheckResult } from './protocol';
import type { ModelSlice } from './state';
import type { ComputeClient, ComputeOutcome } from './worker-client';

export const LOCAL_FLOPS = 6e6;
/** The pause after which a page-computed result's Check is sent to the Worker. */
export const CHECK_QUIET_MS = 120;

/** The page's own core (a Computer). */
export interface LocalCore<S> {
  compute(s: S, opts: { check: boolean }): AttentionResult;
  recycle(r: AttentionResult): void;
}

export interface SchedulerDeps<S extends ModelSlice> {
  client: Pick<ComputeClient<S>, 'request' | 'recycle' | 'check' | 'busy'>;
  /** Loads the page's own core (the same build as the Worker's). */
  loadLocal(): Promise<LocalCore<S>>;
  /** The state to compute now. */
  state(): S;
  /** The state and result on screen, if any. */
  shown(): { state: S; result: AttentionResult } | null;
  /** A computation's outcome; onPage: computed by the page's core. */
  onOutcome(o: ComputeOutcome<S>, onPage: boolean): void;
  /** The Worker got a request (the page is busy until its answer). */
  onWorkerRequest(): void;
  /** Runs `fn` once the page is idle (requestIdleCallback). */
  whenIdle(fn: () => void): void;
  /** The Check panel: the check of `s` (null: too large to run with every change), pending, failed. */
  check: {
    show(c: CheckResult | null, s: S, r: AttentionResult): void;
    pending(): void;
    failed(message: string): void;
  };
  /** A Check finished (readiness may change). */
  onCheckDone(): void;
  /** Clock for the outcome's requestedAt (performance.now by default). */
  now?(): number;
}

export interface Scheduler<S> {
  /** Compute the current state: on the page when small and its core is loaded, else in the Worker. */
  request(): void;
  /** Give a result's arrays back to the core that made it (not the trained model's). */
  recycle(r: AttentionResult, onPage: boolean): void;
  /** Start loading the page's own core (once; after the first figure). */
  startLocalCore(): void;
  /** Check a result computed on the page, in the Worker, once the changes pause. */
  scheduleCheck(s: S, r: AttentionResult): void;
  cancelCheck(): void;
  /** A Check is scheduled and not yet sent, or sent and not yet answered. */
  readonly checking: boolean;
  /** Whether the page's core would compute the current state. */
  computesHere(): boolean;
}

export function createScheduler<S extends ModelSlice>(deps: SchedulerDeps<S>): Scheduler<S> {
  const now = deps.now ?? (() => performance.now());
  let local: LocalCore<S> | null = null;
  let localLoading = false;
  let checkTimer: ReturnType<typeof setTimeout> | undefined;
  let checkWaiting = false; // scheduled, not yet sent
  let checksInFlight = 0;

  const computesHere = (): boolean => {
    const shown = deps.shown();
    const flops = local && shown ? computeFlops(deps.state(), shown) : null;
    return flops !== null && flops <= LOCAL_FLOPS;
  };

  function cancelCheck(): void {
    clearTimeout(checkTimer);
    checkWaiting = false;
  }

  return {
    request() {
      const state = deps.state();
      const requestedAt = now();
      if (local && computesHere()) {
        try {
          const result = local.compute(state, { check: false });
          deps.onOutcome({ state, requestedAt, result, latest: true }, true);
          return;
        } catch (err) {
          const refusal = coreRefusal(err);
          if (refusal) {
            deps.onOutcome({ state, requestedAt, error: refusal, latest: true }, true);
            return;
          }
          local = null; // not a refusal: leave this core and let the Worker compute from now on
        }
      }
      deps.onWorkerRequest();
      deps.client.request(state);
    },
    recycle(r, onPage) {
      if (r.source) return; // not a computed result (the trained model's weights)
      if (onPage) local?.recycle(r);
      else deps.client.recycle(r);
    },
    startLocalCore() {
      if (localLoading || local) return;
      localLoading = true;
      deps.loadLocal().then(
        (core) => {
          local = core;
          // Once the page is idle, compute the shown state once on it (the result is not drawn;
          // its arrays go to the pool): the first change then finds the example cached and the
          // code warm instead of paying both inside its frame.
          deps.whenIdle(() => {
            if (!local || !computesHere()) return;
            try {
              local.recycle(local.compute(deps.state(), { check: false }));
            } catch {
              /* a refusal shows up when the state is really computed */
            }
          });
        },
        () => {
          /* the Worker computes everything */
        },
      );
    },
    scheduleCheck(s, r) {
      cancelCheck();
      if (checkWork(r.heads, r.t, r.dk, r.tk) > CHECK_AUTO_WORK) {
        deps.check.show(null, s, r);
        return;
      }
      deps.check.pending();
      checkWaiting = true;
      checkTimer = setTimeout(() => {
        checkWaiting = false;
        checksInFlight++;
        deps.client
          .check(s)
          .then(
            (c) => {
              if (deps.shown()?.state === s) deps.check.show(c, s, r);
            },
            (e: Error) => {
              if (deps.shown()?.state === s) deps.check.failed(e.message);
            },
          )
          .finally(() => {
            checksInFlight--;
            deps.onCheckDone();
          });
      }, CHECK_QUIET_MS);
    },
    cancelCheck,
    get checking() {
      return checkWaiting || checksInFlight > 0;
    },
    computesHere,
  };
}
