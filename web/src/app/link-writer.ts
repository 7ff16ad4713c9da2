// Writes the state into the link (location.hash), without DOM: the page hands in how to read and
// replace the hash. The link follows the state at once after a single change (a click, a key),
// but not while a slider is dragged: then it is written once the changes pause for quietMs. A
// history.replaceState call took 1-70 ms in Chromium (the browser process records it) and landed
// inside a later change's frame (the p95 of the frames bench), and Chromium ignores it after
// ~200 calls in 10 s. Leaving or hiding the page mid-drag flushes (the page calls flush() on
// pagehide). Copy link and Embed encode the state itself, not the URL.

export interface LinkWriterDeps {
  /** The link of the current state ('#v=1&…'). */
  encode(): string;
  /** The hash in the address bar now. */
  current(): string;
  /** Put a hash in the address bar (history.replaceState). */
  replace(hash: string): void;
  /** A change's link waits for the pause (the page is not ready meanwhile). */
  onPending?(): void;
  /** The waiting link was written. */
  onFlushed?(): void;
  /** Clock, ms (performance.now by default). */
  now?(): number;
}

export interface LinkWriter {
  /** The state changed (from a control): write now, or once the changes pause. */
  changed(): void;
  /** Write the link now (pagehide, hidden page, the pause's end). */
  flush(): void;
  /** Whether a change's link waits to be written. */
  readonly pending: boolean;
}

export const URL_QUIET_MS = 300;

export function createLinkWriter(deps: LinkWriterDeps, quietMs = URL_QUIET_MS): LinkWriter {
  const now = deps.now ?? (() => performance.now());
  let lastChangeAt = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending = false;
  function flush(): void {
    clearTimeout(timer);
    const hash = deps.encode();
    const cur = deps.current();
    // The default state's link is '#v=1'; an empty hash already says the same.
    if (hash !== cur && !(hash === '#v=1' && cur === '')) deps.replace(hash);
    if (pending) {
      pending = false;
      deps.onFlushed?.();
    }
  }
  return {
    changed() {
      clearTimeout(timer);
      const t = now();
      const quiet = t - lastChangeAt >= quietMs;
      lastChangeAt = t;
      if (quiet) flush();
      else {
        pending = true;
        deps.onPending?.();
        timer = setTimeout(flush, quietMs);
      }
    },
    flush,
    get pending() {
      return pending;
    },
  };
}
