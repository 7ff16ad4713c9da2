// Messages between the page and the compute Worker. Plain data; typed arrays are transferred.
import type { State } from '../app/state';

export interface ComputeRequest {
  kind: 'compute';
  id: number;
  state: State;
}
export interface StudyRequest {
  kind: 'study';
  id: number;
}
export type WorkerRequest = ComputeRequest | StudyRequest;

export interface AttentionResult {
  tokens: string[];
  t: number;
  heads: number;
  kvHeads: number;
  dModel: number;
  dk: number;
  dv: number;
  scale: number;
  /** (H, T, T) */
  weights: Float32Array;
  /** (H, T, T) scaled scores before the mask, or null. */
  scores: Float32Array | null;
  /** (H, T) nats */
  entropy: Float32Array;
  /** (H, T, d_v) */
  headOutputs: Float32Array;
  /** (T, H*d_v) */
  merged: Float32Array;
  /** (T, d_model) */
  output: Float32Array;
  /** Milliseconds inside the worker (example + attention). */
  computeMs: number;
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
  | { kind: 'compute' | 'study'; id: number; ok: false; error: { message: string; field: string | null; fatal: boolean } };
