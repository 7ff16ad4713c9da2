// The text model's tokenizers (docs/text-model.md, "Corpus and tokens"), from model.json's
// `tokenizer`. No DOM.
//  - char: one token per Unicode code point; a symbol's id is its index in `symbols`; a code point
//    not in the table gets the unknown symbol's id.
//  - sentencepiece (BPE): SentencePiece's BPE encoding, written here for the one normalization the
//    trainer's script (scripts/text-model/spm.py) uses — identity, spaces as ▁, no dummy prefix, no
//    byte fallback — so the page's ids equal python3-sentencepiece's (a test over the whole
//    held-out split). Why not an npm port of SentencePiece: the ones there are 760 KB builds of
//    the whole library that load the .model file Node's way, for what is 80 lines here.

import type { TokenizerSpec } from './model-json';

export interface Tokenized {
  /** (t) token ids. */
  ids: Int32Array;
  /** (t) each token's text as typed (one code point for the char tokenizer, a piece's span of
   *  the text for BPE; an unknown token's own characters). */
  chars: string[];
  /** (t) true where the model sees the unknown id (a character not in the table). */
  unknown: boolean[];
}

/** What the Text tab needs of a tokenizer. */
export interface TextTokenizer {
  readonly unknownId: number;
  /** "character" or "token": what the page calls one position of the model's context. */
  readonly unit: 'character' | 'token';
  encode(text: string): Tokenized;
  /** The text of an id (a piece's ▁ as a space). */
  symbol(id: number): string;
}

export class CharTokenizer implements TextTokenizer {
  readonly unit = 'character' as const;
  private readonly index = new Map<string, number>();

  constructor(
    readonly symbols: readonly string[],
    readonly unknownId: number,
  ) {
    symbols.forEach((s, i) => this.index.set(s, i));
  }

  /** The ids of every code point of `text`. */
  encode(text: string): Tokenized {
    const chars = Array.from(text);
    const ids = new Int32Array(chars.length);
    const unknown = new Array<boolean>(chars.length);
    for (let i = 0; i < chars.length; i++) {
      const id = this.index.get(chars[i]);
      ids[i] = id ?? this.unknownId;
      unknown[i] = ids[i] === this.unknownId;
    }
    return { ids, chars, unknown };
  }

  /** The symbol of an id. */
  symbol(id: number): string {
    return this.symbols[id] ?? '';
  }
}

/** How the page names one position of the model's context, for a tokenizer's kind. */
export interface UnitWords {
  /** "character" / "token" */
  one: string;
  /** "characters" / "tokens" */
  many: string;
  /** the loss's unit: "nats/char" / "nats/token" */
  nats: string;
  /** the tokenizer in a sentence */
  how: string;
}

export function unitWords(spec: TokenizerSpec): UnitWords {
  return spec.kind === 'char'
    ? {
        one: 'character',
        many: 'characters',
        nats: 'nats/char',
        how: `one token per character (${spec.symbols.length} symbols)`,
      }
    : {
        one: 'token',
        many: 'tokens',
        nats: 'nats/token',
        how: `SentencePiece BPE tokens (${spec.pieces.length} pieces learned from the training split: whole common words, word pieces, single characters)`,
      };
}

/** The encoder model.json's tokenizer describes. */
export function makeTokenizer(spec: TokenizerSpec): TextTokenizer {
  return spec.kind === 'char'
    ? new CharTokenizer(spec.symbols, spec.unknownId)
    : new BpeTokenizer(spec.pieces, spec.scores, spec.types, spec.unknownId);
}

/** SentencePiece's piece types (sentencepiece_model.proto). */
export const PIECE_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

/** SentencePiece BPE (bpe_model.cc's Encode, alpha 0) for identity normalization without a dummy
 *  prefix: the text's spaces become ▁; the text splits into code points, except that a
 *  user-defined piece (the longest that matches) is one frozen symbol; then, repeatedly, the
 *  adjacent pair whose concatenation is a piece with the highest score merges (ties: the leftmost
 *  pair); a symbol that is no piece is unknown, and a run of unknown symbols is one unknown token
 *  (SentencePieceProcessor's merge of unknowns). */
export class BpeTokenizer implements TextTokenizer {
  readonly unit = 'token' as const;
  private readonly index = new Map<string, number>();
  private readonly userDefined: string[];

  constructor(
    /** (V) the pieces, ▁ for a space. */
    readonly pieces: readonly string[],
    /** (V) their scores (a merge's priority). */
    readonly scores: readonly number[],
    /** (V) their PIECE_TYPE. */
    readonly types: readonly number[],
    readonly unknownId: number,
  ) {
    pieces.forEach((p, i) => {
      // SentencePiece's pieces_: normal, user-defined and unused pieces can be merged into.
      const t = types[i];
      if (t === PIECE_TYPE.normal || t === PIECE_TYPE.userDefined || t === PIECE_TYPE.unused) this.index.set(p, i);
    });
    // Longest first: the prefix matcher takes the longest user-defined piece.
    this.userDefined = pieces.filter((_, i) => types[i] === PIECE_TYPE.userDefined).sort((a, b) => b.length - a.length);
  }

  encode(text: string): Tokenized {
    const norm = text.replace(/ /g, '▁');
    // (n) symbols: text, neighbours, frozen (a user-defined piece).
    // start: where a symbol begins in the text (▁ is one UTF-16 unit, as a space).
    const sym: string[] = [];
    const frozen: boolean[] = [];
    const start: number[] = [];
    for (let i = 0; i < norm.length;) {
      const u = this.userDefined.find((p) => norm.startsWith(p, i));
      const len = u ? u.length : (norm.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
      sym.push(norm.slice(i, i + len));
      frozen.push(!!u);
      start.push(i);
      i += len;
    }
    const n = sym.length;
    const prev = Array.from({ length: n }, (_, i) => i - 1);
    const next = Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1));
    // The agenda: a max-heap of candidate merges by (score, then the smaller left index).
    type Pair = { left: number; right: number; score: number; size: number };
    const heap: Pair[] = [];
    const before = (a: Pair, b: Pair) => a.score > b.score || (a.score === b.score && a.left < b.left);
    const push = (p: Pair) => {
      heap.push(p);
      for (let i = heap.length - 1; i > 0;) {
        const up = (i - 1) >> 1;
        if (!before(heap[i], heap[up])) break;
        [heap[i], heap[up]] = [heap[up], heap[i]];
        i = up;
      }
    };
    const pop = (): Pair => {
      const top = heap[0];
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        for (let i = 0; ;) {
          const l = 2 * i + 1,
            r = l + 1;
          let m = i;
          if (l < heap.length && before(heap[l], heap[m])) m = l;
          if (r < heap.length && before(heap[r], heap[m])) m = r;
          if (m === i) break;
          [heap[i], heap[m]] = [heap[m], heap[i]];
          i = m;
        }
      }
      return top;
    };
    const consider = (left: number, right: number) => {
      if (left < 0 || right < 0 || frozen[left] || frozen[right]) return;
      const piece = sym[left] + sym[right];
      const id = this.index.get(piece);
      if (id !== undefined) push({ left, right, score: this.scores[id], size: piece.length });
    };
    for (let i = 1; i < n; i++) consider(i - 1, i);
    while (heap.length > 0) {
      const { left, right, size } = pop();
      // Stale: a side was merged away or grew since the pair was seen.
      if (sym[left] === '' || sym[right] === '' || sym[left].length + sym[right].length !== size) continue;
      sym[left] += sym[right];
      sym[right] = '';
      next[left] = next[right];
      if (next[right] >= 0) prev[next[right]] = left;
      consider(prev[left], left);
      consider(left, next[left]);
    }
    const ids: number[] = [];
    const chars: string[] = [];
    const unknown: boolean[] = [];
    for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]) {
      const id = this.index.get(sym[i]);
      const typed = text.slice(start[i], start[i] + sym[i].length); // a typed ▁ stays ▁
      if (id === undefined && unknown.length > 0 && unknown[unknown.length - 1]) {
        chars[chars.length - 1] += typed; // a run of unknown symbols is one token
        continue;
      }
      ids.push(id ?? this.unknownId);
      chars.push(typed);
      unknown.push(id === undefined);
    }
    return { ids: Int32Array.from(ids), chars, unknown };
  }

  symbol(id: number): string {
    return (this.pieces[id] ?? '').replace(/▁/g, ' ');
  }
}

/** A token's text as a cell label: whitespace and control characters named so they can be seen. */
export function showChar(c: string): string {
  return Array.from(c, showOne).join('');
}

function showOne(c: string): string {
  if (c === ' ') return '␣';
  if (c === '\n') return '↵';
  if (c === '\t') return '⇥';
  const cp = c.codePointAt(0) ?? 0;
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp); // ␀ … ␟
  if (cp === 0x7f) return '␡';
  return c;
}

/** The last `n` tokens of a tokenized text (the model's context), and how many were dropped. */
export function lastTokens(t: Tokenized, n: number): { tokens: Tokenized; dropped: number } {
  const dropped = Math.max(0, t.ids.length - n);
  if (dropped === 0) return { tokens: t, dropped };
  return {
    tokens: { ids: t.ids.slice(dropped), chars: t.chars.slice(dropped), unknown: t.unknown.slice(dropped) },
    dropped,
  };
}
