// Text a student pastes (or a .json / .csv file): what NumPy's print / repr writes, Python lists,
// JSON, and bare grids of numbers. One linear pass (a hand-written tokenizer, lexer.ts; the only regex runs
// on tokens of at most ARRAY_LIMITS.maxNumberLength characters), every error names the line and
// column and what was expected, and the size caps are checked before anything grows past them.
//
// What it reads (the structure comes from the brackets, so line breaks are free: NumPy's rows
// wrapped at 75 characters and the blank lines between 3-D blocks need nothing special):
//   [[0.1 0.9] [1. 0.]]                      print(W), print(np.round(W, 2))
//   array([[1.e-03, 2.e+00]], dtype=float32)  repr(W), with or without a dtype suffix
//   [[0.1, 0.9], [1.0, 0.0]]                 nested Python lists / JSON arrays
//   W = [[…]]   W: [[…]]   W [[…]]            a name before an array (print("W", W))
//   {"Q": [[…]], "K": […]}  {'W': array(…)}  JSON objects and Python dicts of arrays
//   nan  inf  -inf  NaN  Infinity  True  False  true  false
//   0.1,0.9\n1,0   or whitespace-separated    a bare grid (CSV, np.savetxt); blank lines → 3-D
import { ARRAY_LIMITS, ArrayParseError, checkedSize, type NdArray } from './types';
import { Lexer, numberWord, StepTracker, type Tok, type TokKind } from './lexer';

export const SUMMARISED_FIX =
  'NumPy summarised this print (it replaces the middle with “...” above 1000 elements). Print it in full: `import sys; np.set_printoptions(threshold=sys.maxsize)`, or `with np.printoptions(threshold=W.size): print(W)`';

const SCALAR_WRAPPER =
  /^(?:np|numpy)\.(?:float(?:16|32|64)|int(?:8|16|32|64)|uint(?:8|16|32|64)|bool_?|True_|False_|half|single|double)$/;
const WRAPPERS = new Set(['array', 'np.array', 'numpy.array', 'asarray', 'np.asarray', 'tensor', 'torch.tensor']);
const FLOAT32 = new Set([
  'float32',
  'np.float32',
  'numpy.float32',
  'torch.float32',
  'float16',
  'np.float16',
  'torch.float16',
  'half',
  'single',
  'f4',
  '<f4',
  'f2',
  '<f2',
]);

function describe(t: Tok): string {
  if (t.kind === 'eof') return 'the end of the text';
  if (t.kind === 'str') return `the text “${t.text.slice(0, 40)}”`;
  return `“${t.text.slice(0, 40)}”`;
}

/** "row 3 of block 2": path = 1-based indices of the open lists, outermost first; `level` = 0
 *  when the innermost of them is a row (holds numbers), 1 when it is a block of rows, … */
function ordinal(path: number[], level: number): string {
  const names = ['row', 'block', 'group'];
  return path
    .slice()
    .reverse()
    .map((k, i) => `${names[Math.min(i + level, names.length - 1)]} ${k}`)
    .join(' of ');
}

class Parser {
  private values: number[] = [];
  private steps = new StepTracker();
  constructor(private readonly lx: Lexer) {}

  fail(t: Tok, msg: string): never {
    if (t.kind === 'ellipsis') throw new ArrayParseError(SUMMARISED_FIX, this.lx.where(t));
    throw new ArrayParseError(msg, this.lx.where(t));
  }
  expect(kind: TokKind, what: string): Tok {
    const t = this.lx.next();
    if (t.kind !== kind) this.fail(t, `expected ${what}, found ${describe(t)}`);
    return t;
  }

  /** Every array in the text, in order. */
  document(): NdArray[] {
    const out: NdArray[] = [];
    let total = 0;
    const push = (a: NdArray) => {
      if (out.length >= ARRAY_LIMITS.maxArrays)
        throw new ArrayParseError(`more than ${ARRAY_LIMITS.maxArrays} arrays in one text`);
      total += a.data.length;
      if (total > ARRAY_LIMITS.maxElements)
        throw new ArrayParseError(
          `the arrays hold more than ${ARRAY_LIMITS.maxElements.toLocaleString('en')} elements together`,
        );
      out.push(a);
    };
    for (;;) {
      let t = this.lx.peek();
      while (t.kind === ',' || t.kind === ';') {
        this.lx.next();
        t = this.lx.peek();
      }
      if (t.kind === 'eof') break;
      if (t.kind === '{') {
        this.lx.next();
        this.object(push);
        continue;
      }
      let name: string | undefined;
      if ((t.kind === 'word' && !WRAPPERS.has(t.text)) || t.kind === 'str') {
        this.lx.next();
        name = t.text;
        const sep = this.lx.peek();
        if (sep.kind === '=' || sep.kind === ':') this.lx.next();
      }
      push(this.value(name));
    }
    if (out.length === 0)
      throw new ArrayParseError('no numbers found (paste what NumPy printed, e.g. [[0.5 0.5] [1. 0.]])');
    return out;
  }

  private object(push: (a: NdArray) => void): void {
    for (;;) {
      const t = this.lx.next();
      if (t.kind === '}') return;
      if (t.kind === ',') continue;
      if (t.kind !== 'str' && t.kind !== 'word')
        this.fail(t, `expected a quoted name such as "W", found ${describe(t)}`);
      this.expect(':', '“:” after the name');
      push(this.value(t.text));
      const after = this.lx.peek();
      if (after.kind !== ',' && after.kind !== '}') this.fail(after, `expected “,” or “}”, found ${describe(after)}`);
    }
  }

  /** An array: [ … ] or array( [ … ] , dtype=… ). */
  private value(name: string | undefined): NdArray {
    const t = this.lx.peek();
    let f32 = false;
    let wrapped = false;
    if (t.kind === 'word' && WRAPPERS.has(t.text)) {
      this.lx.next();
      this.expect('(', `“(” after ${t.text}`);
      wrapped = true;
    }
    this.values = [];
    this.steps = new StepTracker();
    const shape = this.nested();
    if (wrapped) {
      // Keyword arguments: dtype=float32, device='cpu', requires_grad=True …
      for (;;) {
        const u = this.lx.next();
        if (u.kind === ')') break;
        if (u.kind !== ',') this.fail(u, `expected “,” or “)” after the array, found ${describe(u)}`);
        const key = this.lx.next();
        if (key.kind === ')') break;
        if (key.kind !== 'word') this.fail(key, `expected a keyword such as dtype=, found ${describe(key)}`);
        this.expect('=', `“=” after ${key.text}`);
        const val = this.lx.next();
        if (val.kind !== 'word' && val.kind !== 'str' && val.kind !== 'num')
          this.fail(val, `expected a value for ${key.text}=, found ${describe(val)}`);
        if (key.text === 'dtype' && FLOAT32.has(val.text)) f32 = true;
      }
    }
    const n = checkedSize(shape, name ?? 'the array');
    if (n !== this.values.length)
      throw new ArrayParseError(`internal: ${this.values.length} values for shape ${shape.join('×')}`);
    const data = f32 ? Float32Array.from(this.values) : Float64Array.from(this.values);
    const out: NdArray = { shape, data, source: 'printed', printStep: this.steps.step() };
    if (name !== undefined) out.name = name;
    return out;
  }

  /** Nested lists; returns the shape. Iterative, with the depth capped by maxNdim. */
  private nested(): number[] {
    const open = this.expect('[', '“[” (the start of an array)');
    const dims: number[] = [];
    let ndim = 0; // known once the first number is seen
    const counts: number[] = [0]; // elements so far in each open list
    const path: number[] = []; // 1-based index of each open list among its siblings
    let depth = 1;
    let afterElement = false;
    let lastComma: Tok | null = null;
    for (;;) {
      const t = this.lx.next();
      switch (t.kind) {
        case '[': {
          if (ndim !== 0 && depth >= ndim) this.fail(t, `expected a number (rows nest ${ndim} deep here), found “[”`);
          if (depth >= ARRAY_LIMITS.maxNdim) this.fail(t, `more than ${ARRAY_LIMITS.maxNdim} levels of brackets`);
          counts[depth - 1]++;
          path.push(counts[depth - 1]);
          counts[depth] = 0;
          depth++;
          afterElement = false;
          lastComma = null;
          break;
        }
        case 'word':
        case 'num': {
          let num = t;
          if (t.kind === 'word') {
            // NumPy 2 writes scalars as np.float64(0.5) in lists (list(W[0]), print of a list).
            if (!SCALAR_WRAPPER.test(t.text)) this.fail(t, `expected a number, “[”, “]” or “,”; found ${describe(t)}`);
            this.expect('(', `“(” after ${t.text}`);
            num = this.lx.next();
            if (num.kind !== 'num') this.fail(num, `expected a number inside ${t.text}( ), found ${describe(num)}`);
            this.expect(')', `“)” after the number in ${t.text}(`);
          }
          if (ndim === 0) ndim = depth;
          else if (depth !== ndim)
            this.fail(t, `expected “[” (a row), found the number ${describe(t)}: the nesting is uneven`);
          if (this.values.length >= ARRAY_LIMITS.maxElements)
            this.fail(t, `more than ${ARRAY_LIMITS.maxElements.toLocaleString('en')} numbers`);
          this.values.push(num.value);
          this.steps.add(num.num!);
          counts[depth - 1]++;
          afterElement = true;
          lastComma = null;
          break;
        }
        case ',': {
          if (!afterElement)
            this.fail(t, counts[depth - 1] === 0 ? 'expected a number or “[”, found “,”' : 'two commas in a row');
          afterElement = false;
          lastComma = t;
          break;
        }
        case ']': {
          const n = counts[depth - 1];
          if (n === 0) this.fail(t, lastComma ? 'expected a number after “,”' : 'an empty list “[]”');
          if (ndim === 0) this.fail(t, 'expected a number');
          const level = depth - 1; // index into dims
          if (dims[level] === undefined) dims[level] = n;
          else if (dims[level] !== n) {
            const what = depth === ndim ? 'values' : depth === ndim - 1 ? 'rows' : 'blocks';
            const whose = depth === 1 ? 'the array' : ordinal(path, ndim - depth);
            this.fail(
              t,
              `${whose} has ${n} ${what}, but the ones before it have ${dims[level]} (every ${depth === ndim ? 'row' : 'block'} needs the same length)`,
            );
          }
          depth--;
          if (depth === 0) {
            if (dims.length !== ndim) throw new ArrayParseError('internal: shape depth');
            return dims;
          }
          path.pop();
          afterElement = true;
          lastComma = null;
          break;
        }
        case 'eof':
          this.fail(t, `the array that opens at line ${open.line}, column ${open.col} is never closed (missing “]”)`);
          break;
        default:
          this.fail(t, `expected a number, “[”, “]” or “,”; found ${describe(t)}`);
      }
    }
  }
}

/** Bare grid: one row per line, numbers separated by commas, tabs or spaces; a blank line
 *  between blocks makes it 3-D; a first line of names (a CSV header) is skipped. */
export function parseGrid(text: string, name?: string): NdArray {
  const blocks: number[][][] = [[]];
  let total = 0;
  const steps = new StepTracker();
  let width = -1;
  let lineNo = 0;
  let headerSkipped = false;
  let pos = 0;
  while (pos <= text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    const raw = text.slice(pos, end).replace(/\r$/, '');
    pos = end + 1;
    lineNo++;
    const line = raw.trim();
    if (line === '') {
      if (blocks[blocks.length - 1].length > 0) blocks.push([]);
      continue;
    }
    if (line.startsWith('#')) continue; // np.savetxt's header / comments
    const fields = line.includes(',') ? line.split(',').map((f) => f.trim()) : line.split(/[\s;]+/u);
    const row: number[] = [];
    let bad = -1;
    for (let k = 0; k < fields.length; k++) {
      if (fields[k].length > ARRAY_LIMITS.maxNumberLength + 2)
        throw new ArrayParseError(
          `field ${k + 1} is longer than ${ARRAY_LIMITS.maxNumberLength} characters`,
          `line ${lineNo}`,
        );
      const f =
        fields[k].length >= 2 && fields[k].startsWith('"') && fields[k].endsWith('"')
          ? fields[k].slice(1, -1)
          : fields[k];
      if (/^\.{3,}$|^…$/.test(f)) throw new ArrayParseError(SUMMARISED_FIX, `line ${lineNo}`);
      const n = f === '' ? null : numberWord(f);
      if (n === null) {
        bad = k;
        break;
      }
      row.push(n.value);
      steps.add(n);
    }
    if (bad >= 0) {
      if (total === 0 && !headerSkipped) {
        headerSkipped = true; // a header line of names
        continue;
      }
      const f = fields[bad];
      throw new ArrayParseError(
        f === ''
          ? `field ${bad + 1} is empty (expected a number)`
          : `field ${bad + 1} “${f.slice(0, 40)}” is not a number`,
        `line ${lineNo}`,
      );
    }
    if (width < 0) width = row.length;
    else if (row.length !== width)
      throw new ArrayParseError(
        `this row has ${row.length} values, but the rows before it have ${width} (every row needs the same length)`,
        `line ${lineNo}`,
      );
    total += row.length;
    if (total > ARRAY_LIMITS.maxElements)
      throw new ArrayParseError(`more than ${ARRAY_LIMITS.maxElements.toLocaleString('en')} numbers`, `line ${lineNo}`);
    blocks[blocks.length - 1].push(row);
  }
  if (blocks[blocks.length - 1].length === 0) blocks.pop();
  if (blocks.length === 0)
    throw new ArrayParseError('no numbers found (paste what NumPy printed, e.g. [[0.5 0.5] [1. 0.]])');
  const rows = blocks[0].length;
  blocks.forEach((b, i) => {
    if (b.length !== rows)
      throw new ArrayParseError(
        `block ${i + 1} has ${b.length} rows, but block 1 has ${rows} (every block needs the same number of rows)`,
      );
  });
  const shape = blocks.length > 1 ? [blocks.length, rows, width] : rows === 1 ? [width] : [rows, width];
  checkedSize(shape, name ?? 'the array');
  const data = new Float64Array(total);
  let k = 0;
  for (const b of blocks) for (const r of b) for (const v of r) data[k++] = v;
  const out: NdArray = { shape, data, source: 'printed', printStep: steps.step() };
  if (name !== undefined) out.name = name;
  return out;
}

function checkLength(text: string): void {
  if (typeof text !== 'string') throw new ArrayParseError('expected text');
  if (text.length > ARRAY_LIMITS.maxTextLength)
    throw new ArrayParseError(
      `the text is ${text.length.toLocaleString('en')} characters long; the limit is ${ARRAY_LIMITS.maxTextLength.toLocaleString('en')} (save it with np.save and drop the .npy file instead)`,
    );
}

/** Every array in pasted text (or a .json / .txt file). Throws ArrayParseError. */
export function parseArrayText(text: string): NdArray[] {
  checkLength(text);
  // No bracket or brace anywhere: a bare grid (CSV, np.savetxt, a spreadsheet's copy).
  if (!/[[{]/.test(text)) return [parseGrid(text)];
  return new Parser(new Lexer(text)).document();
}

/** Exactly one array (the common case for the W box). */
export function parseOneArray(text: string): NdArray {
  const all = parseArrayText(text);
  if (all.length !== 1)
    throw new ArrayParseError(
      `found ${all.length} arrays (${all.map((a, i) => a.name ?? `#${i + 1}`).join(', ')}); paste one`,
    );
  return all[0];
}

/** A .csv file: a bare grid (a header line of names is skipped). */
export function parseCsv(text: string, name?: string): NdArray {
  checkLength(text);
  return parseGrid(text, name);
}
