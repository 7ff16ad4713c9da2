// The student's Q (T_q, d_k) with K, V of T_k ≠ T_q rows: drawn as cross-attention (T_q × T_k), like
// the page's second sentence: no causal mask or window; the weights are softmax(QKᵀ/√d_k).
import { beforeAll, describe, expect, it } from 'vitest';
import type { AttnCore } from '../../web/src/wasm/attn-core';
import { loadWasmCore } from './wasm-core';
import { computeAttention } from '../../web/src/attention/compute';
import { encodeArrayLink } from '../../web/src/attention/arrays';
import { defaultState, normalizeState, withPatch, type State } from '../../web/src/app/state';

let core: AttnCore;
beforeAll(async () => {
  core = await loadWasmCore();
});

const Q = [0.5, -1, 1.5, 0.25, -0.75, 2];
const K = [1, 0, 0, 1, -1, 1, 0.5, 0.5, 2, -0.5];
const V = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const link = (rows: number, data: number[]) => encodeArrayLink({ shape: [rows, 2], data: Float32Array.from(data) });

function stateOf(): State {
  const n = normalizeState(withPatch(defaultState(), { model: { tokens: ['a', 'b', 'c', 'd', 'e'] } }));
  const s = n.state;
  return { ...s, arrays: { ...s.arrays, q: link(3, Q), k: link(5, K), v: link(5, V) } };
}

describe('the student’s Q, K, V with T_q ≠ T_k', () => {
  it('computes a 3 × 5 cross-attention: rows sum to 1, weights = softmax(QKᵀ/√2), no causal mask', () => {
    const r = computeAttention(core, stateOf());
    expect([r.t, r.tk, r.heads]).toEqual([3, 5, 1]);
    expect(r.weights.length).toBe(3 * 5);
    expect(r.keyTokens).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.tokens).toEqual(['0', '1', '2']);
    expect(Array.from(r.allowed)).toEqual(new Array(15).fill(1));
    for (let i = 0; i < 3; i++) {
      const s = Array.from({ length: 5 }, (_, j) => (Q[2 * i] * K[2 * j] + Q[2 * i + 1] * K[2 * j + 1]) / Math.sqrt(2));
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      const row = Array.from(r.weights.subarray(i * 5, i * 5 + 5));
      expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
      row.forEach((w, j) => expect(w).toBeCloseTo(e[j] / z, 6));
    }
    expect(r.arrays?.findings[0]).toContain('cross-attention (3 queries × 5 keys)');
  });
});
