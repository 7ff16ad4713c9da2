import { describe, it, expect } from 'vitest';
import LZString from 'lz-string';
import { decodeHash, encodeState, defaultState, LIMITS, type State, withLinkFields } from '../../web/src/app/state';
import { LESSON_SENTENCE } from '../../web/src/attention/state';
import { PRESETS, presetHash, presetState } from '../../web/src/app/presets';

const roundTrip = (s: State) => decodeHash(encodeState(s));

describe('URL codec: round trips', () => {
  it('src=text opens the Text model tab instead of silently showing other heads', () => {
    const d = decodeHash('#v=1&src=text');
    expect(d.state.model.source).toBe('induction');
    expect(d.state.page.view).toBe('text');
    expect(d.notices.join(' ')).toMatch(/^src=text: the model trained on real text is shown in the Text tab, so this link opens there\.$/);
    expect(decodeHash('#v=1&src=bogus').notices.join(' ')).toMatch(/weights source “bogus” is unknown; using induction/);
  });

  it('the default state encodes to just the version and decodes without notices', () => {
    expect(encodeState(defaultState())).toBe('#v=1');
    expect(decodeHash('#v=1')).toEqual({ state: defaultState(), notices: [] });
    expect(decodeHash('')).toEqual({ state: defaultState(), notices: [] });
  });

  // One changed field at a time, each to a valid non-default value.
  const variants: [string, Record<string, unknown>][] = [
    ['src', { src: 'random' }],
    ['tokens', { tokens: ['a', 'b', 'c'] }],
    ['sharp', { sharp: 3.5 }],
    ['seed', { seed: 4294967295 }],
    ['init scaled', { init: 'scaled' }],
    ['heads', { heads: 4, kv: 4 }],
    ['kv', { heads: 4, kv: 1 }],
    ['dm', { dm: 64 }],
    ['dk', { dk: 1024 }],
    ['causal', { causal: false }],
    ['win', { win: 3 }],
    ['pad', { pad: [0, 5, 10] }],
    ['fill neg_inf→finite', { fill: 'finite' }],
    ['fill zero', { fill: 'zero' }],
    ['scale none', { scale: 'none' }],
    ['scale custom', { scale: 0.125 }],
    ['scale smallest', { scale: 0.001 }],
    ['view', { view: 'mask' }],
    ['view output', { view: 'output' }],
    ['view scale', { view: 'scale' }],
    ['head', { head: 1 }],
  ];
  for (const [name, patch] of variants) {
    it(`round-trips ${name}`, () => {
      const s = withLinkFields(defaultState(), patch);
      const enc = encodeState(s);
      expect(enc).not.toBe('#v=1');
      expect(roundTrip(s)).toEqual({ state: s, notices: [] });
    });
  }

  it('round-trips every field changed at once', () => {
    const s = withLinkFields(defaultState(), {
      src: 'random', tokens: ['x', 'y', 'z', 'w'], sharp: 2, seed: 99, init: 'scaled', heads: 6, kv: 3, dm: 24, dk: 7,
      causal: false, win: 2, pad: [1, 3], fill: 'zero', scale: 2.5, view: 'output', head: 5,
      tstart: 256, tend: 2048, tdm: 768, tdk: 128, th: 4, tker: 'tiled', tcausal: true, tmode: 'proj', tw: 2,
    });
    expect(roundTrip(s)).toEqual({ state: s, notices: [] });
  });

  for (const p of PRESETS) {
    it(`round-trips preset ${p.id}`, () => {
      const s = presetState(p);
      const d = decodeHash(presetHash(p));
      expect(d.notices).toEqual([]);
      expect(d.state).toEqual(s);
    });
  }

  it('keeps tokens with URL-special characters intact', () => {
    const tokens = ['a+b', '&', '=', '#', '%', '%zz', 'ü', '猫', '🐈', 'x&v=2', '"q"', "'", '<b>'];
    const s = withLinkFields(defaultState(), { tokens });
    expect(roundTrip(s)).toEqual({ state: s, notices: [] });
  });

  it('compresses long token lists with lz-string and reads them back', () => {
    const tokens = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const s = withLinkFields(defaultState(), { tokens });
    const enc = encodeState(s);
    expect(enc).toContain('&tz=');
    expect(enc).not.toContain('tokens=');
    expect(roundTrip(s)).toEqual({ state: s, notices: [] });
  });

  it('writes short token lists readably', () => {
    expect(encodeState(withLinkFields(defaultState(), { tokens: ['hello', 'world'] }))).toBe('#v=1&tokens=hello+world');
  });

  it('accepts hand-written links with spaces in tokens', () => {
    const d = decodeHash('#v=1&tokens=one%20two+three');
    expect(d.state.model.tokens).toEqual(['one', 'two', 'three']);
  });
});

describe('URL codec: hostile input', () => {
  const clean = (h: string) => {
    const d = decodeHash(h);
    expect(d.notices.length).toBeGreaterThan(0);
    return d;
  };

  it('garbage gives the defaults and notices', () => {
    for (const g of ['#%%%%', '#&&&==&', '#\u0000\u0001', '#v', '#===', '#v=1&%E0%A4%A=3', 'not a hash at all']) {
      const d = decodeHash(g);
      expect(d.state.model.tokens.length).toBeGreaterThan(0);
      expect(Number.isFinite(d.state.model.heads)).toBe(true);
      expect(d.notices.length).toBeGreaterThan(0);
    }
  });

  it('non-strings decode to the defaults', () => {
    for (const g of [undefined, null, 42, {}, []]) expect(decodeHash(g).state).toEqual(defaultState());
  });

  it('a wrong version shows the defaults with a notice', () => {
    for (const v of ['2', '0', '1.0', 'abc', '', '999999999999']) {
      const d = clean(`#v=${v}&heads=4&src=random`);
      expect(d.state).toEqual(defaultState());
      expect(d.notices.join(' ')).toMatch(/version/);
    }
  });

  it('a missing version is read as v=1 with a notice', () => {
    const d = clean('#src=random&heads=4&kv=4');
    expect(d.state.model.heads).toBe(4);
    expect(d.notices.join(' ')).toMatch(/no version/);
  });

  it('NaN, Infinity, hex and negative numbers are corrected', () => {
    const d = clean('#v=1&src=random&heads=NaN&dm=Infinity&dk=0x10&seed=-5&sharp=-1&win=-3&head=1e400&scale=NaN');
    const s = d.state;
    expect(s.model.heads).toBe(2);
    expect(s.model.dModel).toBe(8);
    expect(s.model.dK).toBe(4);
    expect(s.model.seed).toBe(0);
    expect(s.model.sharpness).toBe(0);
    expect(s.model.window).toBe(0);
    expect(s.page.head).toBe(0);
    expect(s.model.scale).toBe('sqrt');
  });

  it('out-of-range numbers are clamped with a notice naming the field', () => {
    const d = clean('#v=1&src=random&heads=1000&dk=999999&dm=0&scale=1e9');
    expect(d.state.model.heads).toBe(LIMITS.maxHeads);
    expect(d.state.model.dK).toBe(LIMITS.maxDk);
    expect(d.state.model.dModel).toBe(1);
    expect(d.state.model.scale).toBe(LIMITS.maxScale);
    expect(d.notices.join('\n')).toMatch(/heads/);
    expect(d.notices.join('\n')).toMatch(/d_k/);
  });

  it('K/V heads that do not divide the heads are corrected', () => {
    const d = clean('#v=1&src=random&heads=6&kv=4');
    expect(d.state.model.kvHeads).toBe(3);
  });

  it('an enormous T is cut to the limit', () => {
    const tokens = Array.from({ length: 5000 }, (_, i) => `t${i}`);
    const h = '#v=1&tz=' + LZString.compressToEncodedURIComponent(tokens.join(' '));
    expect(h.length).toBeLessThan(LIMITS.maxHashLength);
    const d = clean(h);
    expect(d.state.model.tokens.length).toBe(LIMITS.maxT);
    expect(d.state.model.tokens[LIMITS.maxT - 1]).toBe(`t${LIMITS.maxT - 1}`);
    expect(d.notices.join(' ')).toMatch(/limit of 256/);
  });

  it('a 10 000-token link is read and its tokens cut to the limit with a notice', () => {
    const h = '#v=1&tokens=' + Array.from({ length: 10_000 }, (_, i) => `t${i}`).join('+');
    const d = clean(h);
    expect(d.state.model.tokens).toEqual(Array.from({ length: LIMITS.maxT }, (_, i) => `t${i}`));
    expect(d.notices).toEqual([`tokens: 10000 tokens is more than the limit of ${LIMITS.maxT}; kept the first ${LIMITS.maxT}`]);
  });

  it('a 300 KB hash is ignored, not parsed', () => {
    const h = '#v=1&tokens=' + 'a+'.repeat(150_000);
    const d = clean(h);
    expect(d.state).toEqual(defaultState());
    expect(d.notices[0]).toMatch(/ignored/);
    expect(d.notices.join('').length).toBeLessThan(500);
  });

  it('a corrupt compressed payload falls back to the lesson sentence', () => {
    for (const z of ['!!!!', 'AAAA', '', 'N4Ig%']) {
      const d = clean('#v=1&tz=' + z);
      expect(d.state.model.tokens).toEqual(LESSON_SENTENCE);
    }
  });

  it('HTML and script in tokens stay plain strings', () => {
    const payload = ['<img', 'src=x', 'onerror=alert(1)>', '<script>alert(1)</script>', '"><svg/onload=alert(1)>'];
    const s = withLinkFields(defaultState(), { tokens: payload });
    const d = roundTrip(s);
    expect(d.state.model.tokens).toEqual(payload);
    // Straight from a hand-made link too.
    const d2 = decodeHash('#v=1&tokens=%3Cscript%3Ealert(1)%3C%2Fscript%3E');
    expect(d2.state.model.tokens).toEqual(['<script>alert(1)</script>']);
  });

  it('control characters are removed from tokens; long tokens are shortened', () => {
    const d = clean('#v=1&tokens=a%00b+' + 'x'.repeat(100) + '+%E2%80%AEevil');
    expect(d.state.model.tokens).toEqual(['ab', 'x'.repeat(LIMITS.maxTokenLength), 'evil']);
  });

  it('unknown keys are dropped with a notice, known ones kept', () => {
    const d = clean('#v=1&foo=bar&heads=4&kv=2&src=random&__proto__=1&constructor=x');
    expect(d.state.model.heads).toBe(4);
    expect(d.notices.filter((n) => n.includes('unknown setting')).length).toBe(3);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('unknown enum values are replaced', () => {
    const d = clean('#v=1&src=evil&fill=maybe&causal=yes&view=%3Cb%3E&init=xavier');
    expect(d.state.model.source).toBe('induction');
    expect(d.state.model.init).toBe('normal');
    expect(d.notices.some((n) => n.includes('weight init'))).toBe(true);
    expect(d.state.model.fill).toBe('neg_inf');
    expect(d.state.model.causal).toBe(true);
    expect(d.state.page.view).toBe('heads');
  });

  it('padding positions outside the sequence are dropped', () => {
    const d = clean('#v=1&pad=1,99,-1,x,1,3');
    expect(d.state.model.padding).toEqual([1, 3]);
  });

  it('a window larger than T and a head beyond the head count are clamped', () => {
    const d = clean('#v=1&win=500&head=7');
    expect(d.state.model.window).toBe(LESSON_SENTENCE.length);
    expect(d.state.page.head).toBe(1);
  });

  it('duplicate keys keep the first value', () => {
    const d = clean('#v=1&src=random&heads=2&heads=8');
    expect(d.state.model.heads).toBe(2);
  });

  it('notices for long garbage values are short', () => {
    const d = clean('#v=1&view=' + 'x'.repeat(5000) + '&heads=' + '9'.repeat(2000));
    for (const n of d.notices) expect(n.length).toBeLessThan(200);
  });
});
