// The Text model tab's tokenizer and next-token numbers against Python and NumPy
// (tests/oracle/gen_text_view_fixtures.py): the ids of the whole held-out split equal Python's
// str-based ones; log-softmax and the top 5 equal NumPy's float64 ones.
import { describe, it, expect } from 'vitest';
import { lastTokens, showChar } from '../../web/src/text/tokenizer';
import { logSoftmaxRow, meanSurprise, nextLogprobs, topK } from '../../web/src/text/next';
import { parseModelJson } from '../../web/src/text/model-files';
import { REF, charSpec, charTok, heldOutText, modelText, sha256 } from './text-helpers';

describe('the tokenizer', () => {
  const info = parseModelJson(modelText());
  const tok = charTok(info);

  it('model.json’s table is Python’s (the training split’s code points, then U+2047)', () => {
    expect(charSpec(info).symbols).toEqual(REF.tokens.symbols);
    expect(charSpec(info).symbols[info.tokenizer.unknownId]).toBe('⁇');
  });

  it('gives Python’s ids for the whole held-out split (772,740 characters, 388 unknown)', async () => {
    const text = heldOutText();
    const ref = REF.tokens.heldOut;
    expect(await sha256(new TextEncoder().encode(text))).toBe(ref.textSha256);
    const t = tok.encode(text);
    expect(t.ids.length).toBe(ref.chars);
    expect(t.chars.length).toBe(ref.chars);
    expect(Array.from(t.ids.subarray(0, 64))).toEqual(ref.first);
    expect(Array.from(t.ids.subarray(t.ids.length - 64))).toEqual(ref.last);
    expect(t.unknown.filter((u) => u).length).toBe(ref.unknown);
    expect(t.ids.filter((i) => i === info.tokenizer.unknownId).length).toBe(ref.unknown);
    expect(await sha256(new Uint8Array(Uint32Array.from(t.ids).buffer))).toBe(ref.idsSha256);
  }, 60_000);

  it('reads code points, not UTF-16 units; unknown characters get the unknown id', () => {
    const t = tok.encode('a😀b é\n');
    expect(t.chars).toEqual(['a', '😀', 'b', ' ', 'é', '\n']);
    expect(Array.from(t.ids)).toEqual([61, 90, 62, 2, 90, 1]);
    expect(t.unknown).toEqual([false, true, false, false, true, false]);
    expect(tok.encode('').ids.length).toBe(0);
  });

  it('keeps the last n tokens of a long text', () => {
    const t = tok.encode('abcdef');
    const { tokens, dropped } = lastTokens(t, 4);
    expect(dropped).toBe(2);
    expect(tokens.chars.join('')).toBe('cdef');
    expect(Array.from(tokens.ids)).toEqual(Array.from(t.ids.subarray(2)));
    expect(lastTokens(t, 10).dropped).toBe(0);
  });

  it('names whitespace and control characters in the cells', () => {
    expect([' ', '\n', '\t', '\u0002', 'x'].map(showChar)).toEqual(['␣', '↵', '⇥', '␂', 'x']);
  });
});

describe('next-token numbers', () => {
  for (const [n, c] of REF.softmax.entries())
    it(`log-softmax and top 5 equal NumPy's (case ${n + 1}, V = ${c.logits.length})`, () => {
      const V = c.logits.length;
      const logits = Float32Array.from(c.logits);
      const lp = logSoftmaxRow(logits, 0, V);
      for (let v = 0; v < V; v++) expect(Math.abs(lp[v] - c.logSoftmax[v])).toBeLessThanOrEqual(1e-12);
      const top = topK(logits, 0, V, 5);
      expect(top.map((x) => x.id)).toEqual(c.top.map((x) => x.id));
      for (const [i, x] of top.entries()) expect(Math.abs(x.p - c.top[i].p)).toBeLessThanOrEqual(1e-12);
    });

  it('reads row i − 1 for token i, from a (t, V) block', () => {
    const V = REF.softmax[0].logits.length;
    const rows = Float32Array.from([...REF.softmax[0].logits, ...REF.softmax[0].logits.map((x) => -x)]);
    const lp = nextLogprobs(rows, [5, 7, 11], V);
    expect(lp.length).toBe(2);
    expect(Math.abs(lp[0] - REF.softmax[0].logSoftmax[7])).toBeLessThanOrEqual(1e-12);
    expect(lp[1]).toBe(logSoftmaxRow(rows, 1, V)[11]);
    expect(meanSurprise(lp)).toBeCloseTo(-(lp[0] + lp[1]) / 2, 15);
    expect(meanSurprise(new Float64Array(0))).toBeNaN();
  });
});
