// The model's mask, scale and fill settings as the core's options, written once for every caller
// (the attention views' compute, the student's arrays, the Lesson view's runs): the same settings
// give the same options object. The mask rule itself lives in the core (core.allowedMask /
// core.keyRanges, docs/js-api.md); the page draws what the core returns. Pure: no DOM.
import type { AttnCore, CoreExample, CoreVariantOptions } from '../wasm/attn-core';

/** The settings read here (structurally the attention feature's ModelState). */
export interface CoreSettings {
  causal: boolean;
  /** Sliding window width; 0 = off. */
  window: number;
  /** Key positions marked as padding (0-based; positions outside [0, T) are ignored). */
  padding: readonly number[];
  fill: 'neg_inf' | 'finite' | 'zero';
  /** 'sqrt' = 1/√d_k (the core's default, passed as null), 'none' = 1, or a number. */
  scale: 'sqrt' | 'none' | number;
}

export interface CoreMaskOptions {
  causal: boolean;
  window: number;
  /** (T_k) 1 = real token, 0 = padding. */
  keyPadding: Uint8Array;
}
export interface CoreOptions extends CoreMaskOptions {
  scale: number | null;
  maskFill: CoreSettings['fill'];
}

/** Key padding as the core wants it: Uint8Array(T), 1 = real token, 0 = padding. */
export function keyPadding(t: number, pad: readonly number[]): Uint8Array {
  const k = new Uint8Array(t).fill(1);
  for (const p of pad) if (p >= 0 && p < t) k[p] = 0;
  return k;
}

/** The scale the core is given: null = its default 1/√d_k. */
export function coreScale(scale: CoreSettings['scale']): number | null {
  return scale === 'sqrt' ? null : scale === 'none' ? 1 : scale;
}

/** The mask options for T positions (core.allowedMask takes these alone). The window is capped at
 *  T: the student's arrays may be shorter than the page's tokens, whose length bounds the window. */
export function coreMaskOptions(
  m: Pick<CoreSettings, 'causal' | 'window' | 'padding'>,
  t: number,
  tk?: number,
): CoreMaskOptions {
  // Cross-attention (tk given): the keys are another sentence, so no key comes after a query; the
  // causal mask and the window belong to a sequence attending to itself. Padding marks keys.
  if (tk !== undefined) return { causal: false, window: 0, keyPadding: keyPadding(tk, m.padding) };
  return { causal: m.causal, window: Math.min(m.window, t), keyPadding: keyPadding(t, m.padding) };
}

/** Mask, scale and fill: what every attention call of the page spreads into its options. */
export function coreOptions(m: CoreSettings, t: number, tk?: number): CoreOptions {
  return { ...coreMaskOptions(m, t, tk), scale: coreScale(m.scale), maskFill: m.fill };
}

/** Whether the settings ask for cross-attention (a second sentence for the keys and values). */
export function isCross(m: { kvTokens?: readonly string[] }): boolean {
  return (m.kvTokens?.length ?? 0) > 0;
}

/** The example settings read here (structurally the attention feature's ModelState). */
export interface ExampleSettings {
  source: 'induction' | 'random';
  tokens: string[];
  /** Keys' and values' tokens (cross-attention); absent or empty: self-attention. */
  kvTokens?: string[];
  sharpness: number;
  seed: number;
  init: 'normal' | 'scaled';
  generator: 'splitmix' | 'numpy';
  heads: number;
  kvHeads: number;
  dModel: number;
  dK: number;
  causal: boolean;
}

/** The model's example from the core: lesson 1's hand-built heads, or seeded random weights. */
export function coreExample(core: AttnCore, m: ExampleSettings): CoreExample {
  const kv = isCross(m) ? m.kvTokens : undefined;
  if (m.source === 'induction' && kv)
    return core.example('alignment', { queries: m.tokens, keys: kv, sharpness: m.sharpness });
  return m.source === 'induction'
    ? core.example('induction', { tokens: m.tokens, sharpness: m.sharpness })
    : core.example('random', {
        seed: m.seed,
        t: m.tokens.length,
        dModel: m.dModel,
        heads: m.heads,
        kvHeads: m.kvHeads,
        dk: m.dK,
        dv: m.dK,
        causal: m.causal,
        tokens: m.tokens,
        init: m.init,
        generator: m.generator,
        ...(kv ? { kvTokens: kv } : {}),
      });
}

/** The example's multi-head attention under the state's options and a variant, scores kept (the
 *  attention views' and the Lesson's naive run). */
export function runExample(core: AttnCore, ex: CoreExample, m: CoreSettings, variant: CoreVariantOptions) {
  return core.multiHeadAttention(ex.x, ex.wq, ex.wk, ex.wv, ex.wo, {
    t: ex.t,
    dModel: ex.dModel,
    heads: ex.heads,
    kvHeads: ex.kvHeads,
    dk: ex.dk,
    dv: ex.dv,
    ...(ex.xKv ? { xKv: ex.xKv, tk: ex.tk } : {}),
    ...coreOptions(m, ex.t, ex.xKv ? ex.tk : undefined),
    returnScores: true,
    kernel: 'naive',
    ...variant,
  });
}
