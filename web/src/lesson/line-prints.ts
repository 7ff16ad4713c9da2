// What each code line of the Lesson view prints, as NumPy's print() would (shared/numpy-print.ts),
// for the drawn head of the changed computation (the lines as set): the scores, the masked and
// shifted scores, exp, the row sums, the weights and the output. The softmax's intermediate steps
// come from the core (core.softmaxSteps, lesson 1's lines one by one); the scores, weights, row
// sums and output are the kernel's own results, the arrays the pictures draw. Pure: no DOM.
import type { AttnCore } from '../wasm/attn-core';
import type { VariantState } from '../shared/variant';
import { numpyStr, type PrintDtype } from '../shared/numpy-print';
import type { Comparison } from './run';
import type { LineId } from './code-lines';

export interface LinePrint {
  /** The NumPy expression printed, e.g. "S" or "exp(S).sum(-1, keepdims=True)". */
  expr: string;
  /** print(expr)'s output. */
  text: string;
}

export interface LinePrints {
  /** The prints under each line (lines without any are absent). */
  byLine: Partial<Record<LineId, LinePrint[]>>;
  /** Why nothing is printed (float16), or null. */
  none: string | null;
  dtype: PrintDtype | null;
}

/** The prints of the comparison's changed run. `fill` is the page's mask fill. */
export function linePrints(
  core: AttnCore,
  c: Comparison,
  v: VariantState,
  fill: 'neg_inf' | 'finite' | 'zero',
): LinePrints {
  if (v.precision === 'float16')
    return {
      byLine: {},
      none: 'Not printed under float16: NumPy’s float16 prints need its own digits rule; choose float32 or float64 on line 1.',
      dtype: null,
    };
  const dtype: PrintDtype = v.precision;
  const T = c.t,
    r = c.changed;
  const square = (a: ArrayLike<number>) => numpyStr(a, T, T, dtype);
  const byLine: LinePrints['byLine'] = {};
  const add = (line: LineId, expr: string, text: string) => (byLine[line] ??= []).push({ expr, text });
  const softmaxLike = v.normalizer === 'softmax' || v.normalizer === 'softmax1';
  if (r.scores) add(v.position === 'alibi' ? 'alibi' : 'scores', 'S', square(r.scores));
  if (softmaxLike && r.scores) {
    // Mask before: the steps see the page's mask; mask after: every key, the mask comes last.
    const before = v.maskMode === 'before';
    const allowed = before ? c.allowed : new Uint8Array(T * T).fill(1);
    const s = core.softmaxSteps(r.scores, allowed, {
      rows: T,
      cols: T,
      maskFill: fill,
      maxShift: v.maxShift,
      normalizer: v.normalizer as 'softmax' | 'softmax1',
      precision: dtype,
    });
    if (before) add('mask', 'S', square(s.masked));
    if (v.maxShift) add('shift', 'S', square(s.shifted));
    add('norm', 'exp(S)', square(s.exps));
    add('norm', 'exp(S).sum(-1, keepdims=True)', numpyStr(s.sums, T, 1, dtype));
  }
  const wLine: LineId = v.maskMode === 'after' ? 'after' : 'norm';
  add(wLine, 'W', square(r.weights));
  add(wLine, 'W.sum(-1)', numpyStr(r.rowSums, 1, T, dtype, true));
  add('out', 'O', numpyStr(r.output, T, c.dv, dtype));
  return { byLine, none: null, dtype };
}

/** The sentence under the lines: what the prints are, and why a notebook's digits may differ.
 *  `student64`: whether the student's arrays came as float64 (null: the page's own example). */
export function printNote(p: LinePrints, c: Comparison, student64: boolean | null): string {
  if (p.none) return p.none;
  const what = `Under each line, “print …” shows its arrays as NumPy prints them: head ${c.head + 1}, the changed computation (the lines as set), ${p.dtype}.`;
  const why: string[] = [];
  if (p.dtype === 'float32')
    why.push(
      'A NumPy notebook computes in float64 unless told otherwise: set line 1 to float64 to compare digit for digit.',
    );
  else if (student64 === false)
    why.push(
      'Your arrays came as float32 numbers (the notebook helper’s links carry float32; a float64 .npy or .npz file keeps float64), so a notebook holding them in float64 differs from about the 8th digit: compare with a.astype(np.float32).astype(np.float64).',
    );
  if (c.t > 8) why.push('NumPy adds rows longer than 8 pairwise, so a sum may differ in its last digit.');
  return [what, ...why].join(' ');
}
