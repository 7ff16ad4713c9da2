// The JavaScript API of the wasm core: what cpp/bindings/api.js adds to the Emscripten module
// (reference: docs/js-api.md). The one place this API is typed; the page, its Workers, the timing
// split (attn-split.js, through JSDoc) and the tests all use these types.
// Shapes are row-major; every returned array is a copy owned by the caller. Bad input throws an
// Error named 'AttnError' whose `field` names the offending option; the instance keeps working.

export type MaskFill = 'neg_inf' | 'finite' | 'zero';
export type Kernel = 'naive' | 'tiled';

/** Mask, scale, fill, kernel and cap: shared by attention and multiHeadAttention. */
export interface CoreCommonOptions {
  causal?: boolean;
  /** Sliding window width; 0 = off. */
  window?: number;
  /** (T_k) 1 = real token, 0 = padding (masked for every query). */
  keyPadding?: Uint8Array | null;
  /** (T_q, T_k) 1 = allowed; ANDed with the other masks. */
  mask?: Uint8Array | null;
  /** null = 1/sqrt(d_k). */
  scale?: number | null;
  maskFill?: MaskFill;
  kernel?: Kernel;
  returnScores?: boolean;
  /** Bytes of working memory a call may use (default limits.memoryCap). */
  memoryCap?: number;
}

export interface CoreAttentionOptions extends CoreCommonOptions {
  heads: number;
  /** Default heads (GQA/MQA: fewer, dividing heads). */
  kvHeads?: number;
  tq: number;
  tk: number;
  dk: number;
  dv: number;
}

/** What attention returns; also the per-part result of a split call (timing/attn-split.js). */
export interface CoreAttentionResult {
  /** (H, T_q, d_v) */
  output: Float32Array;
  /** (H, T_q, T_k), or null from the tiled kernel. */
  weights: Float32Array | null;
  /** (H, T_q, T_k) scaled scores before the mask, when returnScores. */
  scores?: Float32Array | null;
  /** (H, T_q) nats */
  entropy: Float32Array;
  /** (H, T_q) log-sum-exp of each row's scores */
  lse: Float32Array;
  fullyMaskedRows: number;
  nanRows: number;
  infScoreRows: number;
  /** Per query head: rows that came out NaN (sums to nanRows). */
  nanRowsPerHead: number[];
  scale: number;
}

export interface CoreMhaOptions extends CoreCommonOptions {
  t: number;
  dModel: number;
  heads: number;
  kvHeads?: number;
  /** 0 or absent: dModel / heads. */
  dk?: number;
  /** 0 or absent: dk. */
  dv?: number;
}

export interface CoreMhaResult extends CoreAttentionResult {
  /** (T, d_model) after merge and W_o */
  output: Float32Array;
  /** (T, H*d_v) */
  merged: Float32Array;
  /** (H, T, d_v) */
  headOutputs: Float32Array;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dk: number;
  dv: number;
  kvHeads: number;
}

export interface CoreInductionOptions {
  tokens?: string[];
  sharpness?: number;
}

export interface CoreRandomOptions {
  seed?: number;
  t?: number;
  dModel?: number;
  heads?: number;
  kvHeads?: number;
  dk?: number;
  dv?: number;
  causal?: boolean;
  tokens?: string[];
  /** 'normal' = every weight N(0,1) as lesson 2 draws it; 'scaled' = N(0, 1/dModel). */
  init?: 'normal' | 'scaled';
  /** 'splitmix' (default): SplitMix64 + Box–Muller; 'numpy': numpy.random.default_rng(seed), bit for bit. */
  generator?: 'splitmix' | 'numpy';
}

/** A lesson's example: tokens, shapes and X, W_q, W_k, W_v, W_o, ready for multiHeadAttention. */
export interface CoreExample {
  tokens: string[];
  t: number;
  dModel: number;
  heads: number;
  kvHeads: number;
  dk: number;
  dv: number;
  causal: boolean;
  x: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  wo: Float32Array;
}

export interface CoreEntropyStudy {
  dk: number[];
  scaled: number[];
  unscaled: number[];
  ceiling: number;
}

export interface CoreAttentionInto {
  output?: Float32Array;
  entropy?: Float32Array;
  lse?: Float32Array;
  /** naive kernel only */
  weights?: Float32Array;
  /** with returnScores only */
  scores?: Float32Array;
}

export interface AttnCore {
  /** `into`: caller-owned arrays of the exact lengths to copy the results into (fields left out,
   *  or undefined, are fresh arrays); the same arrays are returned. */
  attention(q: Float32Array, k: Float32Array, v: Float32Array, opts: CoreAttentionOptions, into?: CoreAttentionInto | null): CoreAttentionResult;
  multiHeadAttention(x: Float32Array, wq: Float32Array, wk: Float32Array, wv: Float32Array, wo: Float32Array, opts: CoreMhaOptions): CoreMhaResult;
  /** Step 4 of multiHeadAttention alone: merged (T, H·d_v) and output = merged·W_o (T, d_model)
   *  from per-head outputs (H, T, d_v); with attention() on multiHeadAttention's q, k, v the same
   *  bits as multiHeadAttention. */
  mergeHeads(headOutputs: Float32Array, wo: Float32Array, opts: { t: number; heads: number; dv: number; dModel: number; memoryCap?: number }, into?: { merged?: Float32Array; output?: Float32Array } | null): { merged: Float32Array; output: Float32Array };
  example(name: 'induction', opts?: CoreInductionOptions): CoreExample;
  example(name: 'random', opts?: CoreRandomOptions): CoreExample;
  entropyStudy(opts?: { dks?: number[]; keys?: number; queries?: number; seed?: number }): CoreEntropyStudy;
  /** Current size of the module's wasm memory in bytes (it only grows). */
  heapBytes(): number;
  /** The core's own constants, read once when the module starts. */
  limits: CoreLimits;
  /** (T_q, T_k) 1 = query i may attend to key j: the mask every kernel applies (any head). */
  allowedMask(opts: CoreMaskOptions): Uint8Array;
  /** (2·T_q) per query row the key range [lo, hi) that causal + window allow. */
  keyRanges(opts: { t?: number; tq?: number; tk?: number; causal?: boolean; window?: number }): Uint32Array;
  /** Bytes of the tiled kernel's scratch; independent of T. */
  tiledScratchBytes(dk: number): number;
  /** Bytes an attention call with these shapes counts against its cap (Infinity on overflow). */
  estimateBytes(opts: CoreShapeOptions, kernel?: Kernel): number;
  /** Bytes multiHeadAttention counts against its cap. */
  estimateMultiHeadBytes(opts: { t: number; dModel: number; heads: number; kvHeads?: number; dk?: number; dv?: number; returnScores?: boolean; kernel?: Kernel }, kernel?: Kernel): number;
  /** float32 (SIMD) vs float64 scalar, and tiled vs naive, on the same inputs (~10 naive calls). */
  check(q: Float32Array, k: Float32Array, v: Float32Array, opts: CoreAttentionOptions): CoreCheck;
}

export interface CoreLimits {
  /** Default working-memory cap, bytes. */
  memoryCap: number;
  /** True in attn_core_relaxed (relaxed SIMD: fused multiply-adds), false in attn_core (SIMD128). */
  relaxedSimd: boolean;
  tile: { queries: number; keys: number; scalarKeys: number; simdKeys: number; simd: boolean };
  check: { unitRoundoff: number; f32VsF64Abs: number; tiledVsNaiveAbs: number };
}

export interface CoreShapeOptions {
  heads: number;
  kvHeads?: number;
  tq: number;
  tk: number;
  dk: number;
  dv?: number;
  returnScores?: boolean;
  kernel?: Kernel;
}

export interface CoreMaskOptions extends Pick<CoreCommonOptions, 'causal' | 'window' | 'keyPadding' | 'mask' | 'memoryCap'> {
  /** Square T_q = T_k = t, or give tq and tk. */
  t?: number;
  tq?: number;
  tk?: number;
}

export interface CoreCheck {
  f32VsF64: { maxAbs: number; tolerance: number };
  tiledVsNaive: { maxAbs: number; tolerance: number };
  maxAbsScore: number;
  maxAbsV: number;
  simd: boolean;
  pass: boolean;
}

export interface CoreModuleOptions {
  /** Where the .wasm file is (the page passes Vite's ?url of it). */
  locateFile?: (path: string) => string;
  /** The .wasm bytes (Node). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

export type CreateAttnCore = (opts?: CoreModuleOptions) => Promise<AttnCore>;
