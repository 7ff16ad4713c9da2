// Keeping a thread's event loop turning between a step's messages, and for how long (helper, coordinator).

/**
 * Keeps this thread's event loop turning, without sleeping, until `done` settles or `maxMs` have
 * passed; resolves with the number of turns. A thread that sleeps between a step's messages is
 * woken late, on a VM's idle vCPU later still: a job reached a sleeping helper 0.12 ms after it
 * was posted and 0.04 ms when the helper was kept awake, and a reply reached a sleeping
 * coordinator 0.17 ms after it was sent against 0.04 ms (docs/performance.md). The standard
 * remedy (OpenMP runtimes spin before they block): turn the loop a little longer. The turns are
 * setImmediate under Node and a MessageChannel ping-pong in browsers, not timers (browsers clamp
 * nested timeouts to 4 ms), so a message that arrives meanwhile is handled at once.
 */
export function keepAwake(done: Promise<unknown>, maxMs: number): Promise<number> {
  return new Promise<number>((resolve) => {
    const end = performance.now() + maxMs;
    let live = maxMs > 0;
    let turns = 0;
    done.then(
      () => {
        live = false;
      },
      () => {
        live = false;
      },
    );
    // Node: setImmediate (a MessageChannel there is drained up to a thousand messages at a time
    // and measured no better than sleeping); browsers have no setImmediate.
    const immediate = (globalThis as { setImmediate?: (f: () => void) => unknown }).setImmediate;
    let next: () => void;
    let close = (): void => {};
    if (immediate) {
      next = () => void immediate(turn);
    } else {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => turn();
      next = () => ch.port2.postMessage(0);
      close = () => {
        ch.port1.close();
        ch.port2.close();
      };
    }
    function turn(): void {
      if (live && performance.now() < end) {
        turns++;
        next();
      } else {
        close();
        resolve(turns);
      }
    }
    next();
  });
}

/** How long a shard Worker stays awake after a reply for the next job (one step's gap is ~0.3 ms). */
export const HELPER_AWAKE_MS = 5;

/** How long the coordinator stays awake at most while its helpers compute their shards. */
export const COORDINATOR_AWAKE_MS = 50;

/**
 * How long the coordinator stays awake waiting for its helpers (0: it sleeps): only where every
 * thread that works meanwhile has a core, so the turns take no time from the others.
 * `otherThreads`: threads besides the pool's that must keep running (the page's main thread).
 */
export function coordinatorAwakeMs(cores: number | undefined, workers: number, otherThreads: number): number {
  return workers > 1 && Number.isInteger(cores) && (cores as number) >= workers + otherThreads
    ? COORDINATOR_AWAKE_MS
    : 0;
}
