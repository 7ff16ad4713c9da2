// Which WebAssembly build of the core the page runs. cpp/bindings/load_core.mjs picks
// attn_core_relaxed (relaxed SIMD: the forward kernels' multiply-adds fused) where the engine's
// WebAssembly.validate accepts relaxed SIMD, and attn_core (SIMD128) everywhere else. Training
// (attn_train) is not affected: it stays SIMD128 so a run replays bit for bit.
// `?core=simd128` (or `?core=relaxed`) in the page's address overrides the choice, e.g. to compare
// the two builds on one state. A Worker cannot see the page's address, so the page passes the
// override in the Worker's name.

export type CorePreference = 'auto' | 'simd' | 'relaxed';

/** What the compute Worker's core says about itself. */
export interface CoreBuildInfo {
  /** True when the relaxed-SIMD (FMA) build runs. */
  relaxedSimd: boolean;
  /** What was asked for: 'auto' unless the page's address overrides it. */
  prefer: CorePreference;
}

/** The preference in a page's query string: ?core=simd128 | simd | relaxed | auto (default). */
export function preferenceFromSearch(search: string): CorePreference {
  const v = new URLSearchParams(search).get('core');
  if (v === 'simd128' || v === 'simd') return 'simd';
  if (v === 'relaxed') return 'relaxed';
  return 'auto';
}

/** A Worker's name carrying the page's preference ('attention-core' or 'attention-core core=simd'). */
export function coreWorkerName(
  base: string,
  search: string = typeof location === 'undefined' ? '' : location.search,
): string {
  const p = preferenceFromSearch(search);
  return p === 'auto' ? base : `${base} core=${p}`;
}

/** The preference a Worker was started with (see coreWorkerName). */
export function preferenceFromWorkerName(name: string): CorePreference {
  const m = / core=(simd|relaxed)$/.exec(name);
  return m ? (m[1] as CorePreference) : 'auto';
}

/** The words the page shows for a build. */
export function coreBuildLabel(relaxedSimd: boolean): string {
  return relaxedSimd ? 'relaxed SIMD (FMA)' : 'SIMD128';
}

/** What the page says when `new Worker()` throws: in a frame sandboxed without
 *  allow-same-origin (an opaque origin) Chromium starts no Worker from the page's scripts. The
 *  heatmap views then compute on the page's own thread; the timing, training and decoding tabs
 *  cannot (they time or run long work in Workers), so they say what the host must allow. */
export function workerBlockedMessage(what: string, err: unknown): string {
  const detail = String((err as Error)?.message ?? err);
  return (
    `The ${what} needs a Worker, and this page cannot start one here (${detail}). ` +
    'If the playground is embedded in a frame with sandbox="allow-scripts", the host page must add allow-same-origin ' +
    '(sandbox="allow-scripts allow-same-origin"); or open the playground in its own tab.'
  );
}
