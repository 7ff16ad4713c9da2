// The `kvtokens` row (cross-attention: the keys' and values' sentence) through the state table:
// parsed and written like `tokens`, empty by default, cut at MODEL_LIMITS.maxT with a notice, and
// the padding positions normalized against T_k − 1 while it is set.
import { describe, it, expect } from 'vitest';
import { decodeHash, encodeState, defaultState, normalizeState, withPatch } from '../../web/src/app/state';
import { MODEL_LIMITS } from '../../web/src/attention/state';
import { exampleKey } from '../../web/src/attention/compute';

describe('kvtokens', () => {
  it('defaults to self-attention and writes nothing', () => {
    expect(defaultState().model.kvTokens).toEqual([]);
    expect(encodeState(defaultState())).not.toContain('kvtokens');
  });

  it('parses tokens separated by + (each percent-encoded) and writes them back', () => {
    const d = decodeHash('#v=1&tokens=the+cat&kvtokens=le+chat+%C3%A9tait');
    expect(d.notices).toEqual([]);
    expect(d.state.model.kvTokens).toEqual(['le', 'chat', 'était']);
    const hash = encodeState(d.state);
    expect(hash).toContain('kvtokens=le+chat+%C3%A9tait');
    expect(decodeHash(hash)).toEqual(d);
  });

  it('cuts a list longer than maxT with a notice', () => {
    const many = Array.from({ length: MODEL_LIMITS.maxT + 3 }, (_, i) => `k${i}`);
    const d = decodeHash(`#v=1&kvtokens=${many.join('+')}`);
    expect(d.state.model.kvTokens.length).toBe(MODEL_LIMITS.maxT);
    expect(d.notices.some((n) => n.startsWith('kvtokens:') && n.includes(String(MODEL_LIMITS.maxT)))).toBe(true);
  });

  it('normalizes padding against T_k − 1 while it is set', () => {
    // 2 queries, 4 keys: key 3 is a position of the keys' sentence.
    const cross = decodeHash('#v=1&tokens=a+b&kvtokens=w+x+y+z&pad=3');
    expect(cross.notices).toEqual([]);
    expect(cross.state.model.padding).toEqual([3]);
    const past = decodeHash('#v=1&tokens=a+b&kvtokens=w+x+y+z&pad=4');
    expect(past.state.model.padding).toEqual([]);
    expect(past.notices.join(' ')).toMatch(/0…3/);
    // Without the second sentence the queries' T bounds it.
    const self = normalizeState(withPatch(defaultState(), { model: { tokens: ['a', 'b'], padding: [3] } }));
    expect(self.state.model.padding).toEqual([]);
  });

  it('is part of the example key (the projections cache)', () => {
    const s = defaultState();
    const cross = normalizeState(withPatch(s, { model: { kvTokens: ['le', 'chat'] } })).state;
    expect(exampleKey(cross)).not.toBe(exampleKey(s));
  });
});
