// The JavaScript API of the wasm core: what cpp/bindings/api.js adds to the Emscripten module
// (reference: docs/js-api.md). The one place this API is typed; the page, its Workers, the timing
// split (attn-split.js, through JSDoc) and the tests all use these types.
// Shapes are row-major; every returned array is a copy owned by the caller. Bad input throws an
// Error named 'AttnError' whose `field` names the offending option; the instance keeps working.

// The names as literal types: the core's own lists are core.names (attn/names.hpp);
// tests/web/core-names.test.ts fails when these unions and those lists differ.
export type MaskFill = 'neg_inf' | 'finite' | 'zero';
export type Kernel = 'naive' | 'tiled';

export type Normalizer = 'softmax' | 'softmax1' | 'sigmoid' | 'relu' | 'linear';
export type PositionEncoding = 'none' | 'rope' | 'alibi';
export type MaskMode = 'before' | 'after';
export type Precision = 'float32' | 'float64' | 'float16';

/** core.names: the names each string option takes, in the core's enum order (frozen arrays). */
export interface CoreNames {
  readonly normalizer: readonly Normalizer[];
  readonly position: readonly PositionEncoding[];
  readonly maskMode: readonly MaskMode[];
  readonly precision: readonly Precision[];
  readonly maskFill: readonly MaskFill[];
  readonly kernel: readonly Kernel[];
}

/** The attention variants: each replaces one line of the computation (docs/js-api.md, "Attention
 *  variants"). Defaults (softmax, no position, no qkNorm, max shift on, mask before, float32) give
 *  today's results bit for bit. */
export interface CoreVariantOptions {
  /** q, k ← x / max(‖x‖₂, 1e-12) per row, first. */
  qkNorm?: boolean;
  position?: PositionEncoding;
  /** RoPE's base (> 0; checked even when position is not 'rope'). */
  ropeBase?: number;
  normalizer?: Normalizer;
  /** sigmoid's bias b; null = −ln T_k. */
  sigmoidBias?: number | null;
  /** false (softmax, softmax1 only): e^s without subtracting the row maximum. */
  maxShift?: boolean;
  maskMode?: MaskMode;
  /** 'float64': every array result is a Float64Array; 'float16': emulated binary16, softmax only. */
  precision?: Precision;
}

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

/** A Float32Array, or a Float64Array under precision 'float64'. */
export type CoreArray = Float32Array | Float64Array;

export interface CoreAttentionOptions extends CoreCommonOptions, CoreVariantOptions {
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
  /** (H, T_q) log-sum-exp of each row's scores (softmax, softmax1; NaN for the others) */
  lse: Float32Array;
  /** (H, T_q) Σ_j w_ij of the returned weights (the tiled kernels accumulate them too). Always
   *  returned by the core; absent only from timing/attn-split.js's recombined result. */
  rowSums?: Float32Array;
  fullyMaskedRows: number;
  nanRows: number;
  infScoreRows: number;
  /** Per query head: rows that came out NaN (sums to nanRows). */
  nanRowsPerHead: number[];
  scale: number;
}

export interface CoreMhaOptions extends CoreCommonOptions, CoreVariantOptions {
  /** Query positions T_q: the rows of x (self-attention: T_q = T_k = t). */
  t: number;
  /** Cross-attention (an encoder-decoder's): the (T_k, d_model) rows the keys and values are
   *  projected from (queries still from x). A Float64Array only under precision 'float64'.
   *  Absent or null: self-attention on x. */
  xKv?: Float32Array | Float64Array | null;
  /** Key/value positions T_k: the rows of xKv; absent: xKv.length / dModel, or t without xKv
   *  (where any other value is an error). keyPadding then has T_k entries, mask T_q*T_k, and
   *  causal lets query i see key j <= i + (T_k - T_q). */
  tk?: number;
  dModel: number;
  heads: number;
  kvHeads?: number;
  /** 0 or absent: dModel / heads. */
  dk?: number;
  /** 0 or absent: dk. */
  dv?: number;
}

/** attentionBackward's result: dq (H, T_q, d_k), dk (H_kv, T_k, d_k), dv (H_kv, T_k, d_v), and the
 *  forward's output (H, T_q, d_v) and lse (H, T_q). */
export interface CoreAttentionGrads<A extends Float32Array | Float64Array> {
  dq: A;
  dk: A;
  dv: A;
  output: A;
  lse: A;
}

/** attention's result under precision 'float64': every array a Float64Array. */
export type CoreAttentionResult64 = {
  [K in keyof CoreAttentionResult]: CoreAttentionResult[K] extends Float32Array
    ? Float64Array
    : CoreAttentionResult[K] extends Float32Array | null
      ? Float64Array | null
      : CoreAttentionResult[K] extends Float32Array | null | undefined
        ? Float64Array | null | undefined
        : CoreAttentionResult[K];
};

/** T = T_q = T_k in self-attention; weights are (H, T_q, T_k). */
export interface CoreMhaResult extends CoreAttentionResult {
  /** (T_q, d_model) after merge and W_o */
  output: Float32Array;
  /** (T_q, H*d_v) */
  merged: Float32Array;
  /** (H, T_q, d_v) */
  headOutputs: Float32Array;
  /** (H, T_q, d_k) */
  q: Float32Array;
  /** (H_kv, T_k, d_k) */
  k: Float32Array;
  /** (H_kv, T_k, d_v) */
  v: Float32Array;
  dk: number;
  dv: number;
  kvHeads: number;
}

/** multiHeadAttention's result under precision 'float64'. */
export type CoreMhaResult64 = {
  [K in keyof CoreMhaResult]: CoreMhaResult[K] extends Float32Array
    ? Float64Array
    : CoreMhaResult[K] extends Float32Array | null
      ? Float64Array | null
      : CoreMhaResult[K] extends Float32Array | null | undefined
        ? Float64Array | null | undefined
        : CoreMhaResult[K];
};

export interface CoreInductionOptions {
  tokens?: string[];
  sharpness?: number;
}

/**
 * core.example('alignment'): the hand-built two-head cross-attention model. Queries are one
 * sentence (English), keys and values another (French); a small bilingual lexicon maps words to
 * concepts case-insensitively (an unknown word is its own concept). Head 1 matches concepts
 * ("cat" finds "chat"), head 2 aligns relative positions (query i looks at key
 * round(i (tk - 1) / (t - 1))). Defaults: "the cat sat on the mat" / "le chat était assis sur le
 * tapis", sharpness 14. Errors name "queries", "keys" (empty or over 512 tokens) or "sharpness".
 */
export interface CoreAlignmentOptions {
  /** The query sentence's tokens (T_q = t rows of x). */
  queries?: string[];
  /** The key/value sentence's tokens (T_k = tk rows of xKv). */
  keys?: string[];
  /** A finite positive number; W_q's entries (default 14, as lesson 1). */
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
  /** Cross-attention: xKv (kvTokens.length rows, N(0,1)) is drawn after W_o, so x and the weights stay those of the seed. */
  kvTokens?: string[];
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
  /** Cross-attention examples only ('alignment', or 'random' with kvTokens): the key/value tokens. */
  kvTokens?: string[];
  /** Cross-attention only: T_k, the rows of xKv. */
  tk?: number;
  /** Cross-attention only: (tk, dModel) rows the keys and values come from; pass the example as multiHeadAttention's opts. */
  xKv?: Float32Array;
}

/** A cross-attention example: queries from x (t rows), keys and values from xKv (tk rows). */
export interface CoreCrossExample extends CoreExample {
  kvTokens: string[];
  tk: number;
  xKv: Float32Array;
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
  rowSums?: Float32Array;
  /** naive kernel only */
  weights?: Float32Array;
  /** with returnScores only */
  scores?: Float32Array;
}

/** core.traffic: bytes one call holds in and moves to/from slow memory (Dao et al. 2022's IO model). */
export interface CoreTrafficOptions {
  tq: number;
  tk: number;
  dk: number;
  dv: number;
  heads?: number;
  kvHeads?: number;
  causal?: boolean;
  kernel?: 'naive' | 'tiled';
  sramBytes?: number;
  /** The tiled algorithm's outer loop: 'q-outer' (query blocks, the core's kernel; default) or 'kv-outer' (key blocks, the paper's Algorithm 1). */
  loopOrder?: 'q-outer' | 'kv-outer';
}
export interface CoreTraffic {
  footprintBytes: number;
  slowMemoryBytes: number;
  loadedBytes: number;
  storedBytes: number;
  blockRows: number;
  blockCols: number;
}

/** The error every check throws: `field` names the option at fault, `code` is 'invalid_argument' or
 *  'resource_exhausted'. */
export interface CoreAttnError extends Error {
  field: string;
  code: string;
}

export interface AttnCore {
  traffic(opts: CoreTrafficOptions): CoreTraffic;
  /** The error class (instanceof checks). */
  AttnError: new (field: string, message: string, code?: string) => CoreAttnError;
  /** Milliseconds the last attention call spent in the kernel itself (NaN before the first). */
  lastKernelMs(): number;
  /** `into`: caller-owned arrays of the exact lengths to copy the results into (fields left out,
   *  or undefined, are fresh arrays); the same arrays are returned. */
  /** precision 'float64': the inputs may be Float64Arrays, every array result is a Float64Array (no `into`). */
  attention(
    q: CoreArray,
    k: CoreArray,
    v: CoreArray,
    opts: CoreAttentionOptions & { precision: 'float64' },
  ): CoreAttentionResult64;
  /** float32 and float16 (binary16 values in Float32Arrays). A caller whose precision is only known
   *  at run time must treat the arrays as CoreArray (they are Float64Arrays under 'float64'). */
  attention(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    opts: CoreAttentionOptions,
    into?: CoreAttentionInto | null,
  ): CoreAttentionResult;
  /** Gradients of sum(output · dOut) with respect to q, k and v (docs/js-api.md); the forward-only
   *  demonstrations (maxShift false, maskMode 'after', precision 'float16') are refused. */
  attentionBackward(
    q: CoreArray,
    k: CoreArray,
    v: CoreArray,
    dOut: CoreArray,
    opts: CoreAttentionOptions & { precision: 'float64' },
  ): CoreAttentionGrads<Float64Array>;
  attentionBackward(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    dOut: Float32Array,
    opts: CoreAttentionOptions,
  ): CoreAttentionGrads<Float32Array>;
  /** precision 'float64': every array result is a Float64Array. */
  multiHeadAttention(
    x: CoreArray,
    wq: CoreArray,
    wk: CoreArray,
    wv: CoreArray,
    wo: CoreArray,
    opts: CoreMhaOptions & { precision: 'float64' },
  ): CoreMhaResult64;
  multiHeadAttention(
    x: Float32Array,
    wq: Float32Array,
    wk: Float32Array,
    wv: Float32Array,
    wo: Float32Array,
    opts: CoreMhaOptions,
  ): CoreMhaResult;
  mergeHeads(
    headOutputs: Float32Array,
    wo: Float32Array,
    opts: { t: number; heads: number; dv: number; dModel: number; memoryCap?: number },
    into?: { merged?: Float32Array; output?: Float32Array } | null,
  ): { merged: Float32Array; output: Float32Array };
  example(name: 'induction', opts?: CoreInductionOptions): CoreExample;
  example(name: 'alignment', opts?: CoreAlignmentOptions): CoreCrossExample;
  example(name: 'random', opts?: CoreRandomOptions): CoreExample;
  entropyStudy(opts?: { dks?: number[]; keys?: number; queries?: number; seed?: number }): CoreEntropyStudy;
  /** Current size of the module's wasm memory in bytes (it only grows). */
  heapBytes(): number;
  /** The core's own constants, read once when the module starts. */
  limits: CoreLimits;
  /** The names each string option takes, read once from the core's tables. */
  readonly names: CoreNames;
  /** (T_q, T_k) 1 = query i may attend to key j: the mask every kernel applies (any head). */
  allowedMask(opts: CoreMaskOptions): Uint8Array;
  /** One head's softmax step by step, as lesson 1 writes it (the kernels fuse these steps and
   *  keep none): scores and allowed (rows, cols); every array in the given precision. */
  softmaxSteps(
    scores: CoreArray,
    allowed: Uint8Array,
    opts: {
      rows: number;
      cols: number;
      maskFill?: MaskFill;
      maxShift?: boolean;
      normalizer?: 'softmax' | 'softmax1';
      precision?: 'float32' | 'float64';
      memoryCap?: number;
    },
  ): CoreSoftmaxSteps;
  /** One score taken apart (docs/js-api.md): the rows of query `query` of head `head` and of key
   *  `key` as the score uses them (after qk-norm, RoPE; linear: φ), their products, the scale,
   *  ALiBi's bias and the score; the query's scores for every key and the best other allowed one. */
  scoreBreakdown(
    q: CoreArray,
    k: CoreArray,
    opts: CoreAttentionOptions & { head?: number; query: number; key: number },
  ): CoreScoreBreakdown;
  /** Each head's pattern scores on one sequence (attn/roles.hpp): how much of each row goes where a
   *  previous-token, an induction or a duplicate-token head would put it. tokens (T) as ids,
   *  weights (heads, T, T). */
  patternScores(
    tokens: Int32Array,
    weights: Float32Array,
    opts?: { heads?: number; memoryCap?: number },
  ): { previousToken: number[]; induction: number[]; duplicateToken: number[] };
  /** One head's queries and keys as points in a plane (attn/geometry.hpp, docs/js-api.md): the
   *  rows as the score uses them (as scoreBreakdown forms them) on the top two directions of an
   *  uncentred PCA of the head's T_q query rows and its K/V head's T_k key rows (d_k = 2: the rows
   *  themselves). */
  qkMap(q: CoreArray, k: CoreArray, opts: CoreAttentionOptions & { head?: number }): CoreQkMap;
  /** What a selection of one head's query rows and key columns adds up to (attn/selection.hpp):
   *  weights (heads, T_q, T_k); queries and keys distinct indices (none when left out). */
  weightSelection(
    weights: Float32Array,
    opts: {
      heads?: number;
      tq: number;
      tk: number;
      head?: number;
      queries?: CoreIndices | null;
      keys?: CoreIndices | null;
      memoryCap?: number;
    },
  ): CoreWeightSelection;
  /** (2·T_q) per query row the key range [lo, hi) that causal + window allow. */
  keyRanges(opts: { t?: number; tq?: number; tk?: number; causal?: boolean; window?: number }): Uint32Array;
  /** Bytes of the tiled kernel's scratch; independent of T. */
  tiledScratchBytes(dk: number): number;
  /** Bytes an attention call with these shapes counts against its cap (Infinity on overflow). */
  estimateBytes(opts: CoreShapeOptions & CoreVariantOptions, kernel?: Kernel): number;
  /** Bytes multiHeadAttention counts against its cap (the variant options count too). */
  estimateMultiHeadBytes(
    opts: {
      t: number;
      /** key/value positions of a cross-attention call; absent or 0: t */
      tk?: number;
      dModel: number;
      heads: number;
      kvHeads?: number;
      dk?: number;
      dv?: number;
      returnScores?: boolean;
      kernel?: Kernel;
    } & CoreVariantOptions,
    kernel?: Kernel,
  ): number;
  /** float32 (SIMD) vs float64 scalar, and tiled vs naive, on the same inputs (~10 naive calls). */
  check(q: Float32Array, k: Float32Array, v: Float32Array, opts: CoreAttentionOptions): CoreCheck;
}

/** scoreBreakdown's result: (d_k) rows in the call's precision, numbers in double. */
export interface CoreScoreBreakdown {
  qRaw: CoreArray;
  kRaw: CoreArray;
  q: CoreArray;
  k: CoreArray;
  /** q ⊙ k */
  products: CoreArray;
  /** Σ products */
  dot: number;
  /** The call's scale (1 under linear). */
  scale: number;
  /** ALiBi's −m_h·|i′ − j| (0 without ALiBi). */
  bias: number;
  /** scale · dot + bias: what the mask and the normalizer receive. */
  score: number;
  allowed: boolean;
  /** (T_k) the query's score for every key, formed alike. */
  rowScores: Float64Array;
  /** (T_k) 1 = allowed. */
  rowAllowed: Uint8Array;
  /** The largest allowed score of the row other than the key's (−Infinity when none). */
  nextBest: number;
}

/** qkMap's result, in double whatever the call's precision. */
export interface CoreQkMap {
  /** (T_q, 2) each query row on the two axes (x, y). */
  queries: Float64Array;
  /** (T_k, 2) each key row of the head's K/V head on the two axes. */
  keys: Float64Array;
  /** (2, d_k) the two unit axes (d_k = 1: the second is 0; d_k = 2: the identity); each axis's
   *  largest-|component| entry is positive. */
  axes: Float64Array;
  /** Each axis's share of Σ‖x‖² over the T_q + T_k rows (0 when every row is zero). */
  explained: [number, number];
  /** Mean and population std of q·k (the rows as the score uses them; no scale, no bias, no
   *  mask) over all T_q × T_k pairs. */
  dotMean: number;
  dotStd: number;
  /** Population std of the single products q_c·k_c over every pair and dimension (their mean is
   *  dotMean / d_k); with independent dimensions dotStd² ≈ d_k · prodStd². */
  prodStd: number;
  /** The call's scale (1 under linear). */
  scale: number;
}

/** Indices for weightSelection: whole numbers, as an array or an integer typed array. */
export type CoreIndices = readonly number[] | Int32Array | Uint32Array | Uint16Array | Uint8Array;

/** weightSelection's result. */
export interface CoreWeightSelection {
  /** (T_k) the mean of the picked query rows (empty when no queries are picked). */
  mean: Float64Array;
  /** (T_k) their sum (empty when no queries are picked). */
  sum: Float64Array;
  /** (T_q) each query's total weight on the picked keys (empty when no keys are picked). */
  column: Float64Array;
}

/** softmaxSteps' result: (rows, cols) arrays and the (rows) sums, in the call's precision. */
export interface CoreSoftmaxSteps {
  /** where(allowed, S, fill) */
  masked: CoreArray;
  /** masked − the row maximum (softmax1: max(it, 0); 0 without the max shift) */
  shifted: CoreArray;
  /** exp(shifted) */
  exps: CoreArray;
  /** Σ_j exps (softmax1: + exp(−m)) */
  sums: CoreArray;
  /** exps / sums */
  weights: CoreArray;
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

export interface CoreMaskOptions extends Pick<
  CoreCommonOptions,
  'causal' | 'window' | 'keyPadding' | 'mask' | 'memoryCap'
> {
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
