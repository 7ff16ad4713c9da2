// "Reproduce in NumPy": the few lines of NumPy that give a card's figures, runnable as they are
// (paste into a notebook), in the lessons' style. The data a card ran on (a head's Q, K, V and
// mask as the core computed them, in float32) is written into the code as literals, so the lines
// start from the same numbers; everything after that is NumPy's own computation. Each print line
// ends with one number (or True / False): `prints` names the card figure it gives, in order
// (tests/browser/lesson.test.mjs runs every snippet with NumPy and compares). Pure: strings only.

export interface NumpySnippet {
  code: string;
  /** The card figure each printed line gives, in print order. */
  prints: string[];
  /** Absolute tolerance per figure where the default (relative 2e-4) does not fit. */
  tolerance?: Record<string, number>;
}

/** x with the shortest digits that read back as the same float32 (the core's numbers). */
export function pyValue(x: number): string {
  if (Number.isNaN(x)) return 'np.nan';
  if (!Number.isFinite(x)) return x > 0 ? 'np.inf' : '-np.inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return /[.e]/.test(s) ? s : s + '.0';
  }
  return String(f);
}

/** `name = np.array([[…], …])`: a (rows, cols) block of float32 values, one row per line. */
export function pyArray(name: string, a: ArrayLike<number>, rows: number, cols: number): string {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const row: string[] = [];
    for (let j = 0; j < cols; j++) row.push(pyValue(a[i * cols + j]));
    lines.push(`    [${row.join(', ')}],`);
  }
  return `${name} = np.array([\n${lines.join('\n')}\n])`;
}

/** `name = np.array([[…]], dtype=bool)` from a (rows, cols) 0/1 mask. */
export function pyMask(name: string, a: ArrayLike<number>, rows: number, cols: number): string {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const row: number[] = [];
    for (let j = 0; j < cols; j++) row.push(a[i * cols + j] ? 1 : 0);
    lines.push(`    [${row.join(', ')}],`);
  }
  return `${name} = np.array([\n${lines.join('\n')}\n], dtype=bool)`;
}

/** The scale line: 1/√d_k, 1 (the division deleted) or a number. */
export function pyScale(scale: number | null): string {
  return scale === null ? 'scale = 1 / np.sqrt(d_k)' : `scale = ${pyValue(scale)}`;
}

/** The masked softmax of the lessons (fill −∞, or −1e9 under the finite fill), and the entropy. */
export const PY_SOFTMAX = `def softmax(S, fill=-np.inf):
    S = np.where(allowed, S, fill)               # the mask before the softmax
    e = np.exp(S - S.max(-1, keepdims=True))     # the max shift
    return e / e.sum(-1, keepdims=True)`;
export const PY_ENTROPY = `def entropy(W):                                  # -sum w ln w per row, 0 ln 0 = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(W > 0, W * np.log(W), 0).sum(-1)`;

/** One head's data as literals: Q, K (T, d_k), V (T, d_v) and the mask, with where they came from. */
export function pyHead(
  words: string,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number> | null,
  allowed: ArrayLike<number>,
  t: number,
  dk: number,
  dv: number,
): string {
  return [
    `# ${words}: its queries, keys${v ? ' and values' : ''} as the core computed them (float32 values),`,
    '# and the mask (True = may attend).',
    pyArray('Q', q, t, dk),
    pyArray('K', k, t, dk),
    ...(v ? [pyArray('V', v, t, dv)] : []),
    pyMask('allowed', allowed, t, t),
    'T, d_k = Q.shape',
  ].join('\n');
}
