// The exercises' checks: each reads the core's result (the weights, the core's row sums and NaN
// counts, the mask the core applied) and, for a mask exercise, the target mask the core builds
// from the target's options. Never a comparison of text. Pure: no DOM, no globals.
import type { Exercise, FixExercise, MaskExercise, MaskTarget, PredictExercise } from './catalogue';

/** A code line the student may mark ("Which line?"): the Lesson view's id and text. */
export interface LineChoice {
  id: string;
  code: string;
}
import { PREDICT_PASS_TV } from './catalogue';

/** The part of the core's result a check reads (attention/protocol.ts's AttentionResult has it). */
export interface CheckedResult {
  tokens: string[];
  t: number;
  heads: number;
  /** (H, T, T) */
  weights: Float32Array;
  /** (H, T) the core's Σ_j w_ij, or null. */
  rowSums: Float32Array | null;
  nanRowsPerHead: number[];
  /** (T, T) 1 = allowed, the mask the core applied. */
  allowed: Uint8Array;
}

export interface Verdict {
  passed: boolean;
  /** 0…1: the share of cells right (mask), of rows right (fix), 1 − the distance (predict). */
  score: number;
  /** What the check found, in sentences the panel shows. */
  lines: string[];
}

/** The mask settings a target means over these tokens (the core turns them into cells). */
export function targetMask(
  target: MaskTarget,
  tokens: string[],
): { causal: boolean; window: number; padding: number[] } {
  const padding = target.padding === 'pad-tokens' ? tokens.flatMap((t, i) => (t === 'pad' ? [i] : [])) : [];
  return { causal: target.causal, window: target.window, padding };
}

const cellName = (r: CheckedResult, i: number) => `${i} “${r.tokens[i] ?? '?'}”`;

/** Cell by cell: the core's applied mask against the core's mask of the target. */
export function checkMask(_e: MaskExercise, r: CheckedResult, target: Uint8Array): Verdict {
  const t = r.t;
  if (target.length !== t * t || r.allowed.length !== t * t)
    return { passed: false, score: 0, lines: ['The mask and the target have different sizes.'] };
  let wrongAllowed = 0;
  let wrongForbidden = 0;
  let first: string | null = null;
  for (let i = 0; i < t; i++)
    for (let j = 0; j < t; j++) {
      const a = r.allowed[i * t + j];
      const want = target[i * t + j];
      if (a === want) continue;
      if (a) wrongAllowed++;
      else wrongForbidden++;
      first ??= `query ${cellName(r, i)} ${a ? 'may see' : 'may not see'} key ${cellName(r, j)}, and the target says it ${a ? 'may not' : 'may'}`;
    }
  const wrong = wrongAllowed + wrongForbidden;
  if (wrong === 0) return { passed: true, score: 1, lines: [`All ${t * t} cells match the target mask.`] };
  return {
    passed: false,
    score: 1 - wrong / (t * t),
    lines: [
      `${wrong} of ${t * t} cells differ from the target: ${wrongAllowed} allowed that should be masked, ${wrongForbidden} masked that should be allowed.`,
      `For example, ${first}.`,
    ],
  };
}

/** The fix: no NaN row, every row sums to 1 (within `tol`), the kept settings as they started. */
export function checkFix(e: FixExercise, r: CheckedResult, changed: string[], tol: number): Verdict {
  const lines: string[] = [];
  if (changed.length > 0)
    lines.push(
      `Keep ${changed.map((k) => `“${k}”`).join(', ')} as the exercise started: the task is to fix the computation, not to change the question.`,
    );
  const nan = r.nanRowsPerHead.reduce((a, b) => a + b, 0);
  const rows = r.heads * r.t;
  let bad = 0;
  let example: string | null = null;
  for (let h = 0; h < r.heads; h++)
    for (let i = 0; i < r.t; i++) {
      const s = r.rowSums ? r.rowSums[h * r.t + i] : NaN;
      if (Number.isFinite(s) && Math.abs(s - 1) <= tol) continue;
      bad++;
      example ??= `head ${h + 1}, row ${cellName(r, i)} sums to ${Number.isNaN(s) ? 'NaN' : s.toFixed(4)}`;
    }
  if (nan > 0) lines.push(`${nan} row${nan > 1 ? 's' : ''} of weights ${nan > 1 ? 'are' : 'is'} NaN.`);
  if (bad > 0) lines.push(`${bad} of ${rows} rows do not sum to 1 (within ${tol}): ${example}.`);
  const passed = changed.length === 0 && nan === 0 && bad === 0;
  if (passed) lines.push(`No NaN, and all ${rows} rows sum to 1.`, e.why);
  return { passed, score: changed.length > 0 ? 0 : 1 - bad / rows, lines };
}

/** The student's bars shared out over the keys the query may see (all zero: null). */
export function normalizedPrediction(r: CheckedResult, query: number, bars: number[]): number[] | null {
  const t = r.t;
  const p = new Array<number>(t).fill(0);
  let sum = 0;
  for (let j = 0; j < t; j++) {
    const v = r.allowed[query * t + j] ? Math.max(0, bars[j] ?? 0) : 0;
    p[j] = v;
    sum += v;
  }
  return sum > 0 ? p.map((v) => v / sum) : null;
}

/** Total variation distance between the prediction and the core's row: half the sum of the gaps. */
export function checkPredict(e: PredictExercise, r: CheckedResult, bars: number[]): Verdict {
  const t = r.t;
  const p = normalizedPrediction(r, e.query, bars);
  if (!p)
    return {
      passed: false,
      score: 0,
      lines: ['Drag at least one bar above zero: the prediction is shared out to sum to 1.'],
    };
  const row = r.weights.subarray((e.head * t + e.query) * t, (e.head * t + e.query + 1) * t);
  let tv = 0;
  let gap = -1;
  let gapKey = 0;
  let best = 0;
  for (let j = 0; j < t; j++) {
    const d = Math.abs(p[j] - row[j]);
    tv += d / 2;
    if (d > gap) [gap, gapKey] = [d, j];
    if (row[j] > row[best]) best = j;
  }
  const passed = tv <= PREDICT_PASS_TV;
  const lines = [
    `Distance ${tv.toFixed(2)} (total variation: half the sum of the gaps between your bars and the head’s weights; ${PREDICT_PASS_TV} or less passes).`,
    `The head puts most weight, ${row[best].toFixed(2)}, on key ${cellName(r, best)}.`,
  ];
  if (gap > 0.05)
    lines.push(
      `Your largest gap: key ${cellName(r, gapKey)}, where you put ${p[gapKey].toFixed(2)} and the head puts ${row[gapKey].toFixed(2)}.`,
    );
  return { passed, score: 1 - tv, lines };
}

/** "Which line?": the marked lines against the lines the variant changes (the Lesson view's own
 *  diff of its code lines). Score: the share of lines classified right. */
export function checkLines(lines: LineChoice[], changed: string[], marked: string[]): Verdict {
  const want = new Set(changed);
  const got = new Set(marked);
  const missed = lines.filter((l) => want.has(l.id) && !got.has(l.id));
  const extra = lines.filter((l) => got.has(l.id) && !want.has(l.id));
  const right = lines.length - missed.length - extra.length;
  const passed = missed.length === 0 && extra.length === 0;
  const lines_: string[] = [];
  if (got.size === 0) lines_.push('Mark at least one line.');
  else if (passed)
    lines_.push(
      `Right: it changes ${changed.length === 1 ? 'that line' : `those ${changed.length} lines`} and no other.`,
    );
  else {
    if (extra.length)
      lines_.push(
        `${extra.length} marked line${extra.length > 1 ? 's stay' : ' stays'} as it is: ${extra.map((l) => l.code).join(' · ')}`,
      );
    if (missed.length)
      lines_.push(`${missed.length} line${missed.length > 1 ? 's it changes are' : ' it changes is'} not marked.`);
  }
  return { passed, score: got.size && lines.length ? right / lines.length : 0, lines: lines_ };
}

export type { Exercise };
