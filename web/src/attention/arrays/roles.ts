// What an array is for, and whether it fits: weights W (rows sum to 1, causal shape, NaN rows),
// Q / K / V (+ mask) for the core's attention, and X, W_q, W_k, W_v as lesson 2 writes them.
// Shape errors throw ArrayParseError naming the array and the dimension; findings about values
// (rows that do not sum to 1, NaN) are reported, not thrown: the page shows the array anyway.
import { ArrayParseError, shapeText, type NdArray } from './types';

/** float32 rounding of one value near 1 is 2^-24; a float32 softmax's row sum is off by at most a
 *  few of those per element. Used when the array is exact (binary file, link). */
const F32_SLACK = 2 ** -22;

/** How far a value may be from the array the student had: half the printed rounding step, plus
 *  float32's rounding. */
export function valueTolerance(a: Pick<NdArray, 'printStep'>): number {
  return a.printStep / 2 + F32_SLACK;
}

export interface WeightsCheck {
  heads: number;
  tq: number;
  tk: number;
  /** Allowed |row sum − 1|: T_k × (half the printed step + float32 slack). */
  tolerance: number;
  /** Rows with a NaN (the page shows NaN cells; a fully masked row under −∞ fill is all NaN). */
  nanRows: number;
  /** The first NaN entry's index (as the array's own: [row, col] or [head, row, col]), or null. */
  nanAt: number[] | null;
  /** Rows that are all zeros (the core's `zero` fill gives these for fully masked rows). */
  zeroRows: number;
  /** Rows (not NaN, not all zero) whose sum is off by more than the tolerance. */
  badRows: number;
  /** The first few of them, 0-based. */
  badRowList: { head: number; row: number; sum: number }[];
  /** Largest |row sum − 1| over the rows that are neither NaN nor all zero. */
  maxRowError: number;
  /** Entries below −tolerance (weights are never negative). */
  negatives: number;
  /** Every entry above the (bottom-right aligned) diagonal is zero, in every head, and there is
   *  at least one such entry: the shape of a causal mask. */
  causal: boolean;
  /** Plain-language findings, e.g. "row 3 of head 1 (W[0, 3]) sums to 0.93" (rows count from
   *  0, as NumPy indexes them; heads are named from 1, as the lessons do). Empty when all is well. */
  findings: string[];
}

/** "row 3 (W[3])", "row 3 of head 2 (W[1, 3])": the row as the page labels it and as NumPy indexes it. */
function rowName(name: string, heads: number, h: number, i: number): string {
  return heads > 1 ? `row ${i} of head ${h + 1} (${name}[${h}, ${i}])` : `row ${i} (${name}[${i}])`;
}

/** NumPy's index text, e.g. "W[3, 2]". */
export function indexText(name: string, at: readonly number[]): string {
  return `${name}[${at.join(', ')}]`;
}

/** Check weights W: (T_q, T_k) or (H, T_q, T_k). Throws on a wrong shape or ±inf entries. */
export function checkWeights(a: NdArray, name = 'W'): WeightsCheck {
  if (a.shape.length !== 2 && a.shape.length !== 3)
    throw new ArrayParseError(
      `${name} has shape ${shapeText(a.shape)}; weights are 2-D (T_q, T_k) or 3-D (heads, T_q, T_k)`,
    );
  const [heads, tq, tk] = a.shape.length === 2 ? [1, a.shape[0], a.shape[1]] : (a.shape as [number, number, number]);
  const d = a.data;
  const vt = valueTolerance(a);
  const tolerance = tk * vt;
  const zero = a.source === 'exact' ? 0 : a.printStep / 2;
  const offset = tk - tq;
  let nanRows = 0;
  let nanAt: number[] | null = null;
  let zeroRows = 0;
  let badRows = 0;
  let negatives = 0;
  let maxRowError = 0;
  let causal = tk > 1 && tq + offset > 1;
  const badRowList: WeightsCheck['badRowList'] = [];
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < tq; i++) {
      const base = (h * tq + i) * tk;
      let sum = 0;
      let nan = false;
      let allZero = true;
      for (let j = 0; j < tk; j++) {
        const w = d[base + j];
        if (Number.isNaN(w)) {
          if (!nan && nanAt === null) nanAt = a.shape.length === 3 ? [h, i, j] : [i, j];
          nan = true;
          continue;
        }
        if (!Number.isFinite(w))
          throw new ArrayParseError(
            `${name}[${a.shape.length === 3 ? `${h}, ` : ''}${i}, ${j}] is ${w > 0 ? 'inf' : '-inf'}; weights are finite (NaN is allowed and shown as a NaN cell)`,
          );
        if (w < -vt) negatives++;
        if (w !== 0) allZero = false;
        if (j > i + offset && Math.abs(w) > zero) causal = false;
        sum += w;
      }
      if (nan) {
        nanRows++;
        continue;
      }
      if (allZero) {
        zeroRows++;
        continue;
      }
      const err = Math.abs(sum - 1);
      if (err > maxRowError) maxRowError = err;
      if (err > tolerance) {
        badRows++;
        if (badRowList.length < 8) badRowList.push({ head: h, row: i, sum });
      }
    }
  }
  const findings: string[] = [];
  if (badRows > 0) {
    const r = badRowList[0];
    findings.push(
      `${badRows} row${badRows > 1 ? 's do' : ' does'} not sum to 1 within ${fmt(tolerance)} (${rowName(name, heads, r.head, r.row)} sums to ${fmt(r.sum)})` +
        (a.source === 'printed'
          ? ` — the tolerance allows for the rounding you printed with (${fmt(a.printStep)} per value)`
          : ''),
    );
  }
  if (negatives > 0)
    findings.push(`${negatives} negative entr${negatives > 1 ? 'ies' : 'y'}: softmax weights are never negative`);
  if (nanRows > 0)
    findings.push(
      `${nanRows} row${nanRows > 1 ? 's hold' : ' holds'} NaN, first at ${indexText(name, nanAt!)}, drawn as crossed cells: ${WEIGHTS_NAN_CAUSE}`,
    );
  if (zeroRows > 0)
    findings.push(
      `${zeroRows} row${zeroRows > 1 ? 's are' : ' is'} all zeros (what the zero fill gives a fully masked row)`,
    );
  return {
    heads,
    tq,
    tk,
    tolerance,
    nanRows,
    nanAt,
    zeroRows,
    badRows,
    badRowList,
    maxRowError,
    negatives,
    causal,
    findings,
  };
}

/** Why a given W holds NaN: not the page (it masks and fills nothing in a W it is given). */
export const WEIGHTS_NAN_CAUSE =
  'the page shows your W as given (it masks and fills nothing in it), so the NaN came from the code that computed W, e.g. a row whose every key was masked with −∞, or a NaN in Q or K';

function fmt(x: number): string {
  return Math.abs(x) >= 1e-3 || x === 0 ? String(Number(x.toPrecision(3))) : x.toExponential(1);
}

/** The three dimensions of a 2-D (T, d) or 3-D (heads, T, d) input. */
function dims3(a: NdArray, name: string, what: string): [number, number, number] {
  if (a.shape.length === 2) return [1, a.shape[0], a.shape[1]];
  if (a.shape.length === 3) return a.shape as [number, number, number];
  throw new ArrayParseError(
    `${name} has shape ${shapeText(a.shape)}; it must be 2-D ${what} or 3-D (heads, ${what.slice(1)}`,
  );
}

/** How many entries are NaN or ±inf, and the first one's index. */
function nonFinite(a: NdArray): { n: number; at: number[] } {
  let n = 0;
  let first = -1;
  for (let k = 0; k < a.data.length; k++)
    if (!Number.isFinite(a.data[k])) {
      if (first < 0) first = k;
      n++;
    }
  const at: number[] = [];
  for (let d = a.shape.length - 1, rest = first; d >= 0 && first >= 0; d--) {
    at[d] = rest % a.shape[d];
    rest = Math.floor(rest / a.shape[d]);
  }
  return { n, at };
}

/** What a NaN in each input reaches (the core confines it to these; docs/numerics.md). */
const REACHES: Record<string, string> = {
  Q: 'that query’s row of weights',
  K: 'every row that may attend to that key',
  V: 'the output rows that attend to that value (the weights stay finite)',
  X: 'every row of weights (through K)',
  W_q: 'every row of weights',
  W_k: 'every row of weights',
  W_v: 'the output rows (the weights stay finite)',
};

function nonFiniteWarning(name: string, a: NdArray): string | null {
  const { n, at } = nonFinite(a);
  return n === 0
    ? null
    : `${name} holds ${n} NaN or infinite value${n > 1 ? 's' : ''}, first at ${indexText(name, at)} (counting from 0): it makes ${REACHES[name]} NaN`;
}

export interface AttentionDims {
  heads: number;
  kvHeads: number;
  tq: number;
  tk: number;
  dk: number;
  dv: number;
  /** `custom`: a (T_q, T_k) mask, 1 = may attend. `padding`: a (T_k,) key mask, 1 = real token. */
  mask: 'none' | 'custom' | 'padding';
}

/** Q (T_q, d_k), K (T_k, d_k), V (T_k, d_v), each optionally with a leading heads axis (K and V's
 *  may be fewer, dividing Q's: grouped-query attention); mask (T_q, T_k) or (T_k,) of 0/1 with
 *  1 = allowed (lesson 1's convention and the core's). NaN / ±inf in Q, K, V are allowed (the core
 *  keeps them to their own rows and counts them) and reported in `warnings`. */
export function checkAttentionInputs(x: { Q: NdArray; K: NdArray; V: NdArray; mask?: NdArray | null }): {
  dims: AttentionDims;
  warnings: string[];
} {
  const [hq, tq, dk] = dims3(x.Q, 'Q', '(T_q, d_k)');
  const [hk, tk, dkk] = dims3(x.K, 'K', '(T_k, d_k)');
  const [hv, tv, dv] = dims3(x.V, 'V', '(T_k, d_v)');
  if (x.K.shape.length !== x.Q.shape.length)
    throw new ArrayParseError(
      `K is ${x.K.shape.length}-D but Q is ${x.Q.shape.length}-D (both 2-D, or both 3-D with heads first)`,
    );
  if (x.V.shape.length !== x.Q.shape.length)
    throw new ArrayParseError(
      `V is ${x.V.shape.length}-D but Q is ${x.Q.shape.length}-D (both 2-D, or both 3-D with heads first)`,
    );
  if (dkk !== dk) throw new ArrayParseError(`K has ${dkk} columns but Q has ${dk} (d_k must match: scores are Q Kᵀ)`);
  if (tv !== tk) throw new ArrayParseError(`V has ${tv} rows but K has ${tk} (T_k must match: one value per key)`);
  if (hv !== hk) throw new ArrayParseError(`V has ${hv} heads but K has ${hk} (K and V come in pairs)`);
  if (hq % hk !== 0)
    throw new ArrayParseError(
      `Q has ${hq} heads, which ${hk} K/V heads do not divide (grouped-query attention shares each K/V head among an equal number of query heads)`,
    );
  const warnings: string[] = [];
  for (const [n, a] of [
    ['Q', x.Q],
    ['K', x.K],
    ['V', x.V],
  ] as const) {
    const w = nonFiniteWarning(n, a);
    if (w) warnings.push(w);
  }
  let mask: AttentionDims['mask'] = 'none';
  const m = x.mask;
  if (m) {
    if (m.shape.length === 1) {
      if (m.shape[0] !== tk)
        throw new ArrayParseError(
          `mask has ${m.shape[0]} entries but K has ${tk} rows (a 1-D mask marks the keys: length T_k)`,
        );
      mask = 'padding';
    } else if (m.shape.length === 2) {
      if (m.shape[0] !== tq) throw new ArrayParseError(`mask has ${m.shape[0]} rows but Q has ${tq} (T_q must match)`);
      if (m.shape[1] !== tk)
        throw new ArrayParseError(`mask has ${m.shape[1]} columns but K has ${tk} rows (T_k must match)`);
      mask = 'custom';
    } else throw new ArrayParseError(`mask has shape ${shapeText(m.shape)}; it must be (T_q, T_k) or (T_k,)`);
    let allowed = 0;
    for (let k = 0; k < m.data.length; k++) {
      const v = m.data[k];
      if (v !== 0 && v !== 1)
        throw new ArrayParseError(
          `mask holds ${String(v)} at position ${k}; a mask holds 0/1 or False/True (1 = may attend)`,
        );
      allowed += v;
    }
    const inverted = mask === 'custom' && tq === tk ? maskLooksInverted(m.data, tq) : null;
    if (inverted)
      warnings.push(
        `the mask looks inverted: it ${inverted}, like lesson 2’s np.triu(…, k=1), where True = forbidden. Here 1 / True = may attend (lesson 1’s convention): pass ~mask (or np.tril(np.ones((T, T), bool)) for a causal mask)`,
      );
    if (allowed === 0) warnings.push('the mask allows nothing: every row may attend to no key');
    else if (mask === 'custom') {
      const empty = emptyRows(m.data, tq, tk);
      if (empty.length > 0) warnings.push(`the mask allows no key in ${rowsText(empty)} (counting from 0)`);
    }
  }
  return { dims: { heads: hq, kvHeads: hk, tq, tk, dk, dv, mask }, warnings };
}

/** How a (T, T) mask of allowed keys looks inverted (a mask of forbidden ones, as lesson 2 writes
 *  np.triu(…, k=1)), or null: it allows only later keys, or forbids every query its own position. */
export function maskLooksInverted(m: ArrayLike<number>, t: number): string | null {
  if (t < 2) return null;
  let any = false,
    past = false,
    diag = false;
  for (let i = 0; i < t; i++)
    for (let j = 0; j < t; j++)
      if (m[i * t + j] !== 0) {
        any = true;
        if (j <= i) past = true;
        if (j === i) diag = true;
      }
  if (any && !past) return 'allows only later keys (1 only where j > i)';
  if (!diag) return 'forbids every query its own position (the diagonal is all 0)';
  return null;
}

/** The rows (0-based) of a (T_q, T_k) mask that allow no key. */
export function emptyRows(m: ArrayLike<number>, tq: number, tk: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < tq; i++) {
    let any = false;
    for (let j = 0; j < tk && !any; j++) any = m[i * tk + j] !== 0;
    if (!any) out.push(i);
  }
  return out;
}

/** "row 5", "rows 0, 1, 2, …" (at most 8 named). */
export function rowsText(rows: readonly number[]): string {
  return `row${rows.length > 1 ? 's' : ''} ${rows.slice(0, 8).join(', ')}${rows.length > 8 ? ', …' : ''}`;
}

export interface ProjectionDims {
  t: number;
  dModel: number;
  heads: number;
  /** Per head. */
  dk: number;
  dv: number;
}

/** Lesson 2's inputs: X (T, d_model), W_q (d_model, d_k), W_k (d_model, d_k), W_v (d_model, d_v).
 *  With heads > 1 (lesson 1's multi-head form) W_q / W_k / W_v's columns split evenly into heads. */
export function checkProjectionInputs(
  x: { X: NdArray; W_q: NdArray; W_k: NdArray; W_v: NdArray },
  heads = 1,
): { dims: ProjectionDims; warnings: string[] } {
  for (const [n, a, what] of [
    ['X', x.X, '(T, d_model)'],
    ['W_q', x.W_q, '(d_model, d_k)'],
    ['W_k', x.W_k, '(d_model, d_k)'],
    ['W_v', x.W_v, '(d_model, d_v)'],
  ] as const)
    if (a.shape.length !== 2) throw new ArrayParseError(`${n} has shape ${shapeText(a.shape)}; it must be 2-D ${what}`);
  if (!Number.isInteger(heads) || heads < 1)
    throw new ArrayParseError(`heads must be a whole number ≥ 1 (got ${heads})`);
  const [t, dModel] = x.X.shape;
  for (const [n, a] of [
    ['W_q', x.W_q],
    ['W_k', x.W_k],
    ['W_v', x.W_v],
  ] as const)
    if (a.shape[0] !== dModel)
      throw new ArrayParseError(
        `${n} has ${a.shape[0]} rows but X has ${dModel} columns (d_model must match: ${n === 'W_q' ? 'Q' : n === 'W_k' ? 'K' : 'V'} = X @ ${n})`,
      );
  const dkAll = x.W_q.shape[1];
  if (x.W_k.shape[1] !== dkAll)
    throw new ArrayParseError(
      `W_k has ${x.W_k.shape[1]} columns but W_q has ${dkAll} (d_k must match: scores are Q Kᵀ)`,
    );
  const dvAll = x.W_v.shape[1];
  if (dkAll % heads !== 0)
    throw new ArrayParseError(
      `W_q has ${dkAll} columns, which do not split into ${heads} heads (d_k × heads must equal the columns)`,
    );
  if (dvAll % heads !== 0)
    throw new ArrayParseError(`W_v has ${dvAll} columns, which do not split into ${heads} heads`);
  const warnings: string[] = [];
  for (const [n, a] of [
    ['X', x.X],
    ['W_q', x.W_q],
    ['W_k', x.W_k],
    ['W_v', x.W_v],
  ] as const) {
    const w = nonFiniteWarning(n, a);
    if (w) warnings.push(w);
  }
  return { dims: { t, dModel, heads, dk: dkAll / heads, dv: dvAll / heads }, warnings };
}

export interface Comparison {
  /** Largest |mine − reference| over entries where both are numbers. */
  maxAbs: number;
  /** Where it is, as an index per dimension. */
  at: number[];
  /** The bound the student's values are held to: half their printed step + COMPARE_SLACK. */
  tolerance: number;
  matches: boolean;
  /** Entries NaN in exactly one of the two. */
  nanMismatches: number;
  /** mine − reference, entry by entry (NaN where either is NaN): the difference heatmap. */
  diff: Float64Array;
}

/** Slack for comparing the student's float64 NumPy with the page's float32 core (the Check holds
 *  the float32 kernel to 1e-5 of the float64 one). */
export const COMPARE_SLACK = 1e-5;

/** Compare the student's array with the page's (same shape). `tolerance` defaults to half the
 *  printed step + COMPARE_SLACK, e.g. 0.00501 for np.round(W, 2). */
export function compareArrays(
  mine: NdArray,
  reference: { shape: readonly number[]; data: ArrayLike<number> },
  tolerance = mine.printStep / 2 + COMPARE_SLACK,
): Comparison {
  if (mine.shape.length !== reference.shape.length || mine.shape.some((d, i) => d !== reference.shape[i]))
    throw new ArrayParseError(
      `your array has shape ${shapeText(mine.shape)} but the playground's has ${shapeText(reference.shape)}`,
    );
  const n = mine.data.length;
  const diff = new Float64Array(n);
  let maxAbs = 0;
  let arg = 0;
  let nanMismatches = 0;
  for (let k = 0; k < n; k++) {
    const a = mine.data[k];
    const b = reference.data[k];
    const an = Number.isNaN(a);
    const bn = Number.isNaN(b);
    if (an || bn) {
      diff[k] = NaN;
      if (an !== bn) nanMismatches++;
      continue;
    }
    const dlt = a - b;
    diff[k] = dlt;
    if (Math.abs(dlt) > maxAbs) {
      maxAbs = Math.abs(dlt);
      arg = k;
    }
  }
  const idx: number[] = [];
  let rest = arg;
  for (let d = mine.shape.length - 1; d >= 0; d--) {
    idx[d] = rest % mine.shape[d];
    rest = Math.floor(rest / mine.shape[d]);
  }
  return { maxAbs, at: idx, tolerance, matches: maxAbs <= tolerance && nanMismatches === 0, nanMismatches, diff };
}
