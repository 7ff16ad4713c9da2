// Messages between the page and the compute Worker. Plain data; typed arrays are transferred.
import type { ModelSlice as State } from './state';
import type { CoreCheck } from '../wasm/attn-core';
import type { MemoryParams, MemoryTable } from '../measure/model';
import type { CoreBuildInfo } from '../wasm/core-build';

export interface ComputeRequest {
  kind: 'compute';
  id: number;
  state: State;
}
export interface StudyRequest {
  kind: 'study';
  id: number;
}
/** The Check for a state too large to check with every computation. */
export interface CheckRequest {
  kind: 'check';
  id: number;
  state: State;
}
/** The core's memory figures for the Timing lab (its view has no core of its own). */
export interface MemoryRequest {
  kind: 'memory';
  id: number;
  params: MemoryParams;
}
/** Which build of the core the Worker runs (relaxed SIMD or SIMD128). */
export interface AboutRequest {
  kind: 'about';
  id: number;
}
/** A computed result's arrays, transferred back once the page has drawn a newer one: the Worker
 *  copies the next results into them (no answer). */
export interface RecycleRequest {
  kind: 'recycle';
  id: number;
  arrays: Float32Array[];
}
export type WorkerRequest =
  ComputeRequest | StudyRequest | CheckRequest | MemoryRequest | AboutRequest | RecycleRequest;

/** What the core says about one state: float32 SIMD vs float64 scalar, tiled vs naive. */
export interface CheckResult extends CoreCheck {
  /** Milliseconds the check took in the worker. */
  ms: number;
  t: number;
  heads: number;
  dk: number;
}

export interface AttentionResult {
  /** The query tokens (T_q = t rows). */
  tokens: string[];
  t: number;
  /** T_k: the key/value positions (columns); t in self-attention. */
  tk: number;
  /** The key/value tokens (tk of them): another sentence in cross-attention, else tokens. */
  keyTokens: string[];
  /** Set when the keys and values come from a second sentence (cross-attention). */
  cross?: boolean;
  heads: number;
  kvHeads: number;
  dModel: number;
  dk: number;
  dv: number;
  scale: number;
  /** (H, T_q, T_k) */
  weights: Float32Array;
  /** (H, T_q, T_k) scaled scores before the mask, or null. */
  scores: Float32Array | null;
  /** (H, T) nats */
  entropy: Float32Array;
  /** (H, T) Σ_j w_ij, the core's rowSums; null where the core computed no weights (the student's
   *  own W, the trained model: only the Heads view draws those). */
  rowSums: Float32Array | null;
  /** (H, T, d_v) */
  headOutputs: Float32Array;
  /** (T, H*d_v) */
  merged: Float32Array;
  /** (T, d_model) */
  output: Float32Array;
  /** (T_q, T_k) 1 = allowed: core.allowedMask for the state's mask (the same for every head). */
  allowed: Uint8Array;
  /** Per head, rows whose weights came out NaN (the core's count). */
  nanRowsPerHead: number[];
  /** The Check, when the state is small enough to check with every computation (else null). */
  check: CheckResult | null;
  /** Milliseconds inside the worker (example + attention; the check is timed on its own). */
  computeMs: number;
  /** Set when the weights are not this page's example (e.g. "Trained model, layer 1"): titles say so. */
  source?: string;
  /** Set when the result comes from the student's own arrays (state.arrays). */
  arrays?: ArraysInfo;
}

/** What the page found about the student's arrays, and the comparison with its own W. */
export interface ArraysInfo {
  mode: 'weights' | 'qkv' | 'projections';
  /** Plain-language findings (rows sum to 1, causal shape, NaN rows, warnings). */
  findings: string[];
  /** The page's tokens did not match T: the heatmaps are labelled by position. */
  fromPositions: boolean;
  /** Weights mode, when the page's example has the same T: the student's W against it. */
  compare: {
    /** The page's W, (H, T, T) for the student's H heads. */
    reference: Float32Array;
    /** Student's − page's, entry by entry (NaN where either is NaN). */
    diff: Float32Array;
    maxAbs: number;
    /** Where the largest |Δ| is (indices into the student's shape). */
    at: number[];
    tolerance: number;
    matches: boolean;
    nanMismatches: number;
    /** Heads of the page's example (a one-head W is compared with its head 1). */
    refHeads: number;
  } | null;
  /** Why there is no comparison (weights mode). */
  compareNote: string | null;
  /** The rounding step the arrays were printed with (0: exact). */
  printStep: number;
  /** Why rows of the result are NaN, in the student's terms (the cell, the rows, the mask's
   *  orientation) and where to act; null when no row is NaN. The NaN banner says it. */
  nanCause: string | null;
  /** The one warning the summary line repeats (e.g. an inverted mask), or null. */
  headline: string | null;
}

export interface StudyResult {
  dk: number[];
  scaled: number[];
  unscaled: number[];
  ceiling: number;
}

export type WorkerResponse =
  | { kind: 'compute'; id: number; ok: true; result: AttentionResult }
  | { kind: 'study'; id: number; ok: true; study: StudyResult }
  | { kind: 'check'; id: number; ok: true; check: CheckResult }
  | { kind: 'memory'; id: number; ok: true; memory: MemoryTable }
  | { kind: 'about'; id: number; ok: true; about: CoreBuildInfo }
  | {
      kind: WorkerRequest['kind'];
      id: number;
      ok: false;
      error: { message: string; field: string | null; fatal: boolean };
    };
