// Arrays printed as NumPy's print() prints them (numpy.array2string with its default options:
// precision 8, floatmode 'maxprec', suppress False, linewidth 75, threshold 1000, edgeitems 3), so
// a student can put the page's intermediates beside their notebook's, line by line. Each value
// gets the shortest digits that read back as the same float32 or float64 (NumPy's Dragon4 "unique"
// mode), at most 8 after the point; the column width, the switch to scientific notation, the
// wrapping at 75 characters and the "..." of a large array follow numpy/core/arrayprint.py
// (FloatingFormat, _formatArray). tests/web/numpy-print.test.ts checks it against NumPy's own
// output (tests/oracle/gen_numpy_print.py). Pure: no DOM.

export type PrintDtype = 'float32' | 'float64';

const PRECISION = 8;
const LINE_WIDTH = 75;
const THRESHOLD = 1000;
const EDGE_ITEMS = 3;

const same = (x: number, y: number, dtype: PrintDtype) => (dtype === 'float32' ? Math.fround(y) === x : y === x);

/** `s`, a number written with p digits after the point by toFixed / toExponential (which round an
 *  exact tie away from zero), with the tie settled to even as Dragon4's cutoff does: `longer` is
 *  the same number written with 30 more digits, exact for a float's finite binary expansion. */
function tieToEven(s: string, longer: string, p: number): string {
  const [m, e] = longer.split('e');
  const point = m.indexOf('.');
  if (point < 0 || !/^50*$/.test(m.slice(point + 1 + p))) return s;
  const down = m.slice(0, point + 1 + p).replace(/\.$/, '');
  if (Number(down[down.length - 1]) % 2 !== 0) return s;
  return e === undefined ? down : `${down}e${e}`;
}

/** x rounded to p digits after the point, ties to even. */
const fixed = (x: number, p: number): string => tieToEven(x.toFixed(p), x.toFixed(Math.min(100, p + 30)), p);

/** The positional digits of a finite x: shortest that reads back, at most PRECISION after the point,
 *  trailing zeros dropped, the point kept ("1." for one). */
function positional(x: number, dtype: PrintDtype): string {
  let s = fixed(x, PRECISION);
  for (let p = 0; p <= PRECISION; p++) {
    const t = fixed(x, p);
    if (same(x, Number(t), dtype)) {
      s = t;
      break;
    }
  }
  if (!s.includes('.')) s += '.';
  s = s.replace(/(\.\d*?)0+$/, '$1');
  if (Object.is(x, -0) && !s.startsWith('-')) s = '-' + s;
  return s;
}

/** x in scientific form with p digits after the point, ties to even. */
const expo = (x: number, p: number): string => tieToEven(x.toExponential(p), x.toExponential(Math.min(100, p + 30)), p);

/** The scientific digits of a finite x: mantissa (shortest that reads back, at most PRECISION after
 *  the point) and the exponent. */
function scientific(x: number, dtype: PrintDtype): { mant: string; exp: number } {
  let s = expo(x, PRECISION);
  for (let p = 0; p <= PRECISION; p++) {
    const t = expo(x, p);
    if (same(x, Number(t), dtype)) {
      s = t;
      break;
    }
  }
  const [m, e] = s.split('e');
  let mant = m.includes('.') ? m.replace(/0+$/, '') : m + '.';
  if (Object.is(x, -0) && !mant.startsWith('-')) mant = '-' + mant;
  return { mant, exp: Number(e) };
}

/** How every element of one array is written (FloatingFormat.fillFormat). */
function formatter(values: readonly number[], dtype: PrintDtype): (x: number) => string {
  const finite = values.filter((x) => Number.isFinite(x));
  const nonZero = finite.filter((x) => x !== 0).map(Math.abs);
  let expFormat = false;
  if (nonZero.length) {
    const max = Math.max(...nonZero),
      min = Math.min(...nonZero);
    expFormat = max >= 1e8 || min < 0.0001 || max / min > 1000;
  }
  let padLeft = 0,
    padRight = 0;
  let fmt: (x: number) => string;
  if (finite.length === 0) {
    fmt = () => '';
  } else if (expFormat) {
    const parts = finite.map((x) => scientific(x, dtype));
    const precision = Math.max(...parts.map((p) => p.mant.split('.')[1].length));
    const expDigits = Math.max(2, ...parts.map((p) => String(Math.abs(p.exp)).length));
    padLeft = Math.max(...parts.map((p) => p.mant.split('.')[0].length));
    padRight = expDigits + 2 + precision;
    // Every value with `precision` digits after the point: its own digits beyond its shortest
    // form, correctly rounded (NumPy's min_digits), not zeros.
    fmt = (x) => {
      const [m, e] = expo(x, precision).split('e');
      const [i, f = ''] = (Object.is(x, -0) ? '-' + m : m).split('.');
      const exp = Number(e);
      return (
        i.padStart(padLeft) + '.' + f + 'e' + (exp < 0 ? '-' : '+') + String(Math.abs(exp)).padStart(expDigits, '0')
      );
    };
  } else {
    const parts = finite.map((x) => positional(x, dtype).split('.'));
    padLeft = Math.max(...parts.map((p) => p[0].length));
    padRight = Math.max(...parts.map((p) => p[1].length));
    fmt = (x) => {
      const [i, f] = positional(x, dtype).split('.');
      return i.padStart(padLeft) + '.' + f.padEnd(padRight);
    };
  }
  if (finite.length !== values.length) {
    // Room for nan, inf and -inf in the same column (arrayprint's "pad_left" for non-finite values).
    const negInf = values.some((x) => x === -Infinity) ? 1 : 0;
    padLeft = Math.max(padLeft, 3 - (padRight + 1), 3 + negInf - (padRight + 1));
  }
  const width = padLeft + padRight + 1;
  return (x) => {
    if (Number.isNaN(x)) return 'nan'.padStart(width);
    if (!Number.isFinite(x)) return (x < 0 ? '-inf' : 'inf').padStart(width);
    return fmt(x);
  };
}

/** The values a summarized array shows: its first and last EDGE_ITEMS along each long axis. */
function shownIndices(n: number, summarize: boolean): { lead: number[]; trail: number[] } {
  if (summarize && n > 2 * EDGE_ITEMS)
    return {
      lead: Array.from({ length: EDGE_ITEMS }, (_, i) => i),
      trail: Array.from({ length: EDGE_ITEMS }, (_, i) => n - EDGE_ITEMS + i),
    };
  return { lead: [], trail: Array.from({ length: n }, (_, i) => i) };
}

/**
 * `print(a)` for a 1-D (rows = 1 and `vector`) or 2-D (rows, cols) array in row-major order.
 * dtype: how many digits tell two values apart (float32 values are printed as float32 ones).
 */
export function numpyStr(
  data: ArrayLike<number>,
  rows: number,
  cols: number,
  dtype: PrintDtype,
  vector = false,
): string {
  const summarize = rows * cols > THRESHOLD;
  const r = vector ? { lead: [], trail: [0] } : shownIndices(rows, summarize);
  const c = shownIndices(cols, summarize);
  const rowIdx = [...r.lead, ...r.trail],
    colIdx = [...c.lead, ...c.trail];
  const shown: number[] = [];
  for (const i of rowIdx) for (const j of colIdx) shown.push(data[i * cols + j]);
  const f = formatter(shown, dtype);

  // One row: words separated by ' ', wrapped before LINE_WIDTH (arrayprint's _extendLine).
  const formatRow = (i: number, hanging: string, width: number): string => {
    const elemWidth = width - 1; // max(len(separator.rstrip()), len(']')) = 1
    let s = '',
      line = hanging;
    const extend = (word: string, w: number) => {
      let wrap = line.length + word.length > w;
      if (line.length <= hanging.length) wrap = false;
      if (wrap) {
        s += line.trimEnd() + '\n';
        line = hanging;
      }
      line += word;
    };
    const words = [...c.lead.map((j) => f(data[i * cols + j])), ...(c.lead.length ? ['...'] : [])];
    const trail = c.trail.map((j) => f(data[i * cols + j]));
    for (const w of words) {
      extend(w, elemWidth);
      line += ' ';
    }
    trail.forEach((w, k) => {
      extend(w, k === trail.length - 1 ? width - 1 : elemWidth);
      if (k < trail.length - 1) line += ' ';
    });
    s += line;
    return '[' + s.slice(hanging.length) + ']';
  };

  // print() starts with next_line_prefix ' ' and the full line width.
  if (vector) return formatRow(0, ' ', LINE_WIDTH);
  const hanging = ' ',
    inner = hanging + ' ';
  const width = LINE_WIDTH - 1; // curr_width - len(']') for the nested level
  const parts: string[] = [];
  for (const i of r.lead) parts.push(hanging + formatRow(i, inner, width) + '\n');
  if (r.lead.length) parts.push(hanging + '...' + '\n');
  r.trail.forEach((i, k) => parts.push(hanging + formatRow(i, inner, width) + (k < r.trail.length - 1 ? '\n' : '')));
  const s = parts.join('');
  return '[' + s.slice(hanging.length) + ']';
}
