// The student's arrays in the state table and the share link (attention/arrays/state.ts):
// link values read back exactly, bad ones are dropped with a notice naming the array, incomplete
// groups are dropped, and arrays over the link limit are reported as not fitting.
import { describe, expect, it } from 'vitest';
import { decodeHash, encodeState, normalizeState, withPatch, defaultState } from '../../web/src/app/state';
import { arraysFitLink, arraysMode } from '../../web/src/attention/arrays/state';
import { decodeArrayLink, encodeArrayLink } from '../../web/src/attention/arrays';

const W = { shape: [2, 2], data: new Float32Array([1, 0, 0.53, 0.47]) };

describe('arrays in the link', () => {
  it('a W and its printed step read back exactly', () => {
    const uw = encodeArrayLink(W);
    const { state, notices } = decodeHash(`#v=1&uw=${uw}&up=0.01`);
    expect(notices).toEqual([]);
    expect(state.arrays.weights).toBe(uw);
    expect(state.arrays.step).toBe(0.01);
    expect(arraysMode(state.arrays)).toBe('weights');
    expect(Array.from(decodeArrayLink(state.arrays.weights).data)).toEqual(Array.from(W.data));
    expect(encodeState(state)).toBe(`#v=1&uw=${uw}&up=0.01`);
  });

  it('a corrupt value is dropped with a notice naming the array; the rest of the link stays', () => {
    const { state, notices } = decodeHash('#v=1&causal=0&uw=1.f4.2x2.b.AAAA');
    expect(state.arrays.weights).toBe('');
    expect(state.model.causal).toBe(false);
    expect(notices.join(' ')).toMatch(/your arrays: W could not be read/);
  });

  it('an incomplete group is dropped with a notice', () => {
    const q = encodeArrayLink({ shape: [2, 2], data: new Float32Array(4) });
    const { state, notices } = decodeHash(`#v=1&uq=${q}&uk=${q}`);
    expect(arraysMode(state.arrays)).toBe('none');
    expect(state.arrays.q).toBe('');
    expect(notices.join(' ')).toMatch(/your arrays: Q, K left out/);
  });

  it('arrays over the link limit do not fit (the page leaves them out of the link)', () => {
    const big = encodeArrayLink({ shape: [160, 160], data: Float32Array.from({ length: 160 * 160 }, (_, i) => Math.sin(i)) }, { compress: false });
    const { state } = normalizeState(withPatch(defaultState(), { arrays: { weights: big } }));
    expect(state.arrays.weights).toBe(big);
    expect(arraysFitLink(state.arrays)).toBe(false);
    expect(arraysFitLink(normalizeState(withPatch(defaultState(), { arrays: { weights: encodeArrayLink(W) } })).state.arrays)).toBe(true);
  });

  it('lesson 2’s X, W_q, W_k, W_v in a link without `heads` are one head (not the example’s 2)', () => {
    const a = (r: number, c: number) => encodeArrayLink({ shape: [r, c], data: Float32Array.from({ length: r * c }, (_, i) => Math.cos(i)) });
    const x = `ux=${a(6, 8)}&uwq=${a(8, 4)}&uwk=${a(8, 4)}&uwv=${a(8, 4)}`;
    const one = decodeHash(`#v=1&${x}`);
    expect(one.notices).toEqual([]);
    expect([one.state.model.heads, one.state.model.kvHeads]).toEqual([1, 1]);
    expect(encodeState(one.state)).toBe(`#v=1&${x}`);
    const two = decodeHash(`#v=1&heads=2&${x}`);
    expect([two.state.model.heads, two.state.model.kvHeads]).toEqual([2, 2]);
    expect(decodeHash(encodeState(two.state)).state.model.heads).toBe(2);
    // Without the arrays, a link without `heads` still means the example's 2 heads.
    expect(decodeHash('#v=1&src=random').state.model.heads).toBe(2);
    expect(encodeState(normalizeState(withPatch(defaultState(), { model: { heads: 2, kvHeads: 2 } })).state)).toBe('#v=1');
  });
});
