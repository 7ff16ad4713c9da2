// The state → core options mapping (shared/core-options.ts), written once for the attention views'
// compute, the student's arrays and the Lesson view's runs: pinned for a few states, written out
// here by hand, and each of the three callers checked to hand the core exactly these options (a
// recording stand-in for the core takes the calls).
import { describe, expect, it } from 'vitest';
import { defaultState, normalizeState, withPatch, type Patch, type State } from '../../web/src/app/state';
import { coreMaskOptions, coreOptions, coreScale } from '../../web/src/shared/core-options';
import { computeAttention } from '../../web/src/attention/compute';
import { arraysCall } from '../../web/src/attention/arrays/compute';
import { compare, exampleFor, runModel } from '../../web/src/lesson/run';
import { STANDARD } from '../../web/src/shared/variant';
import { encodeArrayLink } from '../../web/src/attention/arrays';
import type { AttnCore } from '../../web/src/wasm/attn-core';

const TOKENS = ['the', 'cat', 'sat', 'on', 'the', 'mat'];

function stateOf(model: Patch['model']): State {
  const n = normalizeState(withPatch(defaultState(), { model: { tokens: TOKENS, ...model } }));
  expect(n.notices).toEqual([]);
  return n.state;
}

const pad = (...bits: number[]) => Uint8Array.from(bits);

/** States and the options they must give, written out by hand (T = 6). */
const CASES: { name: string; model: Patch['model']; want: Record<string, unknown> }[] = [
  { name: 'the defaults: causal, no window, 1/√d_k, −∞ fill', model: {},
    want: { causal: true, window: 0, keyPadding: pad(1, 1, 1, 1, 1, 1), scale: null, maskFill: 'neg_inf' } },
  { name: 'window, padding, zero fill, no scale', model: { causal: false, window: 3, padding: [1, 4], fill: 'zero', scale: 'none' },
    want: { causal: false, window: 3, keyPadding: pad(1, 0, 1, 1, 0, 1), scale: 1, maskFill: 'zero' } },
  { name: 'a custom scale and the finite fill', model: { window: 6, padding: [0], fill: 'finite', scale: 2.5 },
    want: { causal: true, window: 6, keyPadding: pad(0, 1, 1, 1, 1, 1), scale: 2.5, maskFill: 'finite' } },
];

const KEYS = ['causal', 'window', 'keyPadding', 'scale', 'maskFill'];
const pick = (o: Record<string, unknown>) => Object.fromEntries(KEYS.map((k) => [k, o[k]]));

/** A core that records the options of its first attention call and stops there. */
function recordingCore(t: number): { core: AttnCore; calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  const stop = (opts: Record<string, unknown>) => {
    calls.push(opts);
    throw new Error('recorded');
  };
  const d = 4, h = 2;
  const ex = { tokens: TOKENS, t, heads: h, kvHeads: h, dModel: d * h, dk: d, dv: d, causal: true,
    x: new Float32Array(t * d * h), wq: new Float32Array(d * h * d * h), wk: new Float32Array(d * h * d * h), wv: new Float32Array(d * h * d * h), wo: new Float32Array(d * h * d * h) };
  const core = {
    example: () => ex,
    multiHeadAttention: (_x: unknown, _q: unknown, _k: unknown, _v: unknown, _o: unknown, opts: Record<string, unknown>) => stop(opts),
    attention: (_q: unknown, _k: unknown, _v: unknown, opts: Record<string, unknown>) => stop(opts),
  };
  return { core: core as unknown as AttnCore, calls };
}

describe('state → core options (shared/core-options.ts)', () => {
  for (const c of CASES) {
    it(`pins ${c.name}`, () => {
      const s = stateOf(c.model);
      expect(coreOptions(s.model, TOKENS.length)).toEqual(c.want);
      expect(coreMaskOptions(s.model, TOKENS.length)).toEqual({ causal: c.want.causal, window: c.want.window, keyPadding: c.want.keyPadding });
    });

    it(`the attention views, the student's arrays and the Lesson runs give the core the same options: ${c.name}`, () => {
      const s = stateOf(c.model);
      const T = TOKENS.length;
      const views = recordingCore(T);
      expect(() => computeAttention(views.core, s)).toThrow('recorded');
      // The Lesson's changed side runs the state's options; its standard side is always the
      // lessons' standard computation (1/√d_k, −∞ fill) under the same mask.
      const lesson = recordingCore(T);
      expect(() => runModel(lesson.core, exampleFor(lesson.core, s.model), s.model, {})).toThrow('recorded');
      const standard = recordingCore(T);
      expect(() => compare(standard.core, s.model, STANDARD, 0)).toThrow('recorded');
      expect(pick(standard.calls[0])).toEqual({ ...c.want, scale: null, maskFill: 'neg_inf' });
      const q = encodeArrayLink({ shape: [T, 4], data: Float32Array.from({ length: T * 4 }, (_, i) => Math.sin(i)) });
      const arrays = arraysCall(recordingCore(T).core, { model: s.model, arrays: { ...s.arrays, q, k: q, v: q } });
      expect(pick(views.calls[0])).toEqual(c.want);
      expect(pick(lesson.calls[0])).toEqual(c.want);
      expect(pick({ ...arrays.opts })).toEqual(c.want);
    });
  }

  it('caps the window at T (the student\'s arrays may be shorter than the tokens) and ignores padding outside [0, T)', () => {
    const s = stateOf({ window: 5, padding: [0, 5] });
    expect(coreMaskOptions(s.model, 3)).toEqual({ causal: true, window: 3, keyPadding: pad(0, 1, 1) });
  });

  it('passes the scale as the core reads it: null = 1/√d_k', () => {
    expect([coreScale('sqrt'), coreScale('none'), coreScale(0.125)]).toEqual([null, 1, 0.125]);
  });
});
