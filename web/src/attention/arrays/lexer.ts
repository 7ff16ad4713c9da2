// The tokenizer of pasted array text (text.ts parses its tokens): brackets, separators, numbers
// in NumPy's and Python's spellings, names and quoted strings, each with its line and column; one
// linear pass, and the only regex runs on tokens of at most ARRAY_LIMITS.maxNumberLength
// characters. Also the rounding step a print implies (StepTracker).
import { ARRAY_LIMITS, ArrayParseError } from './types';

export type TokKind =
  '[' | ']' | '{' | '}' | '(' | ')' | ',' | ':' | '=' | ';' | 'num' | 'word' | 'str' | 'ellipsis' | 'eof';
export interface Tok {
  kind: TokKind;
  text: string;
  value: number;
  /** For numbers: how it was written (see numberWord). */
  num: { decimals: number; exp: number; sci: boolean; special: boolean } | null;
  line: number;
  col: number;
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function isWordChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 46 /* . */ ||
    c === 43 /* + */ ||
    c === 45 /* - */ ||
    c === 95
  ); /* _ */
}
function isSpace(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 11 ||
    c === 12 ||
    c === 0xa0 ||
    c === 0xfeff ||
    c === 0x2009 ||
    c === 0x202f
  );
}

/** The value of a number word, or null. Also reads nan / inf / True / False in their spellings.
 *  `decimals`: digits after the point (of the mantissa); `exp`: the exponent (0 without one). */
export function numberWord(
  w: string,
): { value: number; decimals: number; exp: number; sci: boolean; special: boolean } | null {
  const lower = w.toLowerCase();
  const body = lower[0] === '-' || lower[0] === '+' ? lower.slice(1) : lower;
  const sign = lower[0] === '-' ? -1 : 1;
  const special = (value: number) => ({ value, decimals: 0, exp: 0, sci: false, special: true });
  if (body === 'nan') return special(NaN);
  if (body === 'inf' || body === 'infinity') return special(sign * Infinity);
  if (w === 'True' || w === 'true' || w === 'np.True_') return special(1);
  if (w === 'False' || w === 'false' || w === 'np.False_') return special(0);
  if (!NUMBER.test(w)) return null;
  const e = lower.indexOf('e');
  const mant = e < 0 ? lower : lower.slice(0, e);
  const dot = mant.indexOf('.');
  return {
    value: Number(w),
    decimals: dot < 0 ? 0 : mant.length - dot - 1,
    exp: e < 0 ? 0 : Number(lower.slice(e + 1)),
    sci: e >= 0,
    special: false,
  };
}

/**
 * The rounding step of a printed array. NumPy's default floatmode ('maxprec') prints each element
 * with at most `precision` digits and drops trailing zeros (`1.` next to `0.47`), so every element
 * is within half a step of its value, the step being set by the element with the most digits:
 * 10^-(most decimals) in fixed notation; in scientific notation (all elements share the mantissa
 * digits) 10^(largest exponent − most mantissa decimals), an upper bound for every element.
 */
export class StepTracker {
  private fixedDec = -1;
  private sciDec = -1;
  private sciExp = -Infinity;
  add(n: { decimals: number; exp: number; sci: boolean; special: boolean }): void {
    if (n.special) return;
    if (n.sci) {
      if (n.decimals > this.sciDec) this.sciDec = n.decimals;
      if (n.exp > this.sciExp) this.sciExp = n.exp;
    } else if (n.decimals > this.fixedDec) this.fixedDec = n.decimals;
  }
  step(): number {
    const fixed = this.fixedDec < 0 ? 0 : Math.pow(10, -this.fixedDec);
    const sci = this.sciDec < 0 ? 0 : Math.pow(10, this.sciExp - this.sciDec);
    return Math.max(fixed, sci);
  }
}

export class Lexer {
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private peeked: Tok | null = null;
  constructor(private readonly s: string) {}

  where(t: Tok): string {
    return `line ${t.line}, column ${t.col}`;
  }
  peek(): Tok {
    return (this.peeked ??= this.read());
  }
  next(): Tok {
    const t = this.peek();
    this.peeked = null;
    return t;
  }
  private tok(kind: TokKind, text: string, start: number, value = 0, num: Tok['num'] = null): Tok {
    return { kind, text, value, num, line: this.line, col: start - this.lineStart + 1 };
  }
  private read(): Tok {
    const s = this.s;
    for (;;) {
      if (this.i >= s.length) return this.tok('eof', '', this.i);
      const c = s.charCodeAt(this.i);
      if (!isSpace(c)) break;
      this.i++;
      if (c === 10) {
        this.line++;
        this.lineStart = this.i;
      }
    }
    const start = this.i;
    const ch = s[start];
    if ('[]{}(),:=;'.includes(ch)) {
      this.i++;
      return this.tok(ch as TokKind, ch, start);
    }
    if (ch === '…') {
      this.i++;
      return this.tok('ellipsis', ch, start);
    }
    if (ch === '"' || ch === "'") {
      let j = start + 1;
      let out = '';
      while (j < s.length && s[j] !== ch && s[j] !== '\n') {
        if (s[j] === '\\' && j + 1 < s.length) j++;
        out += s[j];
        j++;
        if (out.length > 256)
          throw new ArrayParseError(
            'a quoted name longer than 256 characters',
            `line ${this.line}, column ${start - this.lineStart + 1}`,
          );
      }
      if (s[j] !== ch)
        throw new ArrayParseError(
          `the quote ${ch} is never closed`,
          `line ${this.line}, column ${start - this.lineStart + 1}`,
        );
      this.i = j + 1;
      return this.tok('str', out, start);
    }
    let j = start;
    while (j < s.length && isWordChar(s.charCodeAt(j))) {
      j++;
      if (j - start > ARRAY_LIMITS.maxNumberLength)
        throw new ArrayParseError(
          `a word or number longer than ${ARRAY_LIMITS.maxNumberLength} characters`,
          `line ${this.line}, column ${start - this.lineStart + 1}`,
        );
    }
    if (j === start) {
      const cp = s.codePointAt(start) ?? 0;
      throw new ArrayParseError(
        `unexpected character “${String.fromCodePoint(cp)}” (expected a number, a bracket, a comma or a space)`,
        `line ${this.line}, column ${start - this.lineStart + 1}`,
      );
    }
    this.i = j;
    const w = s.slice(start, j);
    if (/^\.{3,}$/.test(w)) return this.tok('ellipsis', w, start);
    const n = numberWord(w);
    return n ? this.tok('num', w, start, n.value, n) : this.tok('word', w, start);
  }
}
