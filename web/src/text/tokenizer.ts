// The text model's tokenizer: one token per Unicode code point (docs/text-model.md, "Corpus and
// tokens"). The table is model.json's `tokenizer.symbols`: a symbol's id is its index; a code
// point not in the table gets the unknown symbol's id. No DOM.

export interface Tokenized {
  /** (t) token ids. */
  ids: Int32Array;
  /** (t) the characters as typed (a code point each). */
  chars: string[];
  /** (t) true where the model sees the unknown id (a character not in the table). */
  unknown: boolean[];
}

export class CharTokenizer {
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

/** A character as a cell label: whitespace and control characters named so they can be seen. */
export function showChar(c: string): string {
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
