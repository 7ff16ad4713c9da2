// The Text model tab's link keys (web/src/text/state.ts): `text` (long text compressed as `tx`),
// `ckpt` (−1 = the last checkpoint, never written) and `thead` (layer.head from 1); defaults stay
// out of the link; whatever is wrong is corrected with a notice.
import { describe, it, expect } from 'vitest';
import LZString from 'lz-string';
import { decodeHash, defaultState, encodeState, normalizeState, withPatch } from '../../web/src/app/state';
import { DEFAULT_TEXT, TEXT_LIMITS, headLabel, headText, parseHead } from '../../web/src/text/state';

const GEN_DEFAULTS = { dlen: 40, temp: 0, topk: 0, topp: 1, sseed: 0, tgen: false };
const stateWith = (text: Partial<ReturnType<typeof defaultState>['text']>) =>
  normalizeState(withPatch(defaultState(), { text })).state;

describe('the Text model tab’s link', () => {
  it('leaves the defaults out, and opens a link with every key', () => {
    const d = defaultState();
    expect(d.text).toEqual({ text: DEFAULT_TEXT, ckpt: -1, head: '1.1', ...GEN_DEFAULTS });
    expect(encodeState(d)).toBe('#v=1');
    const h = '#v=1&view=text&text=the+cat+sat%2C+the+cat&ckpt=4&thead=2.1';
    const got = decodeHash(h);
    expect(got.notices).toEqual([]);
    expect(got.state.page.view).toBe('text');
    expect(got.state.text).toEqual({ text: 'the cat sat, the cat', ckpt: 4, head: '2.1', ...GEN_DEFAULTS });
    expect(encodeState(got.state)).toBe('#v=1&view=text&text=the%20cat%20sat%2C%20the%20cat&ckpt=4&thead=2.1');
  });

  it('compresses a long text (tx=, lz-string) and reads it back exactly, newlines included', () => {
    const text = 'Fellow citizens,\nthe state of the Union is strong. '.repeat(20);
    const s = stateWith({ text });
    const h = encodeState(s);
    expect(h).toMatch(/&tx=/);
    expect(h).not.toMatch(/&text=/);
    expect(h.length).toBeLessThan(encodeURIComponent(text).length);
    const back = decodeHash(h);
    expect(back.notices).toEqual([]);
    expect(back.state.text.text).toBe(text);
  });

  it('corrects what is wrong, with a notice', () => {
    const cases: [string, Partial<ReturnType<typeof defaultState>['text']>, RegExp][] = [
      ['#v=1&thead=0.1', { head: '1.1' }, /text model: head: “0\.1” is not layer\.head/],
      ['#v=1&thead=two', { head: '1.1' }, /is not layer\.head/],
      ['#v=1&thead=65.1', { head: '1.1' }, /is not layer\.head/],
      ['#v=1&ckpt=-5', { ckpt: -1 }, /checkpoint step: -5 is outside -1…/],
      ['#v=1&ckpt=2.5', { ckpt: 3 }, /checkpoint step: 2\.5 rounded to 3/],
      ['#v=1&tx=%%%', { text: DEFAULT_TEXT }, /compressed text is corrupt/],
      ['#v=1&text=%E0%A4%A', { text: DEFAULT_TEXT }, /not valid percent-encoding/],
    ];
    for (const [h, want, re] of cases) {
      const d = decodeHash(h);
      expect(d.state.text, h).toEqual({ ...defaultState().text, ...want });
      expect(d.notices.join(' | '), h).toMatch(re);
    }
    expect(decodeHash('#v=1&thead=+2.3').state.text.head).toBe('2.3');
  });

  it('keeps at most maxChars characters (the last ones), and empty text as empty', () => {
    const long = 'ab'.repeat(TEXT_LIMITS.maxChars);
    const n = normalizeState(withPatch(defaultState(), { text: { text: long } }));
    expect(Array.from(n.state.text.text).length).toBe(TEXT_LIMITS.maxChars);
    expect(n.notices.join(' ')).toMatch(/8,000 characters is more than the limit of 4,000; kept the last 4,000/);
    const h = `#v=1&tx=${LZString.compressToEncodedURIComponent(long)}`;
    expect(decodeHash(h).state.text.text).toBe(n.state.text.text);
    const empty = decodeHash('#v=1&text=');
    expect(empty.notices).toEqual([]);
    expect(empty.state.text.text).toBe('');
    expect(decodeHash(encodeState(empty.state)).state.text.text).toBe('');
  });

  it('replaces a lone surrogate (it cannot go into a link) with U+FFFD', () => {
    const n = normalizeState(withPatch(defaultState(), { text: { text: 'a\ud800b' } }));
    expect(n.state.text.text).toBe('a\ufffdb');
    expect(n.notices.join(' ')).toMatch(/unpaired UTF-16 surrogates/);
    expect(decodeHash(encodeState(n.state)).state.text.text).toBe('a\ufffdb');
  });

  it('names heads from 1 and keeps them 0-based inside', () => {
    expect(parseHead('2.3')).toEqual({ layer: 1, head: 2 });
    expect(headText(1, 2)).toBe('2.3');
    expect(headLabel(1, 2)).toBe('L2 H3');
  });

  it('carries a continuation request: tgen, dlen, temp, topk, topp, sseed (defaults left out)', () => {
    const h = '#v=1&view=text&dlen=25&temp=0.8&topk=5&topp=0.9&sseed=3&tgen=1';
    const got = decodeHash(h);
    expect(got.notices).toEqual([]);
    expect(got.state.text).toMatchObject({ dlen: 25, temp: 0.8, topk: 5, topp: 0.9, sseed: 3, tgen: true });
    expect(decodeHash(encodeState(got.state)).state.text).toEqual(got.state.text);
    expect(encodeState(stateWith({ tgen: true }))).toBe('#v=1&tgen=1');
  });

  it('corrects bad continuation settings, with a notice naming the setting', () => {
    const cases: [string, Partial<ReturnType<typeof defaultState>['text']>, RegExp][] = [
      ['#v=1&dlen=0', { dlen: 1 }, /tokens to generate: 0 is outside 1…8192; using 1/],
      ['#v=1&dlen=7.4', { dlen: 7 }, /tokens to generate: 7\.4 rounded to 7/],
      ['#v=1&temp=-1', { temp: 0 }, /temperature: -1 is outside 0…10; using 0/],
      ['#v=1&temp=hot', {}, /temp: “hot” is not a number; it was ignored/],
      ['#v=1&topk=-2', { topk: 0 }, /top-k: -2 is outside 0…65536; using 0/],
      ['#v=1&topp=0', { topp: 1 }, /top-p: must be more than 0 \(1 = off\); using 1/],
      ['#v=1&topp=1.5', { topp: 1 }, /top-p: 1\.5 is outside 0…1; using 1/],
      ['#v=1&sseed=-1', { sseed: 0 }, /sampling seed: -1 is outside 0…4294967295; using 0/],
      ['#v=1&tgen=yes', {}, /tgen: “yes” is not 0 or 1; it was ignored/],
    ];
    for (const [h, want, re] of cases) {
      const d = decodeHash(h);
      expect(d.state.text, h).toEqual({ ...defaultState().text, ...want });
      expect(d.notices.join(' | '), h).toMatch(re);
    }
  });
});
