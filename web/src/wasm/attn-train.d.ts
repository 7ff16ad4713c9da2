// Types of the training module's JS surface (docs/train-api.md), the parts the Train and Decode
// tabs use.
/** tr.decoder({ cache, state }) (the Decode tab). */
export interface AttnTrainDecoder {
  /** weights: (L, H, t) of the new query row; null in state mode (the state keeps no keys). */
  append(token: number): { logits: Float32Array; weights: Float32Array | null; cacheBytes: number };
  prefill(tokens: ArrayLike<number>): void;
  /** (H_kv, t, d_h) row-major keys and values of one layer so far (K/V cache mode only). */
  cache(layer: number): { k: Float32Array; v: Float32Array };
  /** Linear attention's recurrent state of one layer: S (H_kv, d_h, d_h), z (H_kv, d_h) (state mode only). */
  state(layer: number): { s: Float32Array; z: Float32Array };
  readonly mode: 'recompute' | 'cache' | 'state';
  reset(): void;
  readonly length: number;
  delete(): void;
}
/** One step's batch, as tr.nextBatch() draws it (the shard API, docs/train-api.md). */
export interface AttnStepBatch {
  tokens: Int32Array;
  lossMask: Uint8Array;
  /** optimiser steps done before this batch */
  step: number;
  /** targets of the whole batch: the loss normaliser of every shard */
  targets: number;
}
/** tr.shardGradient(): the shard's loss share and gradient (a Float32Array with its own, transferable buffer). */
export interface AttnShardResult {
  shard: number;
  loss: number;
  grads: Float32Array;
}
/** tr.keepShardGradient(): the gradient stays inside the trainer, for its own applyGradients this step. */
export interface AttnKeptShardResult {
  shard: number;
  loss: number;
  grads: null;
  kept: true;
}
/** tr.textScores(tokens) (docs/train-api.md, "The text model's probe"): each array L*H long. */
export interface AttnTextScores {
  previous: Float64Array;
  induction: Float64Array;
  duplicate: Float64Array;
  first: Float64Array;
  /** each head's role: one of lib.headRoles.names */
  roles: string[];
}
/** tr.probeScores(probe): inContext = ceSecond − ceFirst (nats); per head (l·H + h) the mean
 *  weight on the token after the earlier copy (induction) and on the previous token. */
export interface AttnProbeScores {
  inContext: number;
  ceFirst: number;
  ceSecond: number;
  induction: Float64Array;
  previous: Float64Array;
}
/** lib.headRoles: the role names (in the core's order) and the score a role needs. */
export interface AttnHeadRoles {
  /** 'previous-token', 'induction', 'duplicate-token', 'first-token', 'mixed' */
  readonly names: readonly string[];
  readonly threshold: number;
}
export interface AttnTrainer {
  nextBatch(): AttnStepBatch;
  /** the non-empty shards of this batch, in summation order */
  shards(batch: AttnStepBatch): number[];
  /** `into`: copy the gradient into this array (every parameter) instead of a fresh one. */
  shardGradient(batch: AttnStepBatch, shard: number, into?: Float32Array | null): AttnShardResult;
  /** the same gradient kept inside this trainer (no copy out), for its applyGradients this step */
  keepShardGradient(batch: AttnStepBatch, shard: number): AttnKeptShardResult;
  /** results: one per non-empty shard, in shard order; kept ones only from this trainer, this step */
  applyGradients(
    batch: AttnStepBatch,
    results: ({ loss: number; grads: Float32Array; shard?: number } | AttnKeptShardResult)[],
  ): { loss: number; gradNorm: number; finite: boolean; step: number };
  /** every parameter, flat (a copy) */
  params(into?: Float32Array | null): Float32Array;
  setParams(flat: Float32Array): void;
  train(n: number): { step: number; loss: Float32Array; gradNorm: Float32Array; finite: boolean };
  evaluate(): { loss: number; accuracy: number };
  headScores(): {
    previousToken: Float32Array;
    induction: Float32Array;
    duplicateToken: Float32Array;
    ablationLoss: Float32Array;
    kComposition: Float32Array;
    loss: number;
  };
  scoreGradients(): { scoreGrad: Float64Array; wqGradNorm: Float64Array; loss: number };
  /** headScores, evaluate and scoreGradients at once (one shared forward, the same bits) */
  diagnostics(): {
    previousToken: Float32Array;
    induction: Float32Array;
    duplicateToken: Float32Array;
    ablationLoss: Float32Array;
    kComposition: Float32Array;
    loss: number;
    accuracy: number;
    scoreGrad: Float64Array;
    wqGradNorm: Float64Array;
  };
  /** opts.qkv: also each layer's q (H, T, d_h), k and v (H_kv, T, d_h), before RoPE or qkNorm. */
  attention(
    tokens: Int32Array,
    opts?: { qkv?: boolean },
  ): {
    weights: Float32Array;
    logits: Float32Array;
    layers?: { q: Float32Array; k: Float32Array; v: Float32Array }[];
  };
  /** Per head (index l*H + h) the text scores of attn/tr/probe.hpp on one text of 2 to seqLen
   *  tokens, with the current ablations; roles: names from lib.headRoles.names. */
  textScores(tokens: Int32Array | readonly number[]): AttnTextScores;
  /** The mean next-token cross-entropy (nats) of W windows of seqLen tokens, row-major, with
   *  the current ablations (1 to 4096 windows). */
  textLoss(windows: Int32Array | readonly number[]): number;
  /** attn::tr::make_probe: rows (1 to 4096) of [r, r], 2n tokens each, r drawn from candidates. */
  makeProbe(candidates: Int32Array | readonly number[], rows: number, seed: number): Int32Array;
  /** The probe's scores (attn/tr/probe.hpp) with the current ablations; arrays L*H long. */
  probeScores(probe: Int32Array | readonly number[]): AttnProbeScores;
  sampleBatch(): { tokens: Int32Array; lossMask: Uint8Array };
  weights(): Record<string, unknown>;
  setLearningRate(lr: number): void;
  setAblation(layer: number, head: number, on: boolean): void;
  /** state: the recurrent state (normalizer 'linear' only); unset, a linear model's cached decoder keeps it. */
  decoder(opts?: { cache?: boolean; state?: boolean }): AttnTrainDecoder;
  generate(
    prompt: ArrayLike<number>,
    n: number,
    opts?: { cache?: boolean; temperature?: number; seed?: number; topK?: number; topP?: number },
  ): AttnGenerated;
  readonly step: number;
  readonly config: Record<string, unknown>;
  delete(): void;
}
/** lib.names: the names the config's string fields take, from the cores' tables (frozen arrays;
 *  tests/web/core-names.test.ts checks train/config.ts's literal lists against them). */
export interface AttnTrainNames {
  readonly task: readonly string[];
  readonly positional: readonly string[];
  readonly normalizer: readonly string[];
  readonly kernel: readonly string[];
}
/** tr.generate: the n new tokens; per step the min(5, V) most probable next tokens and their
 *  probabilities after topK / topP, (n, min(5, V)) row-major (greedy: softmax(logits), unfiltered). */
export interface AttnGenerated {
  tokens: Int32Array;
  topIds: Int32Array;
  topProbs: Float32Array;
}
export interface AttnTrainLib {
  createTrainer(config: Record<string, unknown>): AttnTrainer;
  readonly names: AttnTrainNames;
  /** textScores()' roles and threshold, from the core (frozen). */
  readonly headRoles: AttnHeadRoles;
  /** The default working-memory cap, bytes. */
  readonly limits: { memoryCap: number };
  /** The error class every check throws (`field`, `code`). */
  AttnError: new (field: string, message: string, code?: string) => Error & { field: string; code: string };
  /** One draw of generate's sampler on given logits with a given uniform u in [0, 1). */
  sampleToken(
    logits: Float32Array | readonly number[],
    opts: { temperature?: number; topK?: number; topP?: number },
    u: number,
  ): { token: number; topIds: number[]; topProbs: number[] };
  /** Shards per batch (fixed, whatever the Worker count). */
  readonly SHARDS: number;
  /** Bytes of the instance's WebAssembly memory. */
  heapBytes(): number;
}
export type CreateAttnTrain = (opts?: {
  locateFile?: (p: string) => string;
  wasmBinary?: ArrayBuffer;
}) => Promise<AttnTrainLib>;
