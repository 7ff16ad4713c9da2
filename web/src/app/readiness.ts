// When the page counts as ready (html[data-status], read by scripts and the browser tests),
// without DOM: once nothing is computing, no Check is scheduled or running, and the link is
// written. Then it is 'ready', or 'error' while the error banner shows.

export type Status = 'loading' | 'busy' | 'ready' | 'error';

export interface ReadinessDeps {
  /** Each returns true while it keeps the page from being ready (the compute client, the Check,
   *  a link waiting to be written). */
  blockers: readonly (() => boolean)[];
  /** Whether the last computation failed (the error banner shows). */
  failed(): boolean;
  set(status: Status): void;
  get(): Status;
}

export interface Readiness {
  /** Ready (or error) if nothing blocks any more; else no change. */
  settle(): void;
  /** Work started: busy. */
  busy(): void;
  /** Busy only if it was ready (a link waiting mid-drag does not hide an error or the start). */
  busyIfReady(): void;
}

export function createReadiness(d: ReadinessDeps): Readiness {
  return {
    settle() {
      if (d.blockers.some((b) => b())) return;
      d.set(d.failed() ? 'error' : 'ready');
    },
    busy() {
      d.set('busy');
    },
    busyIfReady() {
      if (d.get() === 'ready') d.set('busy');
    },
  };
}
