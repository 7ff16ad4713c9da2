// Types of the parts of the training module (build/wasm/attn_train.mjs, docs/train-api.md) the
// Decode tab uses. The generated glue is untyped; this shim types its default export.
export interface AttnTrainDecoder {
  append(token: number): { logits: Float32Array; weights: Float32Array; cacheBytes: number };
  prefill(tokens: ArrayLike<number>): void;
  /** (H_kv, t, d_h) row-major keys and values of one layer so far (cached mode only). */
  cache(layer: number): { k: Float32Array; v: Float32Array };
  reset(): void;
  readonly length: number;
  delete(): void;
}

export interface AttnTrainer {
  train(n: number): { step: number; loss: Float32Array; gradNorm: Float32Array; finite: boolean };
  evaluate(): { loss: number; accuracy: number };
  sampleBatch(): { tokens: Int32Array; lossMask: Uint8Array };
  decoder(opts?: { cache?: boolean }): AttnTrainDecoder;
  generate(prompt: ArrayLike<number>, n: number, opts?: { cache?: boolean; temperature?: number; seed?: number }): { tokens: Int32Array };
  weights(): Record<string, unknown>;
  readonly config: Record<string, unknown> & { vocab: number; seqLen: number; layers: number; heads: number; kvHeads: number; dModel: number; batch: number };
  readonly step: number;
  delete(): void;
}

export interface AttnTrain {
  createTrainer(config: Record<string, unknown>): AttnTrainer;
  heapBytes(): number;
}

export type CreateAttnTrain = (opts?: { locateFile?: (path: string) => string; wasmBinary?: ArrayBuffer }) => Promise<AttnTrain>;
