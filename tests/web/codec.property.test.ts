// Property tests of the URL codec (fast-check): any string decodes to a valid state (plus
// notices for whatever was corrected), and encode∘decode is the identity on valid states.
// A failure prints the shrunk counter-example and the seed to replay it.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { decodeHash, encodeState, defaultState, normalizeState, rows, LIMITS, type State, withLinkFields } from '../../web/src/app/state';

const RUNS = 400;

/** A state is valid when normalizeState has nothing to correct. */
function expectValid(s: State) {
  const n = normalizeState(s);
  expect(n.notices).toEqual([]);
  expect(n.state).toEqual(s);
}

// Every key the state table knows (so a new tab's rows are fuzzed too), plus a few it does not.
const KNOWN = ['v', ...rows().flatMap(([, , f]) => [f.key, ...(f.kind.aliases ?? [])])];
const keyArb = fc.oneof(fc.constantFrom(...KNOWN), fc.constantFrom('V', 'constructor', '__proto__', 'toString', 'tokens ', '%76', ''), fc.string({ maxLength: 6 }));

// Values that break parsers: numbers in every spelling, percent-encoding errors, markup.
const valueArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e309', '-0', '0x10', '1e6', '1000000', '-5', '2.5', '%', '%E0%A4%A', '%00', '%2B', '+', '++', 'a+b', '<script>alert(1)</script>', '%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E', '1', '0', 'true', 'neg_inf', 'finite', 'zero', 'sqrt', 'none', 'random', 'induction', 'heads', 'mask'),
  fc.array(fc.integer({ min: -5, max: 300 }), { maxLength: 6 }).map((a) => a.join(',')),
);
const pairArb = fc.tuple(keyArb, fc.option(valueArb, { nil: undefined })).map(([k, v]) => (v === undefined ? k : `${k}=${v}`));
const hashArb = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.tuple(fc.constantFrom('', '#', '#v=1&', 'v=1&', '#v=2&', '#v=&'), fc.array(pairArb, { maxLength: 12 })).map(([p, a]) => p + a.join('&')),
);

// Generous timeout: these are not timed tests, and the machine may be busy.
describe('URL codec: properties', { timeout: 30_000 }, () => {
  it('every string decodes, without throwing, to a valid state; notices are short strings', () => {
    fc.assert(
      fc.property(hashArb, (h) => {
        const d = decodeHash(h);
        expectValid(d.state);
        expect(Array.isArray(d.notices)).toBe(true);
        for (const n of d.notices) {
          expect(typeof n).toBe('string');
          expect(n.length).toBeLessThan(400); // a hostile link cannot flood the notice
        }
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('a decoded state is a fixed point: re-encoding and decoding it changes nothing', () => {
    fc.assert(
      fc.property(hashArb, (h) => {
        const { state } = decodeHash(h);
        expect(decodeHash(encodeState(state))).toEqual({ state, notices: [] });
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('a link without notices means exactly what it says: decoding its re-encoding gives the same state', () => {
    fc.assert(
      fc.property(fc.tuple(fc.constant('#v=1&'), fc.array(fc.tuple(fc.constantFrom(...KNOWN), valueArb), { maxLength: 8 })), ([p, pairs]) => {
        const d = decodeHash(p + pairs.map(([k, v]) => `${k}=${v}`).join('&'));
        if (d.notices.length === 0) expect(decodeHash(encodeState(d.state)).state).toEqual(d.state);
      }),
      { numRuns: RUNS },
    );
  });

  // Valid states: arbitrary field values brought into range by normalizeState.
  const tokenArb = fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
    fc.constantFrom('the', 'cat', '+', '&', '=', '%', '%20', '#', '<b>x</b>', '"', "'", '😀', 'é', 'a+b&c=d', '%E0%A4%A'),
  );
  const anyNum = fc.oneof(fc.integer({ min: -10, max: 5000 }), fc.double({ min: -10, max: 5000, noNaN: true }), fc.constantFrom(0, 1, 2, 4, 8, 16));
  const stateArb = fc
    .record({
      src: fc.constantFrom('induction', 'random'),
      tokens: fc.array(tokenArb, { minLength: 1, maxLength: 300 }),
      sharp: anyNum,
      seed: fc.oneof(fc.integer({ min: 0, max: LIMITS.maxSeed }), anyNum),
      init: fc.constantFrom('normal', 'scaled', 'nope'),
      gen: fc.constantFrom('splitmix', 'numpy', 'nope'),
      heads: anyNum,
      kv: anyNum,
      dm: anyNum,
      dk: anyNum,
      causal: fc.boolean(),
      win: anyNum,
      pad: fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 20 }),
      fill: fc.constantFrom('neg_inf', 'finite', 'zero'),
      scale: fc.oneof(fc.constantFrom('sqrt', 'none'), fc.double({ min: 0, max: LIMITS.maxScale, noNaN: true }) /* 0…minScale is clamped up */),
      view: fc.constantFrom('heads', 'mask', 'scale', 'output', 'timing', 'nope'),
      head: anyNum,
      tstart: anyNum,
      tend: anyNum,
      tdm: anyNum,
      th: anyNum,
      tker: fc.constantFrom('both', 'naive', 'tiled', 'nope'),
      tcausal: fc.boolean(),
      tmode: fc.constantFrom('qkv', 'proj', 'nope'),
      tw: anyNum,
    })
    // By link key, as the URL names them; normalizeState brings every value into range.
    .map((patch) => normalizeState(withLinkFields(defaultState(), patch)).state);

  it('normalizeState is idempotent (its output is valid)', () => {
    fc.assert(fc.property(stateArb, (s) => expectValid(s)), { numRuns: RUNS });
  });

  it('encode then decode is the identity on valid states, with no notices', () => {
    fc.assert(
      fc.property(stateArb, (s) => {
        const h = encodeState(s);
        expect(h.startsWith('#v=1')).toBe(true);
        expect(h.length).toBeLessThanOrEqual(LIMITS.maxHashLength);
        expect(decodeHash(h)).toEqual({ state: s, notices: [] });
      }),
      { numRuns: RUNS },
    );
  });
});
