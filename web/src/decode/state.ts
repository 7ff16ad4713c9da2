// The Decode tab's settings: which probe sequence, how much of the second copy the prompt keeps,
// the step shown, cache on/off, and the timing sweep's T range. Pure; normalised with notices.

export interface DecodeState {
  /** Probe sequence (index into the module's sampleBatch draws). */
  seq: number;
  /** Tokens of the second copy of s kept in the prompt (the rest is generated). */
  keep: number;
  /** Tokens appended so far (the step shown); 0 = the end of the prompt. */
  step: number;
  /** KV cache on (true) or recompute the prefix every step (false). */
  cache: boolean;
  /** Timing sweep: T from tStart to tEnd by doubling. */
  tStart: number;
  tEnd: number;
}

export const DECODE_LIMITS = { maxSeq: 9999, minKeep: 1, maxKeep: 8, maxStep: 8192, minT: 64, maxT: 4096 } as const;

export function defaultDecodeState(): DecodeState {
  return { seq: 0, keep: 2, step: 0, cache: true, tStart: 256, tEnd: 4096 };
}

function int(label: string, v: unknown, lo: number, hi: number, fallback: number, n: string[]): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    n.push(`decode: ${label} “${String(v).slice(0, 40)}” is not a number; using ${fallback}`);
    return fallback;
  }
  let x = Math.round(v);
  if (x !== v) n.push(`decode: ${label} ${v} rounded to ${x}`);
  if (x < lo || x > hi) {
    const c = Math.min(Math.max(x, lo), hi);
    n.push(`decode: ${label} ${x} is outside ${lo}…${hi}; using ${c}`);
    x = c;
  }
  return x === 0 ? 0 : x;
}

function pow2(label: string, v: unknown, lo: number, hi: number, fallback: number, n: string[]): number {
  const x = int(label, v, lo, hi, fallback, n);
  const p = 2 ** Math.round(Math.log2(x));
  if (p === x) return x;
  const c = Math.min(Math.max(p, lo), hi);
  n.push(`decode: ${label} ${x} is not a power of two (the sweep doubles T); using ${c}`);
  return c;
}

export function normalizeDecode(input: Partial<DecodeState>): { state: DecodeState; notices: string[] } {
  const d = defaultDecodeState();
  const n: string[] = [];
  const s: DecodeState = { ...d, ...input };
  s.seq = int('sequence', s.seq, 0, DECODE_LIMITS.maxSeq, d.seq, n);
  s.keep = int('prompt tokens of the second copy', s.keep, DECODE_LIMITS.minKeep, DECODE_LIMITS.maxKeep, d.keep, n);
  s.step = int('step', s.step, 0, DECODE_LIMITS.maxStep, d.step, n);
  if (typeof s.cache !== 'boolean') {
    n.push('decode: cache is not on/off; using on');
    s.cache = d.cache;
  }
  s.tStart = pow2('first T', s.tStart, DECODE_LIMITS.minT, DECODE_LIMITS.maxT, d.tStart, n);
  s.tEnd = pow2('last T', s.tEnd, DECODE_LIMITS.minT, DECODE_LIMITS.maxT, d.tEnd, n);
  if (s.tEnd < s.tStart * 2) {
    const e = Math.min(DECODE_LIMITS.maxT, s.tStart * 2);
    const st = e === s.tStart ? s.tStart / 2 : s.tStart;
    n.push(`decode: the sweep needs at least two lengths; using T = ${st} … ${e}`);
    s.tStart = st;
    s.tEnd = e;
  }
  return { state: s, notices: n };
}
