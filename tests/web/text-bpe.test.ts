// The Text tab's SentencePiece BPE encoder against python3-sentencepiece itself
// (tests/oracle/gen_bpe_fixtures.py → tests/fixtures/bpe-tokenizer.json): the shipped model.json's
// pieces, scores and types are the ones SentencePiece reads from the shipped tokenizer.model, and
// the page's ids equal SentencePiece's for the whole held-out split and for texts chosen to catch
// the encoder's rules (spaces, paragraph breaks, runs of unknown characters, emoji).
import { describe, it, expect } from 'vitest';
import { BpeTokenizer, showChar } from '../../web/src/text/tokenizer';
import { parseModelJson } from '../../web/src/text/model-files';
import { fs, heldOutText, sha256 } from './text-helpers';

interface BpeFixture {
  model: { sha256: string; pieces: string[]; scores: number[]; types: number[]; unknownId: number };
  heldOut: { textSha256: string; count: number; idsSha256: string; unknown: number; first: number[]; last: number[] };
  cases: { text: string; ids: number[] }[];
}
const REF = JSON.parse(
  new TextDecoder().decode(fs.readFileSync(new URL('../fixtures/bpe-tokenizer.json', import.meta.url))),
) as BpeFixture;
const SHIPPED = new URL('../../web/public/models/sotu-bpe/', import.meta.url);
const shipped = parseModelJson(new TextDecoder().decode(fs.readFileSync(new URL('model.json', SHIPPED))));

describe('the shipped model’s SentencePiece tokenizer', () => {
  const spec = shipped.tokenizer;
  if (spec.kind !== 'sentencepiece') throw new Error('the shipped model has no SentencePiece tokenizer');
  const tok = new BpeTokenizer(spec.pieces, spec.scores, spec.types, spec.unknownId);

  it('model.json’s pieces, scores and types are what SentencePiece reads from tokenizer.model', async () => {
    expect(await sha256(new Uint8Array(fs.readFileSync(new URL('tokenizer.model', SHIPPED))))).toBe(REF.model.sha256);
    expect(spec.pieces).toEqual(REF.model.pieces);
    expect(spec.scores).toEqual(REF.model.scores);
    expect(spec.types).toEqual(REF.model.types);
    expect(spec.unknownId).toBe(REF.model.unknownId);
  });

  it(`gives SentencePiece’s ids for the whole held-out split (${REF.heldOut.count.toLocaleString('en')} tokens)`, async () => {
    const text = heldOutText();
    const ref = REF.heldOut;
    expect(await sha256(new TextEncoder().encode(text))).toBe(ref.textSha256);
    const t = tok.encode(text);
    expect(t.ids.length).toBe(ref.count);
    expect(Array.from(t.ids.subarray(0, 64))).toEqual(ref.first);
    expect(Array.from(t.ids.subarray(t.ids.length - 64))).toEqual(ref.last);
    expect(t.unknown.filter((u) => u).length).toBe(ref.unknown);
    expect(await sha256(new Uint8Array(Uint32Array.from(t.ids).buffer))).toBe(ref.idsSha256);
    // The tokens' texts spell the text again (an unknown token keeps its own characters).
    expect(t.chars.join('')).toBe(text);
  }, 60_000);

  for (const c of REF.cases)
    it(`encodes ${JSON.stringify(c.text)} as SentencePiece does`, () => {
      const t = tok.encode(c.text);
      expect(Array.from(t.ids)).toEqual(c.ids);
      expect(t.chars.join('')).toBe(c.text);
      expect(t.unknown).toEqual(c.ids.map((id) => id === REF.model.unknownId));
    });

  it('shows a piece’s spaces and line breaks in its label', () => {
    expect(showChar(' the')).toBe('␣the');
    expect(showChar('\n')).toBe('↵');
    expect(tok.symbol(spec.pieces.indexOf('▁the'))).toBe(' the');
  });
});
