// Several queries, several keys: the picks' link keys (qsel, ksel) through the state table, the
// pure toggle/span logic, and the page's summary path on the page's wasm core, against sums
// recomputed here from the weights the core returns for the same call.
import { describe, it, expect, beforeAll } from 'vitest';
import { decodeHash, encodeState, linkFields } from '../../web/src/app/state';
import { span, summarize, toggle } from '../../web/src/attention/selection';
import type { AttnCore } from '../../web/src/wasm/attn-core';
import { loadWasmCore } from './wasm-core';

describe('the picks in the link', () => {
  it('qsel and ksel decode sorted and unique, and encode back', () => {
    const d = decodeHash('#v=1&view=heads&qsel=5,2,5,3&ksel=1');
    expect(d.notices).toEqual([]);
    expect(d.state.page.qsel).toEqual([2, 3, 5]);
    expect(d.state.page.ksel).toEqual([1]);
    const again = decodeHash(encodeState(d.state));
    expect(again.state.page.qsel).toEqual([2, 3, 5]);
    expect(linkFields(again.state).ksel).toEqual([1]);
  });
  it('bad entries are dropped with a notice naming the key', () => {
    const d = decodeHash('#v=1&qsel=2,x,9999&ksel=-1');
    expect(d.state.page.qsel).toEqual([2]);
    expect(d.state.page.ksel).toEqual([]);
    expect(d.notices.join(' | ')).toMatch(/qsel: ignored entries that are not positions: x/);
    expect(d.notices.join(' | ')).toMatch(/selected queries: dropped positions outside 0…255: 9999/);
    expect(d.notices.join(' | ')).toMatch(/selected keys: dropped positions outside 0…255: −?-?1/);
  });
  it('no picks: no keys in the link', () => {
    const d = decodeHash('#v=1&view=heads');
    expect(encodeState(d.state)).not.toMatch(/qsel|ksel/);
  });
});

describe('toggle and span', () => {
  it('toggle adds and removes, sorted', () => {
    expect(toggle([3, 1], 2)).toEqual([1, 2, 3]);
    expect(toggle([1, 2, 3], 2)).toEqual([1, 3]);
  });
  it('span fills from the anchor in either direction, keeping other picks', () => {
    expect(span([9], 2, 5)).toEqual([2, 3, 4, 5, 9]);
    expect(span([], 6, 4)).toEqual([4, 5, 6]);
    expect(span([1], null, 4)).toEqual([1, 4]);
  });
});

describe('the summary on the page’s core', () => {
  let core: AttnCore;
  beforeAll(async () => {
    core = await loadWasmCore();
  });
  it('mean, sum and column match sums of the core’s own weights; picks past T are named, not summed', () => {
    const H = 2,
      T = 7,
      d = 4;
    const rnd = (n: number, s: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 1.7 + s) * 2);
    const a = core.attention(rnd(H * T * d, 1), rnd(H * T * d, 2), rnd(H * T * d, 3), {
      heads: H,
      kvHeads: H,
      tq: T,
      tk: T,
      dk: d,
      dv: d,
      causal: true,
    });
    const w = a.weights!;
    const s = summarize(core, w, { heads: H, tq: T, tk: T }, 1, [2, 4, 6, 9], [0, 3]);
    expect(s.queries).toEqual([2, 4, 6]);
    expect(s.keys).toEqual([0, 3]);
    expect(s.beyond).toEqual([9]);
    const at = (i: number, j: number) => w[(1 * T + i) * T + j];
    for (let j = 0; j < T; j++) {
      const sum = at(2, j) + at(4, j) + at(6, j);
      expect(s.sum[j]).toBeCloseTo(sum, 6);
      expect(s.mean[j]).toBeCloseTo(sum / 3, 6);
    }
    for (let i = 0; i < T; i++) expect(s.column[i]).toBeCloseTo(at(i, 0) + at(i, 3), 6);
    // Causal: query 2 cannot see key 3; query 0 puts its whole weight on key 0.
    expect(s.column[0]).toBeCloseTo(1, 6);
  });
  it('no keys: no column; no queries: no mean or sum', () => {
    const w = new Float32Array(9).fill(1 / 3);
    expect(summarize(core, w, { heads: 1, tq: 3, tk: 3 }, 0, [1], []).column).toEqual([]);
    expect(summarize(core, w, { heads: 1, tq: 3, tk: 3 }, 0, [], [2]).mean).toEqual([]);
  });
});
